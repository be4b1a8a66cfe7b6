/* Config loader: defaults, a full file, every kind of error with its line, values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/config.h"
#include "conf/conf.h"

static int load(const char *yaml, struct sg_config **c, struct config_errors *e)
{
	return config_load_buffer("t.yaml", yaml, strlen(yaml), c, e);
}

static char *data_path(const char *rel)
{
	const char *dir = getenv("SANDGATE_TESTDATA");
	char *p = NULL;

	if (!dir || asprintf(&p, "%s/%s", dir, rel) < 0)
		return NULL;
	return p;
}

static void print_errors(const struct config_errors *e)
{
	config_errors_print(e, stderr);
}

/* ---- defaults and valid files ------------------------------------------------------ */

static void check_defaults(const struct sg_config *c)
{
	const struct sg_policy *p = config_policy(c, NULL);

	assert_string_equal(c->state_dir, "/var/lib/sandgate");
	assert_string_equal(c->control_socket, "/run/sandgate/control.sock");
	assert_string_equal(c->control_group, "sandgate");
	assert_string_equal(c->metrics_listen, "127.0.0.1:9477");
	assert_non_null(c->host);
	assert_int_equal(c->log_level, SG_LOG_INFO);
	assert_string_equal(c->cgroup.root, "auto");
	assert_string_equal(c->cgroup.parent, "sandgate");
	assert_int_equal(c->journal.segment_max_bytes, 64ull << 20);
	assert_int_equal(c->journal.segment_max_age_ms, 3600000);
	assert_int_equal(c->journal.fsync, SG_FSYNC_CHECKPOINT);
	assert_int_equal(c->journal.checkpoint_interval_ms, 1000);
	assert_int_equal(c->journal.checkpoint_events, 1000);
	assert_int_equal(c->journal.heartbeat_interval_ms, 10000);
	assert_int_equal(c->journal.queue_capacity, 65536);
	assert_int_equal(c->journal.shape_memory, 24u << 20);
	assert_null(c->journal.origin);
	assert_null(c->gateway.netns);
	assert_false(c->gateway.fail_open);
	assert_int_equal(c->gateway.queues, 2);
	assert_int_equal(c->gateway.queue_len, 4096);
	assert_int_equal(c->gateway.queue_base, 100);
	assert_int_equal(c->gateway.dns_ttl_min_ms, 5000);
	assert_int_equal(c->gateway.dns_ttl_max_ms, 3600000);
	assert_int_equal(c->gateway.n_resolvers, 0);
	assert_null(c->gateway.geoip_db);
	assert_null(c->gateway.doh_list);
	assert_int_equal(c->n_policies, 1);
	assert_non_null(p);
	assert_string_equal(p->name, "default");
	assert_int_equal(p->n_allow + p->n_deny, 0);
	assert_int_equal(p->mode, SG_MODE_ENFORCE);
	assert_int_equal(p->dns_blocked_answer, SG_DNS_REFUSED);
	assert_int_equal(p->doh, SG_BLOCK);
	assert_int_equal(p->dot, SG_BLOCK);
	assert_int_equal(p->quic, SG_QUIC_BLOCK);
	assert_int_equal(p->ech, SG_BLOCK);
	assert_int_equal(p->private_ranges, SG_BLOCK);
	assert_int_equal(p->verbosity, SG_VERB_SUMMARY);
	assert_int_equal(p->unapproved, SG_UNAPPROVED_FLAG);
}

static void test_defaults(void **state)
{
	struct sg_config *c = config_default();
	char host[256] = "";

	(void)state;
	assert_non_null(c);
	check_defaults(c);
	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	assert_string_equal(c->host, host);
	assert_null(config_policy(c, "nope"));
	config_free(c);
	config_free(NULL);
}

