/*
 * The policy semantics, one test per row of docs/policy.md's table (the row id is in
 * the test's name), on policies loaded with config_load_buffer() from the YAML below and
 * compiled with a DoH list parsed from text. Also: policy lookup by name and the copy of
 * the settings. The DoH list, normalisation and reference counting: test_policy_api.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/config.h"
#include "policy/policy.h"

static const char yaml[] =
	"policies:\n"
	"  default:\n"
	"    allow:\n"
	"      - domain: example.test           # R_example\n"
	"      - domain: \"*.wild.test\"          # R_wild\n"
	"      - domain: shared-a.test          # R_shared_a\n"
	"      - domain: shared-b.test          # R_shared_b\n"
	"      - domain: \"Bücher.example\"       # R_idn\n"
	"      - domain: \"*.evil.test\"          # R_evil\n"
	"      - domain: good.deny.test         # R_good_deny\n"
	"      - domain: web.test               # R_web\n"
	"        ports: [443]\n"
	"      - domain: port80.test            # R_port80_allow\n"
	"      - domain: dns.google             # R_dns_google\n"
	"      - domain: \"*.net\"                # R_net\n"
	"      - domain: rebind.test            # R_rebind\n"
	"      - cidr: 198.18.2.0/24            # R_c2\n"
	"      - cidr: 198.18.3.0/24            # R_c3\n"
	"        ports: [443, 8443]\n"
	"      - cidr: 198.18.3.7/32            # R_c3_7\n"
	"        ports: [443]\n"
	"      - cidr: 2001:db8:2::/48          # R_c6\n"
	"      - cidr: 10.1.0.0/16              # R_private_open\n"
	"      - cidr: 198.18.9.0/24            # R_c9\n"
	"      - cidr: 198.18.4.0/24            # R_c4\n"
	"    deny:\n"
	"      - domain: bad.evil.test          # D_bad\n"
	"      - domain: \"*.deny.test\"          # D_deny\n"
	"      - domain: port80.test            # D_port80\n"
	"        ports: [80]\n"
	"      - domain: denied-sni.test        # D_sni\n"
	"      - cidr: 198.18.2.128/25          # D_c2\n"
	"      - cidr: 2001:db8:2:bad::/64      # D_c6\n"
	"      - cidr: 198.18.4.0/24            # D_c4_25\n"
	"        ports: [25]\n"
	"  catchall:\n"
	"    allow:\n"
	"      - cidr: 0.0.0.0/0                # R_all4\n"
	"      - cidr: \"::/0\"                   # R_all6\n"
	"  open:\n"
	"    doh: allow\n"
	"    dot: allow\n"
	"    quic: allow\n"
	"    ech: allow\n"
	"    private_ranges: allow\n"
	"    allow:\n"
	"      - domain: example.test           # O_example\n"
	"      - domain: dns.google             # O_dns_google\n"
	"      - cidr: 198.18.2.0/24            # O_c2\n"
	"  quicsni:\n"
	"    quic: sni\n"
	"    allow:\n"
	"      - domain: example.test           # Q_example\n"
	"      - domain: shared-a.test          # Q_shared_a\n"
	"  mixed:\n"
	"    allow:\n"
	"      - cidr: 198.18.0.0/15            # X_short4\n"
	"      - cidr: \"2001:d00::/24\"         # X_short6\n"
	"    deny:\n"
	"      - cidr: 198.18.77.0/24           # X_deny4\n"
	"      - cidr: \"2001:db8:4::/48\"       # X_deny6\n"
	"  report:\n"
	"    mode: report\n"
	"    dns_blocked_answer: nxdomain\n"
	"    allow:\n"
	"      - domain: example.test           # M_example\n"
	"    deny:\n"
	"      - cidr: 198.18.2.0/24            # M_deny\n";

static const char doh_text[] =
	"# DoH endpoints for the tests (lab addresses only)\n"
	"dns.google\n"
	"  Doh.Lab.Test.   # a comment after an entry\n"
	"\n"
	"198.18.99.1\n"
	"198.18.9.9\n"
	"2001:db8:99::1\n";

static struct policy_set *set;
static const struct policy *pd, *pcatch, *popn, *pquic, *preport, *pmixed;

static int setup(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	struct doh_list *doh = NULL;

	(void)state;
	if (config_load_buffer("t.yaml", yaml, strlen(yaml), &c, &e) ||
	    doh_list_parse("doh.txt", doh_text, strlen(doh_text), &doh, &e)) {
		config_errors_print(&e, stderr);
		return -1;
	}
	if (policy_set_build(c->policies, c->n_policies, doh, &set))
		return -1;
	/* The set keeps its own copies: free the inputs before any decision. */
	config_free(c);
	doh_list_free(doh);
	config_errors_free(&e);
	pd = policy_find(set, NULL);
	pcatch = policy_find(set, "catchall");
	popn = policy_find(set, "open");
	pquic = policy_find(set, "quicsni");
	preport = policy_find(set, "report");
	pmixed = policy_find(set, "mixed");
	return pd && pcatch && popn && pquic && preport && pmixed ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	policy_set_unref(set);
	return 0;
}

