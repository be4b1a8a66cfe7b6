/*
 * libFuzzer target for the names a sandbox controls (DNS qname, TLS SNI, HTTP Host):
 * policy_name_normalize(), then policy_decide_query() and policy_decide_flow() with the
 * result against a small compiled policy (exact, wildcard, deny, ports, DoH list).
 * The first 19 bytes of an input are also read as a destination (family, address,
 * port, protocol) for policy_decide_addr(), checked against a linear scan of the CIDR
 * rules (deny, DoT, DoH, QUIC, private ranges, allow; reason and rule line).
 * Checks the invariants too: a normalised name is lowercase, at most 253 bytes, and
 * normalises to itself; every decision has a reason; and the query decision equals
 * that of a plain linear scan of the configured rules (a differential check of the
 * hashed matcher and its suffix walk).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "daemon/config.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char yaml[] =
	"policies:\n"
	"  default:\n"
	"    allow:\n"
	"      - domain: example.test\n"
	"      - domain: \"*.wild.test\"\n"
	"      - domain: \"*.a.b.c.test\"\n"
	"      - domain: web.test\n"
	"        ports: [443]\n"
	"      - cidr: 198.18.2.0/24\n"
	"      - cidr: 198.18.0.0/15\n"
	"        ports: [80, 443]\n"
	"      - cidr: 198.18.2.128/25\n"
	"        ports: [22]\n"
	"      - cidr: 10.1.0.0/16\n"
	"      - cidr: 0.0.0.0/1\n"
	"        ports: [8080]\n"
	"      - cidr: \"2001:db8::/32\"\n"
	"      - cidr: \"2001:db8:1::/48\"\n"
	"        ports: [443]\n"
	"      - cidr: \"fd00::/8\"\n"
	"      - cidr: \"::/0\"\n"
	"        ports: [25]\n"
	"      - cidr: \"2001:db8:2:3::7/128\"\n"
	"    deny:\n"
	"      - domain: bad.wild.test\n"
	"      - domain: \"*.deny.wild.test\"\n"
	"      - cidr: 198.18.2.64/26\n"
	"        ports: [443]\n"
	"      - cidr: 198.19.0.0/16\n"
	"      - cidr: \"2001:db8:1:2::/64\"\n";

static const char doh[] = "dns.google\ndoh.lab.test\n198.18.99.1\n2001:db8::53\n";

static struct sg_config *config;   /* kept for the reference matcher */

static const struct policy *policy(void)
{
	static struct policy_set *set;
	struct doh_list *l = NULL;

	if (set)
		return policy_find(set, NULL);
	if (config_load_buffer("fuzz.yaml", yaml, strlen(yaml), &config, NULL) ||
	    doh_list_parse("doh", doh, strlen(doh), &l, NULL) ||
	    policy_set_build(config->policies, config->n_policies, l, &set))
		abort();
	doh_list_free(l);
	return policy_find(set, NULL);
}

static bool ref_match(const struct sg_rule *r, const char *name)
{
	size_t n = strlen(name), d;

	if (r->kind != SG_RULE_DOMAIN)
		return false;
	d = strlen(r->domain);
	if (!r->wildcard)
		return strcmp(name, r->domain) == 0;
	return n > d + 1 && name[n - d - 1] == '.' && strcmp(name + n - d, r->domain) == 0;
}

/* docs/policy.md, "A DNS query", by linear scan. */
static const char *ref_query(const char *name)
{
	const struct sg_policy *p = config_policy(config, NULL);

	if (strcmp(name, "use-application-dns.net") == 0)
		return "canary_domain";
	for (size_t i = 0; i < p->n_deny; i++)
		if (!p->deny[i].n_ports && ref_match(&p->deny[i], name))
			return "denied_domain";
	if (strcmp(name, "dns.google") == 0 || strcmp(name, "doh.lab.test") == 0)
		return "doh_endpoint";
	for (size_t i = 0; i < p->n_allow; i++)
		if (ref_match(&p->allow[i], name))
			return "allowed_domain";
	return "not_allowed";
}

static void check_name(const char *name)
{
	char again[POLICY_NAME_MAX];
	const char *why;
	size_t len = strlen(name);

	if (len == 0 || len > 253)
		abort();
	for (size_t i = 0; i < len; i++)
		if (name[i] >= 'A' && name[i] <= 'Z')
			abort();
	if (policy_name_normalize(name, len, again, &why) || strcmp(again, name) != 0)
		abort();
}

static bool ref_covers(const struct sg_rule *r, int fam, const uint8_t *a, uint16_t port,
		       bool icmp)
{
	unsigned pl = r->prefix;

	if (r->kind != SG_RULE_CIDR || r->net.family != fam)
		return false;
	if (r->n_ports) {
		bool found = false;

		for (size_t i = 0; !icmp && i < r->n_ports; i++)
			found |= r->ports[i] == port;
		if (!found)
			return false;
	}
	if (memcmp(a, r->net.bytes, pl / 8) != 0)
		return false;
	return pl % 8 == 0 || ((a[pl / 8] ^ r->net.bytes[pl / 8]) & (0xff00u >> (pl % 8))) == 0;
}