static void test_empty_and_comments(void **state)
{
	static const char *const texts[] = { "", "# only a comment\n", "---\n", "~\n",
					     "journal:\npolicies:\n" };
	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct config_errors e = CONFIG_ERRORS_INIT;
		struct sg_config *c = NULL;

		assert_int_equal(load(texts[i], &c, &e), 0);
		assert_int_equal(config_errors_count(&e), 0);
		check_defaults(c);
		config_free(c);
	}
}

static void check_full_policy(const struct sg_policy *p)
{
	assert_int_equal(p->mode, SG_MODE_REPORT);
	assert_int_equal(p->n_allow, 4);
	assert_int_equal(p->allow[0].kind, SG_RULE_DOMAIN);
	assert_string_equal(p->allow[0].domain, "example.test");
	assert_false(p->allow[0].wildcard);
	assert_string_equal(p->allow[1].domain, "example.test");
	assert_true(p->allow[1].wildcard);
	assert_int_equal(p->allow[2].kind, SG_RULE_CIDR);
	assert_int_equal(p->allow[2].net.family, AF_INET);
	assert_int_equal(p->allow[2].prefix, 24);
	assert_int_equal(p->allow[2].n_ports, 2);   /* sorted, duplicates dropped */
	assert_int_equal(p->allow[2].ports[0], 80);
	assert_int_equal(p->allow[2].ports[1], 443);
	assert_int_equal(p->allow[3].net.family, AF_INET6);
	assert_int_equal(p->allow[3].n_ports, 0);
	assert_int_equal(p->n_deny, 1);
	assert_string_equal(p->deny[0].domain, "bad.example.test");
	assert_int_equal(p->dns_blocked_answer, SG_DNS_NXDOMAIN);
	assert_int_equal(p->doh, SG_ALLOW);
	assert_int_equal(p->dot, SG_ALLOW);
	assert_int_equal(p->quic, SG_QUIC_SNI);
	assert_int_equal(p->ech, SG_ALLOW);
	assert_int_equal(p->private_ranges, SG_ALLOW);
	assert_int_equal(p->verbosity, SG_VERB_FULL);
	assert_int_equal(p->n_approved_sources, 1);
	assert_string_equal(p->approved_sources[0], "https://pypi.org/simple");
	assert_int_equal(p->unapproved, SG_UNAPPROVED_BLOCK);
}

static void check_full_gateway(const struct sg_gateway_config *g)
{
	assert_string_equal(g->netns, "router");
	assert_true(g->fail_open);
	assert_int_equal(g->queues, 4);
	assert_int_equal(g->queue_len, 8192);
	assert_int_equal(g->queue_base, 200);
	assert_int_equal(g->dns_ttl_min_ms, 1000);
	assert_int_equal(g->dns_ttl_max_ms, 7ull * 86400000);
	assert_int_equal(g->n_resolvers, 4);
	assert_int_equal(g->resolvers[0].addr.family, AF_INET);
	assert_int_equal(g->resolvers[0].port, 53);
	assert_int_equal(g->resolvers[1].port, 5353);
	assert_int_equal(g->resolvers[2].addr.family, AF_INET6);
	assert_int_equal(g->resolvers[2].port, 53);
	assert_int_equal(g->resolvers[3].port, 5353);
	assert_string_equal(g->geoip_db, "/usr/share/GeoIP/test.mmdb");
	assert_string_equal(g->doh_list, "/etc/sandgate/doh.txt");
}