/* ---- helpers ---------------------------------------------------------------------- */

/* "policy NAME line N" for the YAML line holding marker ("" for marker NULL). */
static void rule_of(const char *policy, const char *marker, char *buf, size_t len)
{
	const char *at = marker ? strstr(yaml, marker) : NULL;
	unsigned line = 1;

	buf[0] = '\0';
	if (!at)
		return;
	for (const char *s = yaml; s < at; s++)
		line += *s == '\n';
	snprintf(buf, len, "policy %s line %u", policy, line);
}

static void expect(const struct policy *p, const struct policy_decision *d,
		   enum policy_verdict v, const char *reason, const char *marker)
{
	char rule[96];

	rule_of(policy_name(p), marker, rule, sizeof(rule));
	if (d->verdict != v || strcmp(d->reason, reason) != 0 || strcmp(d->rule, rule) != 0)
		print_error("got verdict %d reason %s rule '%s'; want %d %s '%s'\n",
			    d->verdict, d->reason, d->rule, v, reason, rule);
	assert_int_equal(d->verdict, v);
	assert_string_equal(d->reason, reason);
	assert_string_equal(d->rule, rule);
}

static void query(const struct policy *p, const char *wire, enum policy_verdict v,
		  const char *reason, const char *marker)
{
	char name[POLICY_NAME_MAX];
	const char *why;
	struct policy_decision d;

	assert_int_equal(policy_name_normalize(wire, strlen(wire), name, &why), 0);
	policy_decide_query(p, name, &d);
	expect(p, &d, v, reason, marker);
}

struct fl {
	const char *dst;
	uint16_t port;
	uint8_t l4;
	const char *sni;
	const char *host;
	const char *bound[3];
	bool quic;
	bool ech;
};

static struct policy_decision flow(const struct policy *p, const struct fl *x)
{
	uint8_t a[16];
	struct policy_flow f = { 0 };
	struct policy_decision d;
	size_t nb = 0;

	f.family = strchr(x->dst, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(f.family, x->dst, a), 1);
	while (nb < 3 && x->bound[nb])
		nb++;
	f.dst = a;
	f.dport = x->port;
	f.l4 = x->l4 ? x->l4 : IPPROTO_TCP;
	f.sni = x->sni;
	f.http_host = x->host;
	f.bound_names = x->bound;
	f.n_bound = nb;
	f.quic = x->quic;
	f.ech = x->ech;
	policy_decide_flow(p, &f, &d);
	return d;
}

static void check_flow(const struct policy *p, struct fl x, enum policy_verdict v,
		       const char *reason, const char *marker)
{
	struct policy_decision d = flow(p, &x);

	expect(p, &d, v, reason, marker);
	if (strcmp(reason, "private_range") != 0)
		assert_null(d.range);
}

static void check_addr(const struct policy *p, const char *dst, uint16_t port, uint8_t l4,
		       enum policy_verdict v, const char *reason, const char *marker)
{
	uint8_t a[16];
	int fam = strchr(dst, ':') ? AF_INET6 : AF_INET;
	struct policy_decision d;

	assert_int_equal(inet_pton(fam, dst, a), 1);
	policy_decide_addr(p, fam, a, port, l4, &d);
	expect(p, &d, v, reason, marker);
}

#define ALLOW POLICY_ALLOW
#define BLOCK POLICY_BLOCK
#define TCP IPPROTO_TCP
#define UDP IPPROTO_UDP

/* ---- names (queries) -------------------------------------------------------------- */

static void row_n01_exact_name(void **state)
{
	(void)state;
	query(pd, "example.test", ALLOW, "allowed_domain", "R_example");
}

static void row_n02_exact_not_below(void **state)
{
	(void)state;
	query(pd, "a.example.test", BLOCK, "not_allowed", NULL);
	query(pd, "test", BLOCK, "not_allowed", NULL);
}

static void row_n03_wildcard_subdomain(void **state)
{
	(void)state;
	query(pd, "a.wild.test", ALLOW, "allowed_domain", "R_wild");
}

static void row_n04_wildcard_not_apex(void **state)
{
	(void)state;
	query(pd, "wild.test", BLOCK, "not_allowed", NULL);
}

static void row_n05_wildcard_deeper(void **state)
{
	(void)state;
	query(pd, "x.y.z.wild.test", ALLOW, "allowed_domain", "R_wild");
}

