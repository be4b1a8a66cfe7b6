/*
 * DNS queries seen going out and not answered yet, so the answer can be paired with its
 * query (latency, and the query's uid) and a query that never gets an answer is still
 * logged. Keyed by transport, client and server address/port and the DNS id. Pure and
 * single-threaded: the gateway holds its lock around every call.
 */
#ifndef SANDGATE_GATEWAY_DNSPEND_H
#define SANDGATE_GATEWAY_DNSPEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <time.h>

#include "dns/dns.h"

struct dnspend_key {
	int family;
	bool tcp;
	uint8_t client[16], server[16];
	uint16_t cport, sport;
	uint16_t dns_id;
};

struct dnspend_entry {
	struct dnspend_key key;
	char sid[65];                    /* session id, "" when unknown */
	char qname[DNS_NAME_PRES_MAX];
	char qname_raw[DNS_NAME_PRES_MAX];   /* as sent, case preserved; "" unknown */
	uint16_t qtype;
	int64_t uid;                     /* -1 unknown */
	int64_t pid;                     /* -1 unknown */
	int64_t sent_ms;                 /* monotonic */
	struct timespec sent_wall;
	/* The policy's word on the query (static strings; verdict NULL: "allowed"). */
	const char *verdict, *reason, *mode;
	char rule[96];
	char rcode[12];                  /* a synthesised answer's rcode, "" none */
	uint32_t q_bytes;                /* the query's packet (IP length) */
};

struct dnspend;

/* An empty table of at most cap entries. 0, -EINVAL (cap 0), -ENOMEM. */
int dnspend_new(size_t cap, struct dnspend **out);
/* Frees p; accepts NULL. */
void dnspend_free(struct dnspend *p);
/*
 * Records a query. A retransmission (same key) keeps the first entry and returns
 * -EEXIST. 0, -EEXIST, -ENOSPC (full), -ENOMEM.
 */
int dnspend_add(struct dnspend *p, const struct dnspend_entry *e);
/* Takes out the query key answers, into *out. 0 or -ENOENT. */
int dnspend_take(struct dnspend *p, const struct dnspend_key *key,
		 struct dnspend_entry *out);
/* Takes out one query sent at or before cutoff_ms into *out. 0 or -ENOENT (none left). */
int dnspend_pop_expired(struct dnspend *p, int64_t cutoff_ms, struct dnspend_entry *out);
/* Queries held. */
size_t dnspend_count(const struct dnspend *p);

#endif