static void test_full_file(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	char *path = data_path("config/full.yaml");
	int rc;

	(void)state;
	if (!path)
		skip();
	rc = config_load_file(path, &c, &e);
	print_errors(&e);
	assert_int_equal(rc, 0);
	assert_string_equal(c->host, "lab-host-7");
	assert_string_equal(c->state_dir, "/tmp/sg-state");
	assert_string_equal(c->control_socket, "/tmp/sg-state/ctl.sock");
	assert_string_equal(c->control_group, "sgops");
	assert_string_equal(c->metrics_listen, "[::1]:9999");
	assert_int_equal(c->log_level, SG_LOG_DEBUG);
	assert_string_equal(c->cgroup.root, "/sys/fs/cgroup/unified");
	assert_string_equal(c->cgroup.parent, "agents/sandgate");
	assert_int_equal(c->journal.segment_max_bytes, 1ull << 30);
	assert_int_equal(c->journal.segment_max_age_ms, 5400000);
	assert_int_equal(c->journal.fsync, SG_FSYNC_ALWAYS);
	assert_int_equal(c->journal.checkpoint_interval_ms, 500);
	assert_int_equal(c->journal.checkpoint_events, 250);
	assert_int_equal(c->journal.heartbeat_interval_ms, 300000);
	assert_int_equal(c->journal.queue_capacity, 1024);
	assert_int_equal(c->journal.shape_memory, 0);      /* off */
	assert_string_equal(c->journal.origin, "example.test/log");
	check_full_gateway(&c->gateway);
	assert_int_equal(c->n_policies, 2);
	check_full_policy(config_policy(c, "default"));
	assert_string_equal(config_policy(c, "ci")->allow[0].domain, "xn--bcher-kva.example");
	assert_int_equal(config_policy(c, "ci")->allow[0].line, 55);
	config_free(c);
	config_errors_free(&e);
	free(path);
}

static void test_example_file(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL, *d;
	char *path = data_path("../../daemon/sandgate.example.yaml");
	int rc;

	(void)state;
	if (!path)
		skip();
	rc = config_load_file(path, &c, &e);
	print_errors(&e);
	assert_int_equal(rc, 0);
	/* Issue 18.6: the example shows the true defaults (its examples are comments). */
	d = config_default();
	assert_non_null(d);
	assert_int_equal(c->n_policies, d->n_policies);
	assert_int_equal(config_policy(c, NULL)->n_allow, config_policy(d, NULL)->n_allow);
	assert_int_equal(config_policy(c, NULL)->n_deny, 0);
	assert_false(c->gateway.resolvers_set);
	assert_int_equal(c->gateway.enabled, d->gateway.enabled);
	assert_string_equal(c->state_dir, d->state_dir);
	assert_string_equal(c->metrics_listen, d->metrics_listen);
	config_free(d);
	config_free(c);
	free(path);
}

static void test_policies_without_default(void **state)
{
	struct sg_config *c = NULL;

	(void)state;
	assert_int_equal(load("policies:\n  ci:\n    quic: allow\n", &c, NULL), 0);
	assert_int_equal(c->n_policies, 2);
	assert_int_equal(config_policy(c, "ci")->quic, SG_QUIC_ALLOW);
	assert_int_equal(config_policy(c, "default")->quic, SG_QUIC_BLOCK);
	assert_int_equal(config_policy(c, "default")->line, 0);
	config_free(c);
	/* No error list: errors are still counted and still refuse the file. */
	assert_int_equal(load("bogus: 1\n", &c, NULL), -EINVAL);
	assert_null(c);
}

static void test_metrics_null(void **state)
{
	struct sg_config *c = NULL;

	(void)state;
	assert_int_equal(load("metrics_listen: null\ngateway:\n  resolvers: []\n", &c, NULL), 0);
	assert_null(c->metrics_listen);
	config_free(c);
}

/* ---- errors --------------------------------------------------------------------- */

struct err_case {
	const char *yaml;
	unsigned line;      /* 0: any line */
	const char *want;   /* substring of the message */
};