static void row_n06_label_boundary(void **state)
{
	(void)state;
	query(pd, "notwild.test", BLOCK, "not_allowed", NULL);
	query(pd, "a.wild.test.example", BLOCK, "not_allowed", NULL);
	query(pd, "example.test.evil", BLOCK, "not_allowed", NULL);
}

static void row_n07_case_trailing_dot(void **state)
{
	(void)state;
	query(pd, "ExAmple.TEST.", ALLOW, "allowed_domain", "R_example");
	query(pd, "A.WILD.TEST.", ALLOW, "allowed_domain", "R_wild");
}

static void row_n08_punycode(void **state)
{
	char name[POLICY_NAME_MAX];
	const char *why;

	(void)state;
	query(pd, "XN--BCHER-KVA.example.", ALLOW, "allowed_domain", "R_idn");
	/* A wire name is already an A-label: raw UTF-8 is not a valid wire name. */
	assert_int_equal(policy_name_normalize("b\xc3\xbc" "cher.example", 14, name, &why),
			 -EINVAL);
	assert_non_null(why);
}

static void row_n09_exact_deny_over_wildcard_allow(void **state)
{
	(void)state;
	query(pd, "bad.evil.test", BLOCK, "denied_domain", "D_bad");
	query(pd, "ok.evil.test", ALLOW, "allowed_domain", "R_evil");
	/* An exact deny is exact: names below it fall back to the wildcard allow. */
	query(pd, "x.bad.evil.test", ALLOW, "allowed_domain", "R_evil");
}

static void row_n10_wildcard_deny_over_exact_allow(void **state)
{
	(void)state;
	query(pd, "good.deny.test", BLOCK, "denied_domain", "D_deny");
	query(pd, "deny.test", BLOCK, "not_allowed", NULL);
}

static void row_n11_deny_with_ports(void **state)
{
	(void)state;
	query(pd, "port80.test", ALLOW, "allowed_domain", "R_port80_allow");
	check_flow(pd, (struct fl){ .dst = "198.18.5.80", .port = 80, .host = "port80.test",
				    .bound = { "port80.test" } },
		   BLOCK, "denied_domain", "D_port80");
	check_flow(pd, (struct fl){ .dst = "198.18.5.80", .port = 443, .sni = "port80.test",
				    .bound = { "port80.test" } },
		   ALLOW, "bound_address", "R_port80_allow");
}

static void row_n12_allow_with_ports(void **state)
{
	(void)state;
	query(pd, "web.test", ALLOW, "allowed_domain", "R_web");
	check_flow(pd, (struct fl){ .dst = "198.18.5.8", .port = 443, .sni = "web.test",
				    .bound = { "web.test" } },
		   ALLOW, "bound_address", "R_web");
	check_flow(pd, (struct fl){ .dst = "198.18.5.8", .port = 80, .bound = { "web.test" } },
		   BLOCK, "not_allowed", NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.5.8", .port = 8080, .sni = "web.test",
				    .bound = { "web.test" } },
		   BLOCK, "sni_mismatch", NULL);
}

/* ---- CIDRs ------------------------------------------------------------------------ */

static void row_c01_cidr_every_port(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.2.5", .port = 22 }, ALLOW, "allowed_cidr",
		   "R_c2");
	check_addr(pd, "198.18.2.5", 0, IPPROTO_ICMP, ALLOW, "allowed_cidr", "R_c2");
	check_flow(pd, (struct fl){ .dst = "2001:db8:2:1::1", .port = 443 }, ALLOW,
		   "allowed_cidr", "R_c6");
}

static void row_c02_cidr_ports(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.3.5", .port = 443 }, ALLOW, "allowed_cidr",
		   "R_c3");
	check_flow(pd, (struct fl){ .dst = "198.18.3.5", .port = 8443 }, ALLOW, "allowed_cidr",
		   "R_c3");
	check_flow(pd, (struct fl){ .dst = "198.18.3.5", .port = 80 }, BLOCK, "not_allowed",
		   NULL);
	check_addr(pd, "198.18.3.5", 0, IPPROTO_ICMP, BLOCK, "not_allowed", NULL);
	/* The most specific rule that lists the port decides (and is reported). */
	check_flow(pd, (struct fl){ .dst = "198.18.3.7", .port = 443 }, ALLOW, "allowed_cidr",
		   "R_c3_7");
	check_flow(pd, (struct fl){ .dst = "198.18.3.7", .port = 8443 }, ALLOW, "allowed_cidr",
		   "R_c3");
}

