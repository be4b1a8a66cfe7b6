/*
 * The flows the gateway has seen, keyed by their original-direction tuple (the kernel
 * here cannot attach conntrack data to queued packets: CONFIG_NETFILTER_NETLINK_GLUE_CT
 * is unset, so NFQA_CFG_F_CONNTRACK is refused; ctnetlink reports the same tuple when
 * the flow ends): who opened it, what it was
 * talking to, the names read out of its first bytes, and the state of that reading.
 * Pure and single-threaded: the gateway holds its lock around every call and every
 * access to an entry.
 */
#ifndef SANDGATE_GATEWAY_FLOWTAB_H
#define SANDGATE_GATEWAY_FLOWTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gateway/dnsbind.h"
#include "gateway/parse.h"

struct dns_tcp;
struct http_follow;

/* A flow's original direction: family, protocol, addresses and ports (0 without). */
struct flow_key {
	uint8_t family, proto;
	uint16_t sport, dport;        /* host order */
	uint8_t src[16], dst[16];     /* network order, zero-padded for AF_INET */
};

struct flow {
	struct flow_key key;
	uint64_t flow_id;               /* the id events carry */
	uint32_t mark_id;               /* session mark id */
	char sid[65];                   /* session id at the flow's start */
	int family;
	uint8_t proto;
	uint8_t src[16], dst[16];       /* original direction */
	uint16_t sport, dport;
	bool has_ports;
	int64_t start_ms;               /* monotonic */
	struct timespec start_wall;
	int64_t uid;                    /* -1 unknown */
	bool decided;
	uint32_t verdict;               /* NFT_MARK_ALLOW / NFT_MARK_DENY once decided */
	const char *vstr;               /* static: allowed, blocked, would_block */
	const char *reason;             /* static: the decision's reason */
	const char *mode;               /* static: enforce, report, observe */
	const char *range;              /* static: private_range class, NULL */
	char rule[96];                  /* "policy NAME line N", "" none */
	unsigned npkts;                 /* packets of it queued */
	bool is_dns;                    /* port 53: every packet queued, DNS parsed */
	/* A UDP exchange with a configured resolver: when allowed, its record is its
	 * net.dns lines, each carrying the flow and its query's and answer's bytes (one
	 * record per fact, no net.connect); its net.flow only when conntrack counted more
	 * than those lines did (an unanswered query, a retransmission). */
	bool dns_resolver;
	uint64_t dns_bytes[2], dns_pkts[2];   /* on record in net.dns: [0] out, [1] in */
	/* The client's first stream bytes, for the ClientHello / request head. */
	uint8_t *buf;
	size_t len;
	uint32_t nseq[2];               /* next expected TCP seq, [0] original, [1] reply */
	bool nseq_set[2];
	struct dns_tcp *dtcp[2];        /* DNS over TCP reassembly per direction */
	char domain[DNSBIND_NAME_MAX];  /* bound name of dst at the start, "" none */
	char sni[TLS_SNI_MAX];          /* "" none */
	char http_host[HTTP_HOST_MAX];  /* "" none */
	char alpn[TLS_ALPN_LEN_MAX];    /* first ALPN id, "" none */
	bool ech;
	const char *parse;              /* static: result of the metadata parse */
	bool late;                      /* decided at its end (gateway/ct_flow.c): nothing of
	                                 * it was queued that a decision needs */
	int64_t last_report_ms;         /* monotonic: last net.flow interim report */
	unsigned gen;                   /* conntrack dump generation it was last seen in */
	/* conntrack's view of it at the last dump that listed it: what net.flow says when
	 * its end is missed (no destroy event read) */
	uint32_t ct_id, ct_mark;
	uint64_t ct_bytes[2], ct_pkts[2];   /* [0] original (out), [1] reply (in) */
	bool ct_acct;                       /* conntrack accounted it (counts valid) */
	int64_t ct_seen_ms;                 /* monotonic: that dump */
	/* The first flight held until read (gateway/flight.c): the client stream's origin
	 * (the SYN's seq + 1; a flow whose SYN the worker did not see has none and is never
	 * read on a guess), what of it was let out, in order, and where the flight ends. */
	uint32_t base;
	bool base_set;
	bool committed;                 /* the verdict went to the ct mark */
	size_t pass_hi;                 /* stream bytes [0, pass_hi) let out */
	size_t appr_end;                /* stream bytes [0, appr_end) may leave (read, allowed) */
	size_t rd;                      /* stream bytes [0, rd) taken by the readers */
	size_t buf_off;                 /* stream offset of buf[0] */
	size_t flight_end;              /* end of the first flight once read, 0 before */
	bool rerecord;                  /* a later request head changed the record */
	unsigned requests;              /* HTTP/1 request heads read */
	struct http_follow *hf;         /* cleartext HTTP/1: every request head read */
};

struct flowtab;

/* An empty table of at most cap flows. 0, -EINVAL (cap 0), -ENOMEM. */
int flowtab_new(size_t cap, struct flowtab **out);
/* Frees t and every flow; accepts NULL. */
void flowtab_free(struct flowtab *t);
/* k with source and destination swapped (the reply direction's tuple); out may be k. */
void flow_key_reverse(const struct flow_key *k, struct flow_key *out);
/* The flow whose original tuple is k, or NULL. */
struct flow *flowtab_find(struct flowtab *t, const struct flow_key *k);
/*
 * A new zeroed flow with key k (uid -1), owned by the table. 0 and *out, -EEXIST (an
 * entry has it: *out is that one), -ENOSPC (full), -ENOMEM.
 */
int flowtab_add(struct flowtab *t, const struct flow_key *k, struct flow **out);
/* Removes and frees the flow with key k; 0 or -ENOENT. */
int flowtab_del(struct flowtab *t, const struct flow_key *k);
/* Flows held. */
size_t flowtab_count(const struct flowtab *t);
/* Calls fn for each flow; when fn returns true the flow is removed and freed. */
void flowtab_sweep(struct flowtab *t, bool (*fn)(struct flow *f, void *ctx), void *ctx);
/*
 * Appends p[0..n) to f's stream buffer, at most max bytes in all (the rest is cut).
 * 0 or -ENOMEM.
 */
int flow_buf_append(struct flow *f, const uint8_t *p, size_t n, size_t max);

#endif
