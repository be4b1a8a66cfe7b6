/*
 * bench_policy [SEED]
 *
 * A policy of 10,000 names (7,000 exact, 3,000 wildcards) and 1,000 CIDRs (IPv4 and
 * IPv6, a third with port lists), plus 100 deny names and 20 deny CIDRs, written as
 * YAML and loaded with config_load_buffer() like a real reload. Times:
 *   parse   config_load_buffer() of that YAML (ms)
 *   build   policy_set_build() with the shipped-size DoH list (ms)
 *   query   policy_decide_query() over a mix of 45% exact hits, 20% wildcard hits at
 *           depth 1..3, 5% denied, 30% misses
 *   flow    policy_decide_flow() over a mix of CIDR hits (with and without ports),
 *           bound addresses with a matching SNI, SNI mismatches, private and unknown
 *           addresses, IPv4 and IPv6
 * and the same decisions by a baseline: a linear scan of the rule arrays (what a
 * straightforward matcher does), on a subset since it is slow.
 * Latency: decisions are timed in batches of 16 (so the clock's cost is amortised);
 * median and 99th percentile of the per-decision time of the batches, in ns.
 * Prints "name median_ns p99_ns decisions" lines and "parse_ms"/"build_ms" lines.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "daemon/config.h"
#include "policy/policy.h"

#define N_EXACT 7000
#define N_WILD 3000
#define N_DENY 100
#define N_CIDR4 700
#define N_CIDR6 300
#define N_DENY_CIDR 20
#define N_QUERIES 200000
#define N_FLOWS 200000
#define N_BASE 4000
#define BATCH 16

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		perror("calloc");
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p) {
		perror("strdup");
		exit(1);
	}
	return p;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ---- the policy ------------------------------------------------------------------- */

static void word(char *out, size_t n)
{
	static const char a[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	for (size_t i = 0; i < n; i++)
		out[i] = a[rnd() % 36];
	out[n] = '\0';
}

static const char *const tlds[] = { "test", "example", "lab", "internal", "corp" };

/* Name i of the allow list: "w<i>-<rand>.<rand>.<tld>" (unique by i). */
static void rule_name(char *out, size_t len, unsigned i)
{
	char a[9], b[9];

	word(a, 4 + rnd() % 5);
	word(b, 3 + rnd() % 6);
	snprintf(out, len, "n%u-%s.%s.%s", i, a, b, tlds[i % 5]);
}

struct gen {
	char **names;      /* N_EXACT + N_WILD allow names (wildcards without "*.") */
	char **deny;
	uint8_t v4[N_CIDR4][4];
	uint8_t p4[N_CIDR4];
	uint8_t v6[N_CIDR6][16];
	uint8_t p6[N_CIDR6];
	char *yaml;
	size_t len, cap;
};

static void emit(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(g->yaml + g->len, g->cap - g->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < g->cap - g->len)
			break;
		g->cap = g->cap * 2 + 4096;
		g->yaml = realloc(g->yaml, g->cap);
		if (!g->yaml) {
			perror("realloc");
			exit(1);
		}
	}
	g->len += (size_t)n;
}

static void gen_cidrs(struct gen *g)
{
	char s[INET6_ADDRSTRLEN];

	emit(g, "    # CIDRs\n");
	for (unsigned i = 0; i < N_CIDR4; i++) {
		/* 198.18.0.0/15 space, prefixes 16..32, host bits cleared */
		uint32_t a = 0xc6120000u | (uint32_t)(rnd() & 0x1ffff);
		uint8_t p = (uint8_t)(16 + rnd() % 17);

		a &= p == 0 ? 0 : ~0u << (32 - p);
		g->v4[i][0] = (uint8_t)(a >> 24);
		g->v4[i][1] = (uint8_t)(a >> 16);
		g->v4[i][2] = (uint8_t)(a >> 8);
		g->v4[i][3] = (uint8_t)a;
		g->p4[i] = p;
		inet_ntop(AF_INET, g->v4[i], s, sizeof(s));
		emit(g, "      - cidr: %s/%u\n", s, p);
		if (i % 3 == 0)
			emit(g, "        ports: [443, 8443]\n");
	}
	for (unsigned i = 0; i < N_CIDR6; i++) {
		static const uint8_t lens[] = { 32, 48, 56, 64, 128 };
		uint8_t p = lens[rnd() % 5];
		uint8_t *a = g->v6[i];

		memset(a, 0, 16);
		a[0] = 0x20, a[1] = 0x01, a[2] = 0x0d, a[3] = 0xb8;
		for (unsigned b = 4; b < 16; b++)
			a[b] = (uint8_t)rnd();
		for (unsigned b = 0; b < 16; b++)
			if (b * 8 >= p)
				a[b] = 0;
			else if (b * 8 + 8 > p)
				a[b] &= (uint8_t)(0xff00u >> (p % 8));
		g->p6[i] = p;
		inet_ntop(AF_INET6, a, s, sizeof(s));
		emit(g, "      - cidr: \"%s/%u\"\n", s, p);
		if (i % 3 == 0)
			emit(g, "        ports: [443]\n");
	}
}

