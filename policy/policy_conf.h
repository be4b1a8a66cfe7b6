/*
 * The `policies:` section (policy/policy_conf.c; interface.md "Policy", docs/config.md):
 * named policies of allow and deny entries plus the DoH/DoT/QUIC/ECH/private-range
 * switches, as loaded; policy_set_build() (policy/policy.h) compiles them. Also the
 * normalisation of domain names and CIDRs that the matcher relies on.
 */
#ifndef SANDGATE_POLICY_POLICY_CONF_H
#define SANDGATE_POLICY_POLICY_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/addr.h"

enum sg_rule_kind { SG_RULE_DOMAIN, SG_RULE_CIDR };

/*
 * One allow or deny entry. A domain is stored normalised (lowercase ASCII, punycode, no
 * trailing dot); for "*.example.test" domain is "example.test" and wildcard is true,
 * meaning any name strictly below it, at any depth, but not the apex itself.
 */
struct sg_rule {
	enum sg_rule_kind kind;
	char *domain;           /* SG_RULE_DOMAIN */
	bool wildcard;          /* SG_RULE_DOMAIN */
	struct sg_addr net;     /* SG_RULE_CIDR: host bits are zero */
	uint8_t prefix;         /* SG_RULE_CIDR: 0..32 or 0..128 */
	uint16_t *ports;        /* sorted, unique; NULL with n_ports 0 means every port */
	size_t n_ports;
	unsigned line;          /* where it was written, for "rule" in events */
};

enum sg_dns_answer { SG_DNS_REFUSED, SG_DNS_NXDOMAIN };
enum sg_block_allow { SG_BLOCK, SG_ALLOW };                 /* doh, dot, ech, private_ranges */
enum sg_quic { SG_QUIC_BLOCK, SG_QUIC_ALLOW, SG_QUIC_SNI };
enum sg_verbosity { SG_VERB_MINIMAL, SG_VERB_SUMMARY, SG_VERB_FULL };
enum sg_unapproved { SG_UNAPPROVED_FLAG, SG_UNAPPROVED_BLOCK };
enum sg_policy_mode { SG_MODE_ENFORCE, SG_MODE_REPORT };   /* report: verdict would_block */

struct sg_policy {
	char *name;
	unsigned line;                /* 0 for the embedded default */
	struct sg_rule *allow;
	size_t n_allow;
	struct sg_rule *deny;         /* a deny always beats an allow */
	size_t n_deny;
	enum sg_policy_mode mode;
	enum sg_dns_answer dns_blocked_answer;
	enum sg_block_allow doh;
	enum sg_block_allow dot;
	enum sg_quic quic;
	enum sg_block_allow ech;
	enum sg_block_allow private_ranges;
	enum sg_verbosity verbosity;
	char **approved_sources;      /* package index URLs, as written */
	size_t n_approved_sources;
	enum sg_unapproved unapproved;
	bool terminate_on_violation;  /* a policy.violation burst terminates the session */
};

struct cfg_ctx;
struct cy_node;

/*
 * Reads the `policies:` mapping v: the file's policies replace (*pv)[0..*pn), and
 * "default" is re-added when the file has none. 0, -EINVAL (errors reported), -ENOMEM.
 */
int cfg_policies(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_policy **pv,
		 size_t *pn);
/* Appends the embedded "default" policy (allow nothing, every block on). 0 or -ENOMEM. */
int cfg_policy_embedded_default(struct sg_policy **pv, size_t *pn);
/* Frees what p owns. Accepts NULL. */
void cfg_policy_free(struct sg_policy *p);
/* The policy called name in v[0..n), or NULL. name NULL means "default". */
const struct sg_policy *cfg_policy_find(const struct sg_policy *v, size_t n, const char *name);

/*
 * Normalises one policy domain: lowercase ASCII, one trailing dot stripped, IDNA 2008
 * (UTS #46 non-transitional) to punycode, then checked (labels 1..63 bytes of letters,
 * digits, '-' and '_', not starting or ending with '-', name <= 253 bytes, not an IP
 * literal). With allow_wildcard a leading "*." is accepted: it is removed from *out and
 * *wildcard set. Returns 0 with *out heap-allocated, -EINVAL with *why set to a static
 * reason, or -ENOMEM.
 */
int config_domain_normalize(const char *in, bool allow_wildcard, char **out,
			    bool *wildcard, const char **why);

/*
 * Checks a lowercase ASCII domain name s[0..len) (no trailing dot, no wildcard): labels
 * 1..63 bytes of letters, digits, '-' and '_', not starting or ending with '-', name
 * 1..253 bytes, not an IPv4 literal. Returns NULL when valid, else a static reason.
 * Shared by config_domain_normalize() and policy_name_normalize() (wire names).
 */
const char *config_domain_check(const char *s, size_t len);

/*
 * Parses "ADDR/PREFIX" (IPv4 or IPv6; a bare address means a single host). Host bits
 * must be zero. Returns 0 or -EINVAL with *why set to a static reason.
 */
int config_parse_cidr(const char *s, struct sg_addr *net, uint8_t *prefix, const char **why);

#endif
