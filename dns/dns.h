/*
 * DNS part: pure parsers and builders for the bytes a sandbox sends and receives on
 * port 53, plus the name rules the egress policy uses. Nothing here does I/O, logs or
 * keeps global state; every function is safe to call from several workers at once.
 *
 * Every input is attacker-controlled (the sandbox writes queries and can spoof
 * answers), so the work is bounded: at most DNS_MAX_ANSWERS answers, DNS_MAX_ADDRS
 * addresses and DNS_MAX_CNAMES chain links are kept, the rest is counted as dropped.
 * Semantics and limits: docs/parsers.md.
 */
#ifndef SANDGATE_DNS_DNS_H
#define SANDGATE_DNS_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A wire name is at most 255 bytes; its presentation form with \DDD escapes for odd
 * bytes is at most 4 * 255, so this holds every name without truncation. */
#define DNS_NAME_PRES_MAX 1024
/* A normalised name (LDH, punycode) is at most 253 characters. */
#define DNS_NAME_MAX 254
#define DNS_TYPE_STR_MAX 16
/* Longer answer data (big TXT, HTTPS with many keys) is cut; see data_truncated. */
#define DNS_RDATA_STR_MAX 256
#define DNS_MAX_ANSWERS 32
#define DNS_MAX_ADDRS 32
#define DNS_MAX_CNAMES 8
#define DNS_MAX_QUESTIONS 4
/* Upper bound of what the TCP reassembler buffers before it gives up. */
#define DNS_TCP_BUF_MAX (4 * 65537)

struct dns_answer {
	uint16_t type;
	char type_str[DNS_TYPE_STR_MAX];   /* "A", "AAAA", "HTTPS", "TYPE65280" */
	uint32_t ttl;
	char data[DNS_RDATA_STR_MAX];      /* rdata in presentation form */
	bool data_truncated;
};

struct dns_addr {
	int family;                        /* AF_INET or AF_INET6 */
	uint8_t addr[16];                  /* network order; 4 bytes used for AF_INET */
	uint32_t ttl;
};

struct dns_msg {
	uint16_t id;
	bool qr;                           /* true: response */
	uint8_t opcode;
	uint8_t rcode;                     /* header rcode (low 4 bits) */
	bool aa, tc, rd, ra;
	uint16_t qdcount, ancount, nscount, arcount;   /* arcount excludes OPT */
	bool edns;                         /* an OPT record was present */
	uint16_t edns_udp_size;
	bool edns_do;
	/* First question: lowercase presentation form, no trailing dot ("" for root
	 * or when there is no question). Odd bytes appear as \DDD escapes. */
	char qname[DNS_NAME_PRES_MAX];
	uint16_t qtype;
	char qtype_str[DNS_TYPE_STR_MAX];
	uint16_t qclass;
	/* The first question's name as sent: case preserved (0x20 bits are a covert
	 * channel), otherwise like qname. */
	char qname_raw[DNS_NAME_PRES_MAX];
	/* Every question's name as sent (case preserved), up to DNS_MAX_QUESTIONS; a query
	 * with qdcount != 1 is refused by the gateway and logged with all of them. */
	size_t n_questions;
	char questions[DNS_MAX_QUESTIONS][DNS_NAME_PRES_MAX];
	/* Answer section in wire order, up to DNS_MAX_ANSWERS. */
	size_t n_answers;
	struct dns_answer answers[DNS_MAX_ANSWERS];
	size_t answers_dropped;
	/* CNAME chain from qname: cnames[0] is the target of qname's CNAME, and so on.
	 * Names are normalised like qname. Loops stop the walk. */
	size_t n_cnames;
	char cnames[DNS_MAX_CNAMES][DNS_NAME_PRES_MAX];
	uint32_t cname_ttl_min;            /* smallest TTL along the chain, or UINT32_MAX */
	bool cname_chain_cut;              /* longer than DNS_MAX_CNAMES or a loop */
	/* A/AAAA records owned by qname or by a name on its chain: the addresses the
	 * gateway may bind to qname. ttl is min(record TTL, chain TTL). Records owned
	 * by other names are not here (they are still in answers[]). */
	size_t n_addrs;
	struct dns_addr addrs[DNS_MAX_ADDRS];
	size_t addrs_dropped;
};