static void gen_policy(struct gen *g)
{
	char n[128];

	g->names = xcalloc(N_EXACT + N_WILD, sizeof(char *));
	g->deny = xcalloc(N_DENY, sizeof(char *));
	emit(g, "policies:\n  default:\n    allow:\n");
	for (unsigned i = 0; i < N_EXACT + N_WILD; i++) {
		rule_name(n, sizeof(n), i);
		g->names[i] = xstrdup(n);
		emit(g, i < N_EXACT ? "      - domain: %s\n" : "      - domain: \"*.%s\"\n", n);
		if (i % 10 == 0)
			emit(g, "        ports: [443]\n");
	}
	gen_cidrs(g);
	emit(g, "    deny:\n");
	for (unsigned i = 0; i < N_DENY; i++) {
		/* below wildcard allows: "bad<i>.<wildcard name>" */
		snprintf(n, sizeof(n), "bad%u.%s", i, g->names[N_EXACT + i]);
		g->deny[i] = xstrdup(n);
		emit(g, "      - domain: %s\n", n);
	}
	for (unsigned i = 0; i < N_DENY_CIDR; i++)
		emit(g, "      - cidr: 198.19.%u.0/24\n", 200 + i);
}

/* ---- the workloads ---------------------------------------------------------------- */

static char **gen_queries(const struct gen *g, size_t n)
{
	char **q = xcalloc(n, sizeof(char *));
	char buf[300], w[12];

	for (size_t i = 0; i < n; i++) {
		unsigned r = (unsigned)(rnd() % 100);

		if (r < 45) {
			snprintf(buf, sizeof(buf), "%s", g->names[rnd() % N_EXACT]);
		} else if (r < 65) {
			const char *base = g->names[N_EXACT + rnd() % N_WILD];

			word(w, 3 + rnd() % 8);
			if (rnd() % 3 == 0)
				snprintf(buf, sizeof(buf), "a.b.%s.%s", w, base);
			else
				snprintf(buf, sizeof(buf), "%s.%s", w, base);
		} else if (r < 70) {
			snprintf(buf, sizeof(buf), "%s", g->deny[rnd() % N_DENY]);
		} else {
			char a[12];

			word(w, 5 + rnd() % 6);
			word(a, 3 + rnd() % 6);
			snprintf(buf, sizeof(buf), "www.%s.%s.%s", w, a, tlds[rnd() % 5]);
		}
		q[i] = xstrdup(buf);
	}
	return q;
}

struct fcase {
	struct policy_flow f;
	uint8_t dst[16];
	const char *bound[2];
};