static void row_c03_cidr_deny_over_allow(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.2.200", .port = 443 }, BLOCK, "denied_cidr",
		   "D_c2");
	check_flow(pd, (struct fl){ .dst = "198.18.2.127", .port = 443 }, ALLOW, "allowed_cidr",
		   "R_c2");
	check_flow(pd, (struct fl){ .dst = "2001:db8:2:bad::1", .port = 443 }, BLOCK,
		   "denied_cidr", "D_c6");
	check_addr(pd, "198.18.2.200", 443, TCP, BLOCK, "denied_cidr", "D_c2");
	/* A deny with ports denies those ports only. */
	check_flow(pd, (struct fl){ .dst = "198.18.4.1", .port = 25 }, BLOCK, "denied_cidr",
		   "D_c4_25");
	check_flow(pd, (struct fl){ .dst = "198.18.4.1", .port = 443 }, ALLOW, "allowed_cidr",
		   "R_c4");
	check_addr(pd, "198.18.4.1", 0, IPPROTO_ICMP, ALLOW, "allowed_cidr", "R_c4");
	check_addr(pd, "198.18.2.5", 443, TCP, ALLOW, "allowed_cidr", "R_c2");
}

static void row_c04_cidr_deny_over_bound(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.2.200", .port = 443, .sni = "example.test",
				    .bound = { "example.test" } },
		   BLOCK, "denied_cidr", "D_c2");
}

static void row_c05_short_and_long_prefixes(void **state)
{
	(void)state;
	/* Long rules elsewhere must not hide a short rule that covers the address. */
	check_flow(pmixed, (struct fl){ .dst = "198.19.5.5", .port = 443 }, ALLOW,
		   "allowed_cidr", "X_short4");
	check_flow(pmixed, (struct fl){ .dst = "198.18.77.1", .port = 443 }, BLOCK,
		   "denied_cidr", "X_deny4");
	check_flow(pmixed, (struct fl){ .dst = "198.18.78.1", .port = 443 }, ALLOW,
		   "allowed_cidr", "X_short4");
	check_flow(pmixed, (struct fl){ .dst = "2001:db9::1", .port = 443 }, ALLOW,
		   "allowed_cidr", "X_short6");
	check_flow(pmixed, (struct fl){ .dst = "2001:db8:4::1", .port = 443 }, BLOCK,
		   "denied_cidr", "X_deny6");
	check_flow(pmixed, (struct fl){ .dst = "2001:db8:5::1", .port = 443 }, ALLOW,
		   "allowed_cidr", "X_short6");
	check_flow(pmixed, (struct fl){ .dst = "198.20.0.1", .port = 443 }, BLOCK,
		   "not_allowed", NULL);
}

/* ---- bound addresses, SNI and Host ------------------------------------------------ */

static void row_b01_bound_sni_match(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.5.1", .port = 443, .sni = "example.test",
				    .bound = { "example.test" } },
		   ALLOW, "bound_address", "R_example");
	check_flow(pd, (struct fl){ .dst = "2001:db8:5::1", .port = 443, .sni = "a.wild.test",
				    .bound = { "a.wild.test" } },
		   ALLOW, "bound_address", "R_wild");
}

static void row_b02_shared_address_sni_mismatch(void **state)
{
	(void)state;
	/* shared-b.test is allowed, but this session resolved only shared-a.test here. */
	check_flow(pd, (struct fl){ .dst = "198.18.5.2", .port = 443, .sni = "shared-b.test",
				    .bound = { "shared-a.test" } },
		   BLOCK, "sni_mismatch", NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.5.2", .port = 443, .sni = "shared-b.test",
				    .bound = { "shared-a.test", "shared-b.test" } },
		   ALLOW, "bound_address", "R_shared_b");
}

static void row_b03_sni_not_allowed(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.5.1", .port = 443, .sni = "unlisted.test",
				    .bound = { "example.test" } },
		   BLOCK, "sni_mismatch", NULL);
}

static void row_b04_sni_absent(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.5.1", .port = 443,
				    .bound = { "example.test" } },
		   ALLOW, "bound_address", "R_example");
	check_flow(pd, (struct fl){ .dst = "198.18.5.1", .port = 443 }, BLOCK, "not_allowed",
		   NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.5.1", .port = 443, .sni = "example.test" },
		   BLOCK, "not_allowed", NULL);
}

static void row_b05_host_mismatch(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.5.2", .port = 80, .host = "shared-b.test",
				    .bound = { "shared-a.test" } },
		   BLOCK, "host_mismatch", NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.5.2", .port = 80, .host = "shared-a.test",
				    .bound = { "shared-a.test" } },
		   ALLOW, "bound_address", "R_shared_a");
	/* Domain fronting: the SNI is right, the Host inside is another allowed name. */
	check_flow(pd, (struct fl){ .dst = "198.18.5.2", .port = 443, .sni = "shared-a.test",
				    .host = "shared-b.test", .bound = { "shared-a.test" } },
		   BLOCK, "host_mismatch", NULL);
}