/*
 * Parses one DNS message (a UDP payload, or one message out of the TCP reassembler,
 * without its length prefix) with ldns into *out. *out is overwritten entirely.
 * Returns 0, -EBADMSG when ldns rejects the message (truncated, bad counts,
 * compression loop...), -EINVAL on NULL arguments or n == 0, -ENOMEM.
 */
int dns_parse(const uint8_t *p, size_t n, struct dns_msg *out);

/* Name of a DNS type ("A", "HTTPS", "TYPE65280") into buf. Returns buf. */
const char *dns_type_str(uint16_t type, char buf[DNS_TYPE_STR_MAX]);

/* Name of an rcode ("NOERROR", "NXDOMAIN", "REFUSED"), or NULL when unknown. */
const char *dns_rcode_str(uint8_t rcode);

/*
 * Incremental reassembler for DNS over TCP (RFC 1035 4.2.2: each message is
 * preceded by its 2-byte big-endian length). Feed stream bytes as they arrive in
 * order; take complete messages out with dns_tcp_next.
 */
struct dns_tcp;

/* Allocates an empty reassembler. Returns NULL when out of memory. */
struct dns_tcp *dns_tcp_new(void);

/* Frees r; accepts NULL. */
void dns_tcp_free(struct dns_tcp *r);

/*
 * Appends n stream bytes. Returns 0, -ENOBUFS when more than DNS_TCP_BUF_MAX bytes
 * would be buffered (the stream is abusive: drop it), -ENOMEM.
 */
int dns_tcp_feed(struct dns_tcp *r, const uint8_t *p, size_t n);

/*
 * Takes the next complete message. Returns 1 and sets *msg and *len (valid until the
 * next feed or next call), 0 when more bytes are needed (*need then tells how many
 * more at least), -EBADMSG for a zero-length message (skipped, so the next call
 * goes on with the rest).
 */
int dns_tcp_next(struct dns_tcp *r, const uint8_t **msg, size_t *len, size_t *need);

/* Bytes buffered and not yet returned as messages. */
size_t dns_tcp_pending(const struct dns_tcp *r);

/*
 * Builds the answer that refuses query q: same id, opcode, (first) question and RD, QR and
 * RA set, no records, rcode DNS_RCODE_REFUSED or DNS_RCODE_NXDOMAIN (any rcode
 * 0..15 is accepted). An EDNS query gets an OPT record back (payload 1232, DO
 * copied). Writes at most cap bytes to out and the length to *outlen.
 * A query with several questions (or none) gets the first (or none) back.
 * Returns 0, -EBADMSG when q is not a parsable query,
 * -EINVAL for bad arguments, -ENOSPC when cap is too small, -ENOMEM.
 */
int dns_synth_answer(const uint8_t *q, size_t qlen, uint8_t rcode,
		     uint8_t *out, size_t cap, size_t *outlen);

/* As dns_synth_answer, with the 2-byte length prefix of DNS over TCP in front. */
int dns_synth_answer_tcp(const uint8_t *q, size_t qlen, uint8_t rcode,
			 uint8_t *out, size_t cap, size_t *outlen);

#define DNS_RCODE_NOERROR 0
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_REFUSED 5

/*
 * Normalises a domain name for policy use: ASCII lowercase, one trailing dot
 * removed, non-ASCII labels (UTF-8) converted to punycode with IDNA2008
 * non-transitional processing (libidn2), existing xn-- labels validated.
 * The result has labels of 1..63 characters from [a-z0-9-_] and is at most 253
 * characters. Returns 0, -EINVAL for an invalid name (empty, empty label, other
 * characters, bad punycode or UTF-8), -ENAMETOOLONG when the result does not fit
 * 253 characters or cap, -ENOMEM.
 */
int dns_name_normalize(const char *in, char *out, size_t cap);

/*
 * As dns_name_normalize, but also accepts a pattern "*.suffix" (the "*." is kept,
 * the suffix normalised). Any other use of '*' is -EINVAL.
 */
int dns_pattern_normalize(const char *in, char *out, size_t cap);

/*
 * Policy name match: pattern "example.test" matches exactly that name;
 * "*.example.test" matches any name below it at any depth, never the apex.
 * ASCII case-insensitive, one trailing dot on either side ignored. Both are
 * expected normalised; no IDNA is done here (it is on the hot path).
 * Returns true on match; false for NULL or empty arguments.
 */
bool dns_name_match(const char *pattern, const char *name);

#endif