static void gen_flow(const struct gen *g, char **q, struct fcase *c)
{
	unsigned r = (unsigned)(rnd() % 100);

	memset(c, 0, sizeof(*c));
	c->f.family = AF_INET;
	c->f.l4 = IPPROTO_TCP;
	c->f.dport = rnd() % 4 ? 443 : 80;
	c->f.dst = c->dst;
	c->f.bound_names = c->bound;
	if (r < 25) {                        /* IPv4 CIDR hit (maybe wrong port) */
		unsigned i = (unsigned)(rnd() % N_CIDR4);

		memcpy(c->dst, g->v4[i], 4);
		unsigned host = 32u - g->p4[i] > 8 ? 8 : 32u - g->p4[i];

		c->dst[3] |= (uint8_t)(rnd() & ((1u << host) - 1));
		c->f.sni = q[rnd() % N_QUERIES];
	} else if (r < 35) {                 /* IPv6 CIDR hit */
		unsigned i = (unsigned)(rnd() % N_CIDR6);

		c->f.family = AF_INET6;
		memcpy(c->dst, g->v6[i], 16);
		c->dst[15] |= g->p6[i] < 128 ? (uint8_t)rnd() : 0;
	} else if (r < 75) {                 /* bound address, matching SNI */
		const char *n = g->names[rnd() % N_EXACT];

		memcpy(c->dst, (uint8_t[]){ 203, 0, 113, (uint8_t)rnd() }, 4);
		c->f.sni = n;
		c->bound[0] = n;
		c->f.n_bound = 1;
	} else if (r < 85) {                 /* shared address, SNI of another name */
		memcpy(c->dst, (uint8_t[]){ 203, 0, 113, (uint8_t)rnd() }, 4);
		c->f.sni = g->names[rnd() % N_EXACT];
		c->bound[0] = g->names[rnd() % N_EXACT];
		c->f.n_bound = 1;
	} else if (r < 90) {                 /* private */
		memcpy(c->dst, (uint8_t[]){ 10, (uint8_t)rnd(), 0, 1 }, 4);
	} else {                             /* unknown public address */
		memcpy(c->dst, (uint8_t[]){ 192, 0, 2, (uint8_t)rnd() }, 4);
		c->f.sni = q[rnd() % N_QUERIES];
	}
}

/* ---- the baseline: a linear scan of the configured rules --------------------------- */

static bool name_matches(const struct sg_rule *r, const char *name)
{
	size_t n = strlen(name), d = strlen(r->domain);

	if (!r->wildcard)
		return strcmp(name, r->domain) == 0;
	return n > d + 1 && name[n - d - 1] == '.' && strcmp(name + n - d, r->domain) == 0;
}

static bool ports_ok(const struct sg_rule *r, uint16_t port)
{
	if (!r->n_ports)
		return true;
	for (size_t i = 0; i < r->n_ports; i++)
		if (r->ports[i] == port)
			return true;
	return false;
}

static bool cidr_matches(const struct sg_rule *r, int fam, const uint8_t *a)
{
	unsigned p = r->prefix;

	if (r->net.family != fam)
		return false;
	if (memcmp(a, r->net.bytes, p / 8) != 0)
		return false;
	return p % 8 == 0 || ((a[p / 8] ^ r->net.bytes[p / 8]) & (0xff00u >> (p % 8))) == 0;
}

static int linear_query(const struct sg_policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_deny; i++)
		if (p->deny[i].kind == SG_RULE_DOMAIN && !p->deny[i].n_ports &&
		    name_matches(&p->deny[i], name))
			return 1;
	for (size_t i = 0; i < p->n_allow; i++)
		if (p->allow[i].kind == SG_RULE_DOMAIN && name_matches(&p->allow[i], name))
			return 0;
	return 1;
}

static int linear_flow(const struct sg_policy *p, const struct policy_flow *f)
{
	for (size_t i = 0; i < p->n_deny; i++) {
		const struct sg_rule *r = &p->deny[i];

		if (r->kind == SG_RULE_CIDR ? cidr_matches(r, f->family, f->dst)
					    : f->sni && name_matches(r, f->sni))
			return 1;
	}
	if (policy_private_class(f->family, f->dst))
		return 1;
	for (size_t i = 0; i < p->n_allow; i++) {
		const struct sg_rule *r = &p->allow[i];

		if (r->kind == SG_RULE_CIDR && ports_ok(r, f->dport) &&
		    cidr_matches(r, f->family, f->dst))
			return 0;
	}
	if (!f->n_bound)
		return 1;
	if (f->sni && strcmp(f->sni, f->bound_names[0]) != 0)
		return 1;
	for (size_t i = 0; i < p->n_allow; i++) {
		const struct sg_rule *r = &p->allow[i];

		if (r->kind == SG_RULE_DOMAIN && ports_ok(r, f->dport) &&
		    name_matches(r, f->bound_names[0]))
			return 0;
	}
	return 1;
}

/* ---- timing ----------------------------------------------------------------------- */

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, size_t n, size_t decisions)
{
	qsort(v, n, sizeof(*v), dcmp);
	printf("%s %.0f %.0f %zu\n", what, v[n / 2], v[n * 99 / 100], decisions);
}