static void row_b06_cidr_address_sni_denied(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.2.5", .port = 443, .sni = "denied-sni.test" },
		   BLOCK, "denied_domain", "D_sni");
	check_flow(pd, (struct fl){ .dst = "198.18.2.5", .port = 80, .host = "denied-sni.test" },
		   BLOCK, "denied_domain", "D_sni");
	check_flow(pd, (struct fl){ .dst = "198.18.2.5", .port = 443, .sni = "unlisted.test" },
		   ALLOW, "allowed_cidr", "R_c2");
}

static void row_b07_bound_name_revoked(void **state)
{
	(void)state;
	/* Bound under an older policy; the current one no longer allows the name. */
	check_flow(pd, (struct fl){ .dst = "198.18.5.3", .port = 443, .bound = { "gone.test" } },
		   BLOCK, "not_allowed", NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.5.3", .port = 443,
				    .bound = { "gone.test", "example.test" } },
		   ALLOW, "bound_address", "R_example");
}

/* ---- DoT, DoH, canary, QUIC, ECH -------------------------------------------------- */

static void row_p01_dot(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.2.5", .port = 853 }, BLOCK, "dot", NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.2.5", .port = 853, .l4 = UDP }, BLOCK,
		   "dot", NULL);
	check_addr(pd, "198.18.2.5", 853, TCP, BLOCK, "dot", NULL);
	check_flow(popn, (struct fl){ .dst = "198.18.2.5", .port = 853 }, ALLOW,
		   "allowed_cidr", "O_c2");
}

static void row_p02_doh_by_name(void **state)
{
	(void)state;
	query(pd, "dns.google", BLOCK, "doh_endpoint", NULL);   /* even though allowed */
	query(pd, "DOH.lab.test", BLOCK, "doh_endpoint", NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.5.4", .port = 443, .sni = "dns.google",
				    .bound = { "dns.google" } },
		   BLOCK, "doh_endpoint", NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.2.5", .port = 80, .host = "doh.lab.test" },
		   BLOCK, "doh_endpoint", NULL);
	query(popn, "dns.google", ALLOW, "allowed_domain", "O_dns_google");
}

static void row_p03_doh_by_address(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.99.1", .port = 443 }, BLOCK, "doh_endpoint",
		   NULL);
	check_flow(pd, (struct fl){ .dst = "2001:db8:99::1", .port = 443 }, BLOCK,
		   "doh_endpoint", NULL);
	check_addr(pd, "198.18.99.1", 443, TCP, BLOCK, "doh_endpoint", NULL);
	/* On the list and in an allowed CIDR: the DoH block wins. */
	check_flow(pd, (struct fl){ .dst = "198.18.9.9", .port = 443 }, BLOCK, "doh_endpoint",
		   NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.9.8", .port = 443 }, ALLOW, "allowed_cidr",
		   "R_c9");
	check_flow(popn, (struct fl){ .dst = "198.18.99.1", .port = 443 }, BLOCK,
		   "not_allowed", NULL);
}

static void row_p04_canary(void **state)
{
	(void)state;
	query(pd, "use-application-dns.net", BLOCK, "canary_domain", NULL);   /* *.net allows */
	query(pd, "Use-Application-DNS.net.", BLOCK, "canary_domain", NULL);
	query(popn, "use-application-dns.net", BLOCK, "canary_domain", NULL);
	query(pd, "a.use-application-dns.net", ALLOW, "allowed_domain", "R_net");
	check_flow(pd, (struct fl){ .dst = "198.18.2.5", .port = 443,
				    .sni = "use-application-dns.net" },
		   BLOCK, "canary_domain", NULL);
}

static void row_p05_quic_block(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.2.5", .port = 443, .l4 = UDP }, BLOCK,
		   "quic", NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.5.1", .port = 443, .l4 = UDP, .quic = true,
				    .sni = "example.test", .bound = { "example.test" } },
		   BLOCK, "quic", NULL);
	check_addr(pd, "198.18.2.5", 443, UDP, BLOCK, "quic", NULL);
	check_flow(pd, (struct fl){ .dst = "198.18.2.5", .port = 53, .l4 = UDP }, ALLOW,
		   "allowed_cidr", "R_c2");
}

static void row_p06_quic_allow(void **state)
{
	(void)state;
	check_flow(popn, (struct fl){ .dst = "198.18.2.5", .port = 443, .l4 = UDP }, ALLOW,
		   "allowed_cidr", "O_c2");
}