#define POL "policies:\n  default:\n    allow:\n"
static const struct err_case err_cases[] = {
	{ "bogus: 1\n", 1, "unknown key 'bogus' in the top level" },
	{ "journal:\n  fsink: always\n", 2, "did you mean 'fsync'" },
	{ "journal:\n  fsync: sometimes\n", 2, "journal.fsync: expected one of checkpoint, always, never" },
	{ "gateway:\n  queues: two\n", 2, "gateway.queues: expected a non-negative integer" },
	{ "gateway:\n  queues: 0\n", 2, "out of range (1..64)" },
	{ "gateway:\n  queues: \"2\"\n", 2, "quoted string" },
	{ "gateway:\n  queues: 99999999999999999999999\n", 2, "out of range" },
	{ "gateway:\n  fail_open: yes\n", 2, "expected true or false" },
	{ "gateway:\n  queue_base: 65535\n", 2, "queue_base + queues exceeds 65536" },
	{ "gateway:\n  dns_ttl_min: 2h\n  dns_ttl_max: 1h\n", 2, "dns_ttl_min is greater" },
	{ "gateway:\n  resolvers: [nope]\n", 2, "expected IP, IP:PORT" },
	{ "gateway:\n  resolvers: [\"198.18.0.1:0\"]\n", 2, "expected IP, IP:PORT" },
	{ "gateway:\n  resolvers: 198.18.0.1\n", 2, "expected a list" },
	{ "gateway:\n  netns: ../x\n", 2, "namespace name" },
	{ "gateway:\n  geoip_db: geo.mmdb\n", 2, "absolute path" },
	{ "state_dir: relative/path\n", 1, "state_dir: expected an absolute path" },
	{ "state_dir:\n", 1, "expected a string, got null" },
	{ "state_dir: \"\"\n", 1, "must not be empty" },
	{ "host: \"a\\0b\"\n", 1, "NUL byte" },
	{ "host: two words\n", 1, "without spaces" },
	{ "control_group: \"bad group\"\n", 1, "group name" },
	{ "control_socket: /run/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x.sock\n", 1, "socket path longer" },
	{ "metrics_listen: 127.0.0.1\n", 1, "expected IP:PORT" },
	{ "metrics_listen: \"::1:9477\"\n", 1, "expected IP:PORT" },
	{ "log_level: loud\n", 1, "expected one of error, warn, info, debug; got 'loud'" },
	{ "log_level: info\nlog_level: debug\n", 2, "duplicate key 'log_level' (first at line 1)" },
	{ "cgroup:\n  parent: ../escape\n", 2, "relative path" },
	{ "cgroup:\n  parent: /abs\n", 2, "relative path" },
	{ "cgroup:\n  root: relative\n", 2, "absolute path" },
	{ "journal: [1, 2]\n", 1, "journal: expected a mapping, got a list" },
	{ "journal:\n  segment_max_bytes: 64 parsecs\n", 2, "expected a size" },
	{ "journal:\n  segment_max_bytes: 1k\n", 2, "out of range" },
	{ "journal:\n  shape_memory: 64k\n", 2, "expected 0 (off) or at least 1MiB" },
	{ "journal:\n  shape_memory: 2G\n", 2, "out of range" },
	{ "journal:\n  segment_max_age: 10 minutes\n", 2, "expected a duration" },
	{ "journal:\n  checkpoint_interval: 1.5s\n", 2, "expected a duration" },
	{ "journal:\n  origin: \"a\\nb\"\n", 2, "control characters" },
	{ "a: [1, 2\n", 0, "YAML syntax error" },
	{ "host: x\n  bad: indent\n", 2, "YAML syntax error" },
	{ "x: &a 1\nhost: *a\n", 2, "aliases" },
	{ "host: !!str foo\n", 1, "tags are not supported" },
	{ "? [a]\n: 1\n", 1, "mapping keys must be plain strings" },
	{ "host: a\n---\nhost: b\n", 2, "only one YAML document" },
	{ "hello\n", 1, "must be a mapping" },
	{ "host: \xff\n", 1, "byte 6" },
	{ POL "      - domain: *.example.test\n", 4, "quote a wildcard domain" },
	{ POL "      - domain: bad..name\n", 4, "'bad..name': empty label" },
	{ POL "      - domain: a.*.test\n", 4, "'*' is only allowed" },
	{ POL "      - domain: \"*\"\n", 4, "'*' is only allowed" },
	{ POL "      - domain: 198.18.0.1\n", 4, "use cidr" },
	{ POL "      - domain: bad_char!.test\n", 4, "invalid character" },
	{ POL "      - cidr: 198.18.2.1/24\n", 4, "host bits are set after the prefix length "
	  "(did you mean 198.18.2.0/24?)" },
	{ POL "      - cidr: 2001:db8::1/32\n", 4, "did you mean 2001:db8::/32?" },
	{ POL "      - cidr: 198.18.2.0/33\n", 4, "prefix length must be 0..32" },
	{ POL "      - cidr: 2001:db8::/129\n", 4, "prefix length must be 0..128" },
	{ POL "      - cidr: example.test\n", 4, "not an IPv4 or IPv6 address" },
	{ POL "      - domain: a.test\n        ports: [0]\n", 5, "out of range (1..65535)" },
	{ POL "      - domain: a.test\n        ports: [443, 70000]\n", 5, "out of range" },
	{ POL "      - domain: a.test\n        ports: []\n", 5, "empty list" },
	{ POL "      - domain: a.test\n        ports: 443\n", 5, "expected a list of ports" },
	{ POL "      - domain: a.test\n        cidr: 198.18.0.0/15\n", 5, "both domain: and cidr:" },
	{ POL "      - ports: [443]\n", 4, "policies.default.allow[0]: entry needs a domain" },
	{ POL "      - example.test\n", 4, "expected a mapping" },
	{ POL "      - domain: a.test\n        port: [1]\n", 5, "did you mean 'ports'" },
	{ "policies:\n  default:\n    quick: block\n", 3, "did you mean 'quic'" },
	{ "policies:\n  default:\n    quic: maybe\n", 3, "policies.default.quic: expected one of "
	  "block, allow, sni" },
	{ "policies:\n  \"bad name\":\n    quic: allow\n", 2, "policy name 'bad name'" },
	{ "policies:\n  a: {}\n  a: {}\n", 3, "duplicate key 'a' (first at line 2)" },
	{ "policies:\n  default:\n    packages:\n      approved_sources: [ftp://x]\n", 4,
	  "expected an http:// or https:// URL" },
	{ "policies:\n  default:\n    packages:\n      unapproved: ignore\n", 4, "flag, block" },
	{ "policies: [default]\n", 1, "a mapping of policy names" },
};