/* Whether every address of CIDR r is of class cls (its first and last are, here). */
static bool ref_inside(const struct sg_rule *r, const char *cls)
{
	int fam = r->net.family;
	size_t alen = fam == AF_INET ? 4 : 16;
	uint8_t last[16];
	const char *c1 = policy_private_class(fam, r->net.bytes), *c2;

	memcpy(last, r->net.bytes, alen);
	for (size_t b = 0; b < alen; b++)
		if (b * 8 >= r->prefix)
			last[b] = 0xff;
		else if (b * 8 + 8 > r->prefix)
			last[b] |= (uint8_t)(0xffu >> (r->prefix % 8));
	c2 = policy_private_class(fam, last);
	return c1 && c2 && strcmp(c1, cls) == 0 && strcmp(c2, cls) == 0;
}

/* The longest covering rule of a list (file order among equals), or NULL. */
static const struct sg_rule *ref_longest(const struct sg_rule *v, size_t n, int fam,
					 const uint8_t *a, uint16_t port, bool icmp)
{
	const struct sg_rule *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (ref_covers(&v[i], fam, a, port, icmp) && (!best || v[i].prefix > best->prefix))
			best = &v[i];
	return best;
}

/* docs/policy.md, "An address alone", by linear scan: returns the reason; *line the rule's. */
static const char *ref_addr(int fam, const uint8_t *a, uint16_t port, uint8_t l4,
			    unsigned *line)
{
	const struct sg_policy *p = config_policy(config, NULL);
	bool icmp = l4 != IPPROTO_TCP && l4 != IPPROTO_UDP;
	const struct sg_rule *deny = ref_longest(p->deny, p->n_deny, fam, a, port, icmp);
	const struct sg_rule *allow = ref_longest(p->allow, p->n_allow, fam, a, port, icmp);
	static const uint8_t doh4[4] = { 198, 18, 99, 1 };
	static const uint8_t doh6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x53 };
	const char *cls = policy_private_class(fam, a);

	*line = 0;
	if (deny) {
		*line = deny->line;
		return "denied_cidr";
	}
	if (!icmp && port == 853)
		return "dot";
	if (memcmp(a, fam == AF_INET ? doh4 : doh6, fam == AF_INET ? 4 : 16) == 0)
		return "doh_endpoint";
	if (l4 == IPPROTO_UDP && port == 443)
		return "quic";
	if (cls) {
		/* Opened only by an allow rule inside the class: compare with the table's. */
		const struct sg_rule *in = NULL;

		for (size_t i = 0; i < p->n_allow; i++)
			if (ref_covers(&p->allow[i], fam, a, port, icmp) &&
			    ref_inside(&p->allow[i], cls) &&
			    (!in || p->allow[i].prefix > in->prefix))
				in = &p->allow[i];
		if (!in || in != allow)
			return "private_range";
	}
	if (allow) {
		*line = allow->line;
		return "allowed_cidr";
	}
	return "not_allowed";
}

static void check_addr(const uint8_t *data, size_t size)
{
	int fam = data[0] & 1 ? AF_INET6 : AF_INET;
	uint8_t l4 = data[0] & 2 ? IPPROTO_UDP : data[0] & 4 ? IPPROTO_ICMP : IPPROTO_TCP;
	uint16_t port = (uint16_t)(data[17] << 8 | data[18]);
	struct policy_decision d;
	const char *want;
	unsigned line;
	char rule[96] = "";

	(void)size;
	if (l4 == IPPROTO_ICMP)
		port = 0;
	policy_decide_addr(policy(), fam, data + 1, port, l4, &d);
	want = ref_addr(fam, data + 1, port, l4, &line);
	if (line)
		snprintf(rule, sizeof(rule), "policy default line %u", line);
	if (strcmp(d.reason, want) != 0 || strcmp(d.rule, rule) != 0) {
		fprintf(stderr, "addr: %s '%s', reference %s '%s'\n", d.reason, d.rule, want,
			rule);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct policy *p = policy();
	char name[POLICY_NAME_MAX];
	const char *why, *bound[1];
	uint8_t dst[4] = { 198, 18, 5, 1 };
	struct policy_decision d;
	struct policy_flow f = { .family = AF_INET, .dst = dst, .l4 = IPPROTO_TCP };

	if (size >= 19)
		check_addr(data, size);
	if (policy_name_normalize((const char *)data, size, name, &why)) {
		if (!why || name[0])
			abort();
		return 0;
	}
	check_name(name);
	policy_decide_query(p, name, &d);
	if (!d.reason || strcmp(d.reason, ref_query(name)) != 0) {
		fprintf(stderr, "%s: %s, reference %s\n", name, d.reason, ref_query(name));
		abort();
	}
	bound[0] = name;
	f.dport = size & 1 ? 443 : 80;
	f.sni = size & 2 ? name : NULL;
	f.http_host = size & 4 ? name : NULL;
	f.bound_names = bound;
	f.n_bound = size & 8 ? 1 : 0;
	if (size & 16)
		dst[2] = 2;
	policy_decide_flow(p, &f, &d);
	if (!d.reason || (d.verdict == POLICY_ALLOW && d.rule[0] == '\0'))
		abort();
	return 0;
}