static void row_p07_quic_sni(void **state)
{
	(void)state;
	check_flow(pquic, (struct fl){ .dst = "198.18.5.1", .port = 443, .l4 = UDP,
				       .quic = true, .sni = "example.test",
				       .bound = { "example.test" } },
		   ALLOW, "bound_address", "Q_example");
	check_flow(pquic, (struct fl){ .dst = "198.18.5.1", .port = 443, .l4 = UDP,
				       .quic = true, .bound = { "example.test" } },
		   BLOCK, "quic", NULL);
	check_flow(pquic, (struct fl){ .dst = "198.18.5.1", .port = 443, .l4 = UDP,
				       .quic = true, .sni = "shared-a.test",
				       .bound = { "example.test" } },
		   BLOCK, "sni_mismatch", NULL);
}

static void row_p08_ech(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "198.18.5.1", .port = 443, .sni = "example.test",
				    .ech = true, .bound = { "example.test" } },
		   BLOCK, "ech", NULL);
	check_flow(popn, (struct fl){ .dst = "198.18.2.5", .port = 443, .sni = "example.test",
				       .ech = true },
		   ALLOW, "allowed_cidr", "O_c2");
}

/* ---- private ranges --------------------------------------------------------------- */

static void expect_class(const char *addr, const char *cls)
{
	uint8_t a[16];
	int fam = strchr(addr, ':') ? AF_INET6 : AF_INET;
	const char *got;

	assert_int_equal(inet_pton(fam, addr, a), 1);
	got = policy_private_class(fam, a);
	if (!cls) {
		if (got)
			print_error("%s: class %s, want public\n", addr, got);
		assert_null(got);
		return;
	}
	if (!got || strcmp(got, cls) != 0)
		print_error("%s: class %s, want %s\n", addr, got ? got : "(public)", cls);
	assert_non_null(got);
	assert_string_equal(got, cls);
}

