/*
 * Egress policy: what a session may reach, decided from names and addresses alone.
 * Pure code (no sockets, no kernel, no clock): the gateway feeds it what the packets
 * said and turns its answer into a verdict, a DNS reply and kernel set elements.
 *
 * A policy_set is compiled once from the loaded policies (policy/policy_conf.h) plus the DoH
 * endpoint list (data/doh-endpoints.txt), is immutable afterwards and so may be read by
 * every NFQUEUE worker without a lock; a reload compiles a new set and swaps the pointer
 * (the old one is released with policy_set_unref once no reader holds it).
 * Semantics, row by row: docs/policy.md.
 */
#ifndef SANDGATE_POLICY_POLICY_H
#define SANDGATE_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/errors.h"
#include "policy/policy_conf.h"

struct policy_set;   /* every compiled policy of one config, by name */
struct policy;       /* one compiled policy; lives as long as its set */
struct doh_list;     /* DoH endpoints: names and addresses */

/* ---- DoH endpoint list (policy/doh_list.c) ---- */

/*
 * Parses the DoH endpoint list file: one entry per line, a name ("dns.example") or an
 * address ("198.18.9.9", "2001:db8::9"); '#' starts a comment; blank lines ignored.
 * Errors name the file and line (appended to errs, as config_load_*). 0, -EINVAL,
 * -ENOMEM or -errno (unreadable).
 */
int doh_list_load(const char *path, struct doh_list **out, struct config_errors *errs);
int doh_list_parse(const char *name, const char *text, size_t len, struct doh_list **out,
		   struct config_errors *errs);
void doh_list_free(struct doh_list *l);
size_t doh_list_count(const struct doh_list *l);

/* ---- compiling ---- */

/*
 * Compiles every policy of v[0..n) (a config's policies). doh may be NULL (no list). The
 * set keeps its own copies: v and doh may be freed afterwards. Starts with one
 * reference. 0 or -ENOMEM.
 */
int policy_set_build(const struct sg_policy *v, size_t n, const struct doh_list *doh,
		     struct policy_set **out);
void policy_set_ref(struct policy_set *s);
void policy_set_unref(struct policy_set *s);   /* frees at zero; accepts NULL */
/* The policy called name (NULL: "default"), or NULL when the set has none of that name. */
const struct policy *policy_find(const struct policy_set *s, const char *name);
const char *policy_name(const struct policy *p);
/* The settings as configured (mode, dns_blocked_answer, doh, dot, quic, ech, ...). */
const struct sg_policy *policy_settings(const struct policy *p);

/* ---- names ---- */

#define POLICY_NAME_MAX 254

/*
 * A name as it arrived on the wire (DNS qname, TLS SNI, HTTP Host without port) made
 * comparable: ASCII lowercased, one trailing dot removed, checked like
 * config_domain_normalize() minus IDNA (wire names are already A-labels; a non-ASCII
 * byte makes the name invalid). 0 with out set, -EINVAL (not a valid name: *why static).
 */
int policy_name_normalize(const char *in, size_t len, char out[POLICY_NAME_MAX],
			  const char **why);

/* ---- decisions ---- */

enum policy_verdict {
	POLICY_ALLOW,
	POLICY_BLOCK,      /* enforce mode: the gateway blocks */
	POLICY_WOULD_BLOCK /* report-only mode: the gateway lets it through, says would_block */
};

/*
 * reason is a static string for events' `reason`, one of:
 *   allowed_domain, allowed_cidr, bound_address (allowed: the address came from an
 *   allowed answer), denied_domain, denied_cidr, not_allowed (no allow rule matched),
 *   private_range, doh_endpoint, dot, quic, ech, sni_mismatch, host_mismatch,
 *   invalid_name, canary_domain (use-application-dns.net), resolver_not_allowed.
 * rule is "policy NAME line N" of the deciding rule, or "" when none decided.
 */
struct policy_decision {
	enum policy_verdict verdict;
	const char *reason;
	char rule[96];
	const char *range;   /* private_range: the class (loopback, rfc1918, link_local,
				cgnat, multicast, ipv4_mapped, nat64, 6to4, teredo, ...) */
};

