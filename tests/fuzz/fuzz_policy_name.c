/*
 * libFuzzer target for the names a sandbox controls (DNS qname, TLS SNI, HTTP Host):
 * policy_name_normalize(), then policy_decide_query() and policy_decide_flow() with the
 * result against a small compiled policy (exact, wildcard, deny, ports, DoH list).
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
	"    deny:\n"
	"      - domain: bad.wild.test\n"
	"      - domain: \"*.deny.wild.test\"\n";

static const char doh[] = "dns.google\ndoh.lab.test\n198.18.99.1\n";

static struct sg_config *config;   /* kept for the reference matcher */

static const struct policy *policy(void)
{
	static struct policy_set *set;
	struct doh_list *l = NULL;

	if (set)
		return policy_find(set, NULL);
	if (config_load_buffer("fuzz.yaml", yaml, strlen(yaml), &config, NULL) ||
	    doh_list_parse("doh", doh, strlen(doh), &l, NULL) ||
	    policy_set_build(config, l, &set))
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct policy *p = policy();
	char name[POLICY_NAME_MAX];
	const char *why, *bound[1];
	uint8_t dst[4] = { 198, 18, 5, 1 };
	struct policy_decision d;
	struct policy_flow f = { .family = AF_INET, .dst = dst, .l4 = IPPROTO_TCP };

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