static bool has_error(const struct config_errors *e, unsigned line, const char *want)
{
	char buf[1024];

	for (size_t i = 0; i < config_errors_count(e); i++) {
		const struct config_error *err = config_errors_at(e, i);

		config_error_format(err, buf, sizeof(buf));
		if ((line == 0 || err->line == line) && strstr(buf, want))
			return true;
	}
	return false;
}

static void test_error_kinds(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		const struct err_case *t = &err_cases[i];
		struct config_errors e = CONFIG_ERRORS_INIT;
		struct sg_config *c = (struct sg_config *)&e;   /* must be reset to NULL */
		int rc = load(t->yaml, &c, &e);

		if (rc != -EINVAL || c || !has_error(&e, t->line, t->want)) {
			fprintf(stderr, "case %zu: rc %d, want line %u '%s', got:\n", i, rc,
				t->line, t->want);
			print_errors(&e);
			fail();
		}
		config_free(c);
		config_errors_free(&e);
	}
}

static void test_many_errors(void **state)
{
	static const char text[] =
		"host: ok\n"                      /* 1 */
		"bogus: 1\n"                      /* 2: unknown */
		"journal:\n"                      /* 3 */
		"  fsync: sometimes\n"            /* 4: bad enum */
		"  queue_capacity: lots\n"        /* 5: not an integer */
		"gateway:\n"                      /* 6 */
		"  fail_open: maybe\n"            /* 7: not a bool */
		"policies:\n"                     /* 8 */
		"  default:\n"                    /* 9 */
		"    allow:\n"                    /* 10 */
		"      - domain: ok.test\n"       /* 11 */
		"      - domain: -bad.test\n"     /* 12: bad label */
		"      - cidr: 1.2.3.4/40\n"      /* 13: bad prefix */
		"host: again\n";                  /* 14: duplicate */
	static const unsigned lines[] = { 2, 4, 5, 7, 12, 13, 14 };
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	char buf[512];

	(void)state;
	assert_int_equal(load(text, &c, &e), -EINVAL);
	assert_null(c);
	print_errors(&e);
	assert_int_equal(config_errors_count(&e), sizeof(lines) / sizeof(lines[0]));
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		assert_int_equal(config_errors_at(&e, i)->line, lines[i]);
	assert_null(config_errors_at(&e, 99));
	config_error_format(config_errors_at(&e, 1), buf, sizeof(buf));
	assert_string_equal(buf, "t.yaml:4:10: journal.fsync: expected one of checkpoint, "
			    "always, never; got 'sometimes'");
	config_errors_free(&e);
	assert_int_equal(config_errors_count(&e), 0);
}