/* A DNS query for name (normalised). Decides allow or block (with the configured answer). */
void policy_decide_query(const struct policy *p, const char *name,
			 struct policy_decision *d);

/*
 * What the gateway knows about a new flow when it decides. Fields it does not know are
 * NULL / false. bound_names: the names this session resolved (allowed answers) that
 * are bound to dst right now; n_bound may be 0.
 */
struct policy_flow {
	int family;                 /* AF_INET, AF_INET6 */
	const uint8_t *dst;         /* 4 or 16 bytes */
	uint16_t dport;
	uint8_t l4;                 /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP(V6) */
	bool quic;                  /* UDP/443 with a QUIC long header */
	const char *sni;            /* normalised, from TLS or QUIC ClientHello */
	bool ech;                   /* ClientHello carried encrypted_client_hello */
	const char *http_host;      /* normalised, from HTTP/1 Host or h2c :authority */
	const char *const *bound_names;
	size_t n_bound;
};

/*
 * The verdict on a new flow. Order (docs/policy.md): deny rules (CIDR, then SNI/Host
 * name) beat everything; DoT (853) and DoH endpoints; QUIC; ECH; private ranges unless a
 * CIDR allows the address explicitly; then allow by CIDR, or by a bound address whose
 * SNI/Host (when present) is allowed and bound to it; else not_allowed.
 */
void policy_decide_flow(const struct policy *p, const struct policy_flow *f,
			struct policy_decision *d);

/*
 * Only the address part (CIDR allow/deny rules, private ranges, DoH addresses, port 853):
 * what the gateway can decide before it has seen any payload. POLICY_ALLOW here means
 * "an allow CIDR covers it". Used to build kernel set elements and for ICMP.
 */
void policy_decide_addr(const struct policy *p, int family, const uint8_t *dst,
			uint16_t dport, uint8_t l4, struct policy_decision *d);

/*
 * The ports on which flows to the addresses of an allowed answer for name may open in
 * the kernel (their first bytes are still decided by policy_decide_flow): the ports of
 * the allow rules that match name (the most specific ones), less those a deny rule for
 * name lists, at most max into ports (*n). Returns 1 when some rule allows every port
 * and no deny rule for name lists a port (the ports listed too may still be
 * returned), 0 when only the listed ports (maybe none), -ENOENT
 * when the name is not allowed (denied, DoH endpoint, canary, no rule).
 */
int policy_bind_ports(const struct policy *p, const char *name, uint16_t *ports,
		      size_t max, size_t *n);

/* ---- private ranges (policy/ranges.c) ---- */

/*
 * The SSRF class of an address, or NULL when it is public: loopback, rfc1918,
 * link_local (169.254/16, fe80::/10; cloud metadata included), cgnat (100.64/10),
 * multicast, unspecified, broadcast, reserved, unique_local (fc00::/7), and for IPv6
 * forms that embed IPv4 (ipv4_mapped, ipv4_compat, nat64 64:ff9b::/96 and
 * 64:ff9b:1::/48, 6to4 2002::/16, teredo 2001::/32): blocked as the form itself.
 * Lab addresses (198.18.0.0/15, 2001:db8::/32) are public here, on purpose: they are
 * what tests use as "the internet" (docs/policy.md says so).
 */
const char *policy_private_class(int family, const uint8_t *addr);

/* ---- GeoIP enrichment (policy/geo.c, libmaxminddb) ---- */

struct geo_db;
struct geo_info {
	char country[8];     /* ISO 3166 code, "" unknown */
	int64_t asn;         /* -1 unknown */
	char org[128];       /* "" unknown */
};
/* Opens a MaxMind-format database (GeoLite2-Country/ASN/City or a merged one). 0 or -errno. */
int geo_open(const char *path, struct geo_db **out);
void geo_close(struct geo_db *g);
/* 0 with *out filled (fields unknown stay empty/-1), -ENOENT not in the database. Thread-safe. */
int geo_lookup(const struct geo_db *g, int family, const uint8_t *addr, struct geo_info *out);

#endif