static volatile int sink;

static void bench_queries(const struct policy *p, const struct sg_policy *sp, char **q)
{
	size_t nb = N_QUERIES / BATCH, nbb = N_BASE / BATCH;
	double *v = xcalloc(nb, sizeof(double));
	struct policy_decision d;

	for (size_t b = 0; b < nb; b++) {
		double t0 = now_ns();

		for (size_t i = b * BATCH; i < (b + 1) * BATCH; i++) {
			policy_decide_query(p, q[i], &d);
			sink += d.verdict;
		}
		v[b] = (now_ns() - t0) / BATCH;
	}
	report("query_hashed", v, nb, N_QUERIES);
	for (size_t b = 0; b < nbb; b++) {
		double t0 = now_ns();

		for (size_t i = b * BATCH; i < (b + 1) * BATCH; i++)
			sink += linear_query(sp, q[i]);
		v[b] = (now_ns() - t0) / BATCH;
	}
	report("query_linear", v, nbb, N_BASE);
	free(v);
}

static void bench_flows(const struct policy *p, const struct sg_policy *sp,
			struct fcase *fc)
{
	size_t nb = N_FLOWS / BATCH, nbb = N_BASE / BATCH;
	double *v = xcalloc(nb, sizeof(double));
	struct policy_decision d;
	size_t allowed = 0;

	for (size_t b = 0; b < nb; b++) {
		double t0 = now_ns();

		for (size_t i = b * BATCH; i < (b + 1) * BATCH; i++) {
			policy_decide_flow(p, &fc[i].f, &d);
			allowed += d.verdict == POLICY_ALLOW;
		}
		v[b] = (now_ns() - t0) / BATCH;
	}
	report("flow_hashed", v, nb, N_FLOWS);
	printf("flow_allowed_share %.2f\n", (double)allowed / N_FLOWS);
	for (size_t b = 0; b < nbb; b++) {
		double t0 = now_ns();

		for (size_t i = b * BATCH; i < (b + 1) * BATCH; i++)
			sink += linear_flow(sp, &fc[i].f);
		v[b] = (now_ns() - t0) / BATCH;
	}
	report("flow_linear", v, nbb, N_BASE);
	free(v);
}

/* A DoH list the size of the shipped one. */
static struct doh_list *doh(void)
{
	char text[8192];
	size_t len = 0;
	struct doh_list *l = NULL;

	for (unsigned i = 0; i < 120; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					i % 2 ? "doh%u.resolver.test\n" : "192.0.2.%u\n", i);
	if (doh_list_parse("doh", text, len, &l, NULL))
		exit(1);
	return l;
}

int main(int argc, char **argv)
{
	struct gen g = { 0 };
	struct sg_config *c = NULL;
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct policy_set *set = NULL;
	struct doh_list *dl = doh();
	struct fcase *fc;
	const struct policy *p;
	char **q;
	double t0;

	if (argc > 1)
		rng = strtoull(argv[1], NULL, 0) | 1;
	gen_policy(&g);
	t0 = now_ns();
	if (config_load_buffer("bench.yaml", g.yaml, g.len, &c, &e)) {
		config_errors_print(&e, stderr);
		return 1;
	}
	printf("parse_ms %.1f\n", (now_ns() - t0) / 1e6);
	t0 = now_ns();
	if (policy_set_build(c->policies, c->n_policies, dl, &set)) {
		fprintf(stderr, "policy_set_build: out of memory\n");
		return 1;
	}
	printf("build_ms %.1f\n", (now_ns() - t0) / 1e6);
	printf("rules %zu allow %zu deny\n", config_policy(c, NULL)->n_allow,
	       config_policy(c, NULL)->n_deny);
	p = policy_find(set, NULL);
	q = gen_queries(&g, N_QUERIES);
	fc = xcalloc(N_FLOWS, sizeof(*fc));
	for (size_t i = 0; i < N_FLOWS; i++)
		gen_flow(&g, q, &fc[i]);
	bench_queries(p, config_policy(c, NULL), q);
	bench_flows(p, config_policy(c, NULL), fc);
	policy_set_unref(set);
	config_free(c);
	doh_list_free(dl);
	return 0;
}