static void test_error_cap(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	for (int i = 0; i < CONFIG_MAX_ERRORS + 50; i++)
		fprintf(f, "bad%d: 1\n", i);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(config_load_buffer("cap", text, len, &c, &e), -EINVAL);
	assert_int_equal(config_errors_count(&e), CONFIG_MAX_ERRORS);
	assert_int_equal(e.dropped, 50);
	assert_int_equal(config_errors_at(&e, 0)->line, 1);
	config_errors_free(&e);
	free(text);
}

/* ---- values --------------------------------------------------------------------- */

static void test_sizes(void **state)
{
	static const struct { const char *s; int rc; uint64_t v; } t[] = {
		{ "4096", 0, 4096 }, { "64MiB", 0, 64ull << 20 }, { "64M", 0, 64ull << 20 },
		{ "64mib", 0, 64ull << 20 }, { "1G", 0, 1ull << 30 }, { "1Gi", 0, 1ull << 30 },
		{ "1GB", 0, 1000000000 }, { "10k", 0, 10240 }, { "1kB", 0, 1000 },
		{ "2T", 0, 2ull << 40 }, { "100B", 0, 100 }, { "5 MiB", -EINVAL, 0 },
		{ "MiB", -EINVAL, 0 }, { "1X", -EINVAL, 0 }, { "1MiBs", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 }, { "", -EINVAL, 0 },
		{ "99999999999999999999", -ERANGE, 0 }, { "17179869184G", -ERANGE, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t v = 0;

		assert_int_equal(cfg_parse_size(t[i].s, &v), t[i].rc);
		if (t[i].rc == 0)
			assert_int_equal(v, t[i].v);
	}
}

static void test_durations(void **state)
{
	static const struct { const char *s; int rc; uint64_t ms; } t[] = {
		{ "500ms", 0, 500 }, { "10s", 0, 10000 }, { "5m", 0, 300000 },
		{ "1h", 0, 3600000 }, { "7d", 0, 604800000 }, { "1h30m", 0, 5400000 },
		{ "1m500ms", 0, 60500 }, { "10", 0, 10000 }, { "0s", 0, 0 },
		{ "", -EINVAL, 0 }, { "ms", -EINVAL, 0 }, { "10x", -EINVAL, 0 },
		{ "1.5s", -EINVAL, 0 }, { "10 s", -EINVAL, 0 }, { "1H", -EINVAL, 0 },
		{ "99999999999999999d", -ERANGE, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t v = 0;

		assert_int_equal(cfg_parse_duration_ms(t[i].s, &v), t[i].rc);
		if (t[i].rc == 0)
			assert_int_equal(v, t[i].ms);
	}
}

static void test_domains(void **state)
{
	static const struct { const char *in; const char *out; bool wild; } ok[] = {
		{ "example.test", "example.test", false },
		{ "Example.TEST.", "example.test", false },
		{ "Bücher.example", "xn--bcher-kva.example", false },
		{ "BÜCHER.example.", "xn--bcher-kva.example", false },
		{ "*.Bücher.example", "xn--bcher-kva.example", true },
		{ "*.example.test", "example.test", true },
		{ "_dmarc.example.test", "_dmarc.example.test", false },
		{ "localhost", "localhost", false },
		{ "xn--bcher-kva.example", "xn--bcher-kva.example", false },
	};
	static const char *const bad[] = {
		"", ".", "..", "a..b", ".a", "a.b..", "-a.b", "a-.b", "a b", "a/b", "**.x", "*x.y",
		"a.*.b", "*.", "*", "x.*", "198.18.0.1", "a.b.", "exa\x01mple",
	};
	char *out = NULL;
	bool wild = false;
	const char *why = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(config_domain_normalize(ok[i].in, true, &out, &wild, &why), 0);
		assert_string_equal(out, ok[i].out);
		assert_int_equal(wild, ok[i].wild);
		free(out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = config_domain_normalize(bad[i], true, &out, &wild, &why);

		/* "a.b." loses one trailing dot and is valid; every other one must fail. */
		if (strcmp(bad[i], "a.b.") == 0) {
			assert_int_equal(rc, 0);
			free(out);
			continue;
		}
		if (rc != -EINVAL)
			fprintf(stderr, "accepted '%s'\n", bad[i]);
		assert_int_equal(rc, -EINVAL);
		assert_null(out);
		assert_non_null(why);
	}
	assert_int_equal(config_domain_normalize("*.a.test", false, &out, &wild, &why), -EINVAL);
	assert_int_equal(config_domain_normalize("a\xe2\x98\x83\xe2\x80\x8d.test", true, &out,
						 &wild, &why), -EINVAL);
}

static void test_domain_lengths(void **state)
{
	char name[300], *out = NULL;
	const char *why = NULL;

	(void)state;
	memset(name, 'a', 63);
	strcpy(name + 63, ".test");
	assert_int_equal(config_domain_normalize(name, false, &out, NULL, &why), 0);
	free(out);
	memset(name, 'a', 64);
	strcpy(name + 64, ".test");
	assert_int_equal(config_domain_normalize(name, false, &out, NULL, &why), -EINVAL);
	assert_string_equal(why, "label longer than 63 bytes");
	/* 4 labels of 63 plus 3 dots: 255 bytes; trimmed to 253 with a 61-byte last label. */
	for (int i = 0; i < 4; i++) {
		memset(name + i * 64, 'b', 63);
		name[i * 64 + 63] = '.';
	}
	name[4 * 64 - 1] = '\0';
	assert_int_equal(config_domain_normalize(name, false, &out, NULL, &why), -EINVAL);
	assert_string_equal(why, "name longer than 253 bytes");
	name[253] = '\0';
	assert_int_equal(config_domain_normalize(name, false, &out, NULL, &why), 0);
	assert_int_equal(strlen(out), 253);
	free(out);
}

static void test_cidrs(void **state)
{
	static const struct { const char *s; int family; unsigned prefix; } ok[] = {
		{ "198.18.0.0/15", AF_INET, 15 }, { "10.0.0.1", AF_INET, 32 },
		{ "0.0.0.0/0", AF_INET, 0 }, { "::/0", AF_INET6, 0 },
		{ "2001:db8::/32", AF_INET6, 32 }, { "2001:db8::1", AF_INET6, 128 },
		{ "::ffff:198.18.0.0/112", AF_INET6, 112 },
	};
	static const char *const bad[] = {
		"198.19.0.0/15", "2001:db8::1/32", "1.2.3.4/", "1.2.3.4/-1", "1.2.3.4/ 8",
		"1.2.3/24", "fe80::1%eth0/64", "1.2.3.4/33", "::/129", "1.2.3.4/0008",
		"1.2.3.4/8/8", "", "/8", "example.test/8",
	};
	struct sg_addr a;
	uint8_t p;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(config_parse_cidr(ok[i].s, &a, &p, &why), 0);
		assert_int_equal(a.family, ok[i].family);
		assert_int_equal(p, ok[i].prefix);
	}
	assert_int_equal(config_parse_cidr("198.18.2.0/24", &a, &p, &why), 0);
	assert_memory_equal(a.bytes, "\xc6\x12\x02\x00", 4);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (config_parse_cidr(bad[i], &a, &p, &why) != -EINVAL)
			fprintf(stderr, "accepted '%s'\n", bad[i]);
		assert_int_equal(config_parse_cidr(bad[i], &a, &p, &why), -EINVAL);
	}
}