static void row_r01_private_classes(void **state)
{
	static const char *const v[][2] = {
		{ "127.0.0.1", "loopback" }, { "127.255.255.254", "loopback" },
		{ "::1", "loopback" },
		{ "10.0.0.1", "rfc1918" }, { "172.16.0.1", "rfc1918" },
		{ "172.31.255.255", "rfc1918" }, { "192.168.1.1", "rfc1918" },
		{ "169.254.169.254", "link_local" }, { "169.254.0.1", "link_local" },
		{ "fe80::1", "link_local" }, { "febf::1", "link_local" },
		{ "100.64.0.1", "cgnat" }, { "100.127.255.255", "cgnat" },
		{ "224.0.0.1", "multicast" }, { "239.255.255.250", "multicast" },
		{ "ff02::1", "multicast" },
		{ "0.0.0.0", "unspecified" }, { "0.1.2.3", "unspecified" },
		{ "::", "unspecified" },
		{ "255.255.255.255", "broadcast" }, { "240.0.0.1", "reserved" },
		{ "192.0.0.8", "reserved" }, { "fec0::1", "reserved" },
		{ "fd00:ec2::254", "unique_local" }, { "fc00::1", "unique_local" },
		{ "::ffff:10.0.0.1", "ipv4_mapped" }, { "::ffff:198.18.0.1", "ipv4_mapped" },
		{ "::ffff:0:10.0.0.1", "ipv4_translated" },
		{ "::10.0.0.1", "ipv4_compat" },
		{ "64:ff9b::a00:1", "nat64" }, { "64:ff9b::198.18.0.1", "nat64" },
		{ "64:ff9b:1::1", "nat64" },
		{ "2002:a00:1::1", "6to4" }, { "2002:c612:1::1", "6to4" },
		{ "2001:0:4136:e378::1", "teredo" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		expect_class(v[i][0], v[i][1]);
}

static void row_r02_lab_ranges_public(void **state)
{
	static const char *const v[] = {
		"198.18.0.1", "198.19.255.255", "2001:db8::1", "2001:db8:ffff::1",
		"100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0",
		"169.253.255.255", "11.0.0.1", "223.255.255.255", "2001:1::1", "2003::1",
		"64:ff9c::1", "fbff::1",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		expect_class(v[i], NULL);
}

static void private_flow(const struct policy *p, struct fl x, const char *cls)
{
	struct policy_decision d = flow(p, &x);

	expect(p, &d, BLOCK, "private_range", NULL);
	assert_non_null(d.range);
	assert_string_equal(d.range, cls);
}

static void row_r03_private_blocked(void **state)
{
	(void)state;
	/* DNS rebinding: an allowed name answered with a private address. */
	private_flow(pd, (struct fl){ .dst = "10.0.0.1", .port = 443, .sni = "rebind.test",
				      .bound = { "rebind.test" } }, "rfc1918");
	private_flow(pd, (struct fl){ .dst = "169.254.169.254", .port = 80,
				      .host = "rebind.test", .bound = { "rebind.test" } },
		     "link_local");
	private_flow(pd, (struct fl){ .dst = "fd00:ec2::254", .port = 80,
				      .bound = { "rebind.test" } }, "unique_local");
	private_flow(pd, (struct fl){ .dst = "127.0.0.1", .port = 22 }, "loopback");
	private_flow(pd, (struct fl){ .dst = "100.64.1.1", .port = 22 }, "cgnat");
	private_flow(pd, (struct fl){ .dst = "224.0.0.251", .port = 5353, .l4 = UDP },
		     "multicast");
	/* 198.18.2.5 is allowed by CIDR; its IPv6-embedded forms are not. */
	private_flow(pd, (struct fl){ .dst = "::ffff:198.18.2.5", .port = 443 }, "ipv4_mapped");
	private_flow(pd, (struct fl){ .dst = "64:ff9b::198.18.2.5", .port = 443 }, "nat64");
	private_flow(pd, (struct fl){ .dst = "2002:c612:205::1", .port = 443 }, "6to4");
	private_flow(pd, (struct fl){ .dst = "2001:0:4136:e378::1", .port = 443 }, "teredo");
	check_addr(pd, "10.0.0.1", 443, TCP, BLOCK, "private_range", NULL);
}

static void row_r04_private_allowed_by_cidr(void **state)
{
	(void)state;
	check_flow(pd, (struct fl){ .dst = "10.1.2.3", .port = 22 }, ALLOW, "allowed_cidr",
		   "R_private_open");
	check_addr(pd, "10.1.2.3", 22, TCP, ALLOW, "allowed_cidr", "R_private_open");
	private_flow(pd, (struct fl){ .dst = "10.2.0.1", .port = 22 }, "rfc1918");
	/* A catch-all is not an explicit allow of a private range. */
	private_flow(pcatch, (struct fl){ .dst = "10.0.0.1", .port = 443 }, "rfc1918");
	private_flow(pcatch, (struct fl){ .dst = "fd00::1", .port = 443 }, "unique_local");
	private_flow(pcatch, (struct fl){ .dst = "169.254.169.254", .port = 80 },
		     "link_local");
	check_flow(pcatch, (struct fl){ .dst = "198.18.7.7", .port = 443 }, ALLOW,
		   "allowed_cidr", "R_all4");
	check_flow(pcatch, (struct fl){ .dst = "2001:db8::1", .port = 443 }, ALLOW,
		   "allowed_cidr", "R_all6");
}

static void row_r05_private_ranges_allow(void **state)
{
	(void)state;
	check_flow(popn, (struct fl){ .dst = "10.0.0.5", .port = 443, .sni = "example.test",
				       .bound = { "example.test" } },
		   ALLOW, "bound_address", "O_example");
}

/* ---- report-only ------------------------------------------------------------------ */

static void row_m01_report_only(void **state)
{
	(void)state;
	query(preport, "other.test", POLICY_WOULD_BLOCK, "not_allowed", NULL);
	query(preport, "example.test", ALLOW, "allowed_domain", "M_example");
	query(preport, "use-application-dns.net", POLICY_WOULD_BLOCK, "canary_domain", NULL);
	check_flow(preport, (struct fl){ .dst = "198.18.2.5", .port = 443 }, POLICY_WOULD_BLOCK,
		   "denied_cidr", "M_deny");
	check_flow(preport, (struct fl){ .dst = "198.18.5.5", .port = 853 }, POLICY_WOULD_BLOCK,
		   "dot", NULL);
	check_addr(preport, "10.0.0.1", 80, TCP, POLICY_WOULD_BLOCK, "private_range", NULL);
	assert_int_equal(policy_settings(preport)->mode, SG_MODE_REPORT);
	assert_int_equal(policy_settings(preport)->dns_blocked_answer, SG_DNS_NXDOMAIN);
}

/* ---- the set ---------------------------------------------------------------------- */

static void test_find_and_settings(void **state)
{
	const struct sg_policy *s = policy_settings(pd);

	(void)state;
	assert_ptr_equal(policy_find(set, "default"), pd);
	assert_null(policy_find(set, "nosuch"));
	assert_string_equal(policy_name(pcatch), "catchall");
	assert_string_equal(s->name, "default");
	assert_int_equal(s->n_allow, 19);
	assert_int_equal(s->n_deny, 7);
	assert_string_equal(s->allow[0].domain, "example.test");
	assert_string_equal(s->allow[4].domain, "xn--bcher-kva.example");
	assert_int_equal(s->allow[13].n_ports, 2);
	assert_int_equal(s->allow[13].ports[1], 8443);
	assert_int_equal(policy_settings(popn)->quic, SG_QUIC_ALLOW);
	assert_int_equal(policy_settings(pquic)->quic, SG_QUIC_SNI);
}

static void test_query_invalid(void **state)
{
	struct policy_decision d;

	(void)state;
	policy_decide_query(pd, "", &d);
	assert_string_equal(d.reason, "invalid_name");
	policy_decide_query(pd, NULL, &d);
	assert_string_equal(d.reason, "invalid_name");
	assert_int_equal(d.verdict, POLICY_BLOCK);
}

/* The ports an allowed answer's addresses are bound on in the kernel sets. */
static void test_bind_ports(void **state)
{
	uint16_t ports[4];
	size_t n = 99;

	(void)state;
	assert_int_equal(policy_bind_ports(pd, "web.test", ports, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ports[0], 443);
	assert_int_equal(policy_bind_ports(pd, "example.test", ports, 4, &n), 1);
	assert_int_equal(n, 0);
	assert_int_equal(policy_bind_ports(pd, "a.b.wild.test", ports, 4, &n), 1);
	assert_int_equal(policy_bind_ports(pd, "x.evil.test", ports, 4, &n), 1);
	/* Allowed on every port but denied on 80: no any-port element. */
	assert_int_equal(policy_bind_ports(pd, "port80.test", ports, 4, &n), 0);
	assert_int_equal(n, 0);
	/* Denied, a DoH endpoint, the canary, no rule, the wildcard's apex: none. */
	assert_int_equal(policy_bind_ports(pd, "bad.evil.test", ports, 4, &n), -ENOENT);
	assert_int_equal(policy_bind_ports(pd, "a.deny.test", ports, 4, &n), -ENOENT);
	assert_int_equal(policy_bind_ports(pd, "dns.google", ports, 4, &n), -ENOENT);
	assert_int_equal(policy_bind_ports(popn, "dns.google", ports, 4, &n), 1);
	assert_int_equal(policy_bind_ports(pd, "use-application-dns.net", ports, 4, &n),
			 -ENOENT);
	assert_int_equal(policy_bind_ports(pd, "nope.test", ports, 4, &n), -ENOENT);
	assert_int_equal(policy_bind_ports(pd, "wild.test", ports, 4, &n), -ENOENT);
	assert_int_equal(policy_bind_ports(pd, "", ports, 4, &n), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest rows[] = {
		cmocka_unit_test(row_n01_exact_name),
		cmocka_unit_test(row_n02_exact_not_below),
		cmocka_unit_test(row_n03_wildcard_subdomain),
		cmocka_unit_test(row_n04_wildcard_not_apex),
		cmocka_unit_test(row_n05_wildcard_deeper),
		cmocka_unit_test(row_n06_label_boundary),
		cmocka_unit_test(row_n07_case_trailing_dot),
		cmocka_unit_test(row_n08_punycode),
		cmocka_unit_test(row_n09_exact_deny_over_wildcard_allow),
		cmocka_unit_test(row_n10_wildcard_deny_over_exact_allow),
		cmocka_unit_test(row_n11_deny_with_ports),
		cmocka_unit_test(row_n12_allow_with_ports),
		cmocka_unit_test(row_c01_cidr_every_port),
		cmocka_unit_test(row_c02_cidr_ports),
		cmocka_unit_test(row_c03_cidr_deny_over_allow),
		cmocka_unit_test(row_c04_cidr_deny_over_bound),
		cmocka_unit_test(row_c05_short_and_long_prefixes),
		cmocka_unit_test(row_b01_bound_sni_match),
		cmocka_unit_test(row_b02_shared_address_sni_mismatch),
		cmocka_unit_test(row_b03_sni_not_allowed),
		cmocka_unit_test(row_b04_sni_absent),
		cmocka_unit_test(row_b05_host_mismatch),
		cmocka_unit_test(row_b06_cidr_address_sni_denied),
		cmocka_unit_test(row_b07_bound_name_revoked),
		cmocka_unit_test(row_p01_dot),
		cmocka_unit_test(row_p02_doh_by_name),
		cmocka_unit_test(row_p03_doh_by_address),
		cmocka_unit_test(row_p04_canary),
		cmocka_unit_test(row_p05_quic_block),
		cmocka_unit_test(row_p06_quic_allow),
		cmocka_unit_test(row_p07_quic_sni),
		cmocka_unit_test(row_p08_ech),
		cmocka_unit_test(row_r01_private_classes),
		cmocka_unit_test(row_r02_lab_ranges_public),
		cmocka_unit_test(row_r03_private_blocked),
		cmocka_unit_test(row_r04_private_allowed_by_cidr),
		cmocka_unit_test(row_r05_private_ranges_allow),
		cmocka_unit_test(row_m01_report_only),
		cmocka_unit_test(test_find_and_settings),
		cmocka_unit_test(test_query_invalid),
		cmocka_unit_test(test_bind_ports),
	};

	return cmocka_run_group_tests_name("policy rows", rows, setup, teardown);
}