/* ---- files and limits ----------------------------------------------------------- */

static void test_file_errors(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	char *dir = data_path("config");
	char buf[512];

	(void)state;
	assert_int_equal(config_load_file("/nonexistent/sandgate.yaml", &c, &e), -ENOENT);
	assert_null(c);
	assert_int_equal(config_errors_count(&e), 1);
	config_error_format(config_errors_at(&e, 0), buf, sizeof(buf));
	assert_string_equal(buf, "/nonexistent/sandgate.yaml: cannot read: "
			    "No such file or directory");
	if (dir) {
		assert_int_equal(config_load_file(dir, &c, &e), -EISDIR);
		assert_int_equal(config_errors_count(&e), 2);
	}
	config_errors_free(&e);
	free(dir);
}

static void test_too_big(void **state)
{
	size_t len = CONFIG_MAX_FILE_BYTES + 1;
	char *text = malloc(len), path[] = "/tmp/sg-config-test-XXXXXX";
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	int fd;

	(void)state;
	assert_non_null(text);
	memset(text, '#', len);
	assert_int_equal(config_load_buffer("big", text, len, &c, &e), -EFBIG);
	assert_true(has_error(&e, 0, "larger than"));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	assert_int_equal(config_load_file(path, &c, &e), -EFBIG);
	assert_int_equal(config_errors_count(&e), 2);
	assert_null(c);
	unlink(path);
	config_errors_free(&e);
	free(text);
}

static void test_deep_nesting(void **state)
{
	char text[512];
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	size_t n = 0;

	(void)state;
	n += (size_t)snprintf(text, sizeof(text), "x: ");
	for (int i = 0; i < 100; i++)
		text[n++] = '[';
	for (int i = 0; i < 100; i++)
		text[n++] = ']';
	text[n] = '\0';
	assert_int_equal(load(text, &c, &e), -EINVAL);
	assert_true(has_error(&e, 1, "nesting deeper than"));
	config_errors_free(&e);
}

static void test_check_file(void **state)
{
	char path[] = "/tmp/sg-config-check-XXXXXX", *o = NULL, *er = NULL;
	size_t ol = 0, el = 0;
	FILE *out = open_memstream(&o, &ol), *err = open_memstream(&er, &el);
	int fd = mkstemp(path);
	static const char bad[] = "journal:\n  fsync: x\nbogus: 1\n";

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, bad, sizeof(bad) - 1), (ssize_t)(sizeof(bad) - 1));
	close(fd);
	assert_int_equal(config_check_file(path, out, err), -EINVAL);
	fflush(err);
	assert_non_null(strstr(er, ":2:10: journal.fsync: expected one of"));
	assert_non_null(strstr(er, ":3:1: unknown key 'bogus'"));
	assert_non_null(strstr(er, ": 2 errors\n"));
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "host: h\n", 8), 8);
	close(fd);
	assert_int_equal(config_check_file(path, out, err), 0);
	fflush(out);
	assert_non_null(strstr(o, ": OK (1 policy)\n"));
	unlink(path);
	fclose(out);
	fclose(err);
	free(o);
	free(er);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_empty_and_comments),
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_policies_without_default),
		cmocka_unit_test(test_metrics_null),
		cmocka_unit_test(test_error_kinds),
		cmocka_unit_test(test_many_errors),
		cmocka_unit_test(test_error_cap),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_domains),
		cmocka_unit_test(test_domain_lengths),
		cmocka_unit_test(test_cidrs),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_check_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
