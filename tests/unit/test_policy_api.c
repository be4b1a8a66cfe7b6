/*
 * The policy part's API around the decisions: the DoH endpoint list (parse, FILE:LINE
 * errors, load, the shipped file), wire-name normalisation edge cases, and the policy
 * set's reference counting (also from several threads). The decisions themselves: test_policy.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/config.h"
#include "policy/policy.h"

static const char doh_text[] =
	"# DoH endpoints for the tests (lab addresses only)\n"
	"dns.google\n"
	"  Doh.Lab.Test.   # a comment after an entry\n"
	"\n"
	"198.18.99.1\n"
	"2001:db8:99::1\n";

static void test_refcount(void **state)
{
	struct sg_config *c = config_default();
	struct policy_set *s = NULL;
	struct policy_decision d;

	(void)state;
	assert_non_null(c);
	assert_int_equal(policy_set_build(c->policies, c->n_policies, NULL, &s), 0);
	config_free(c);
	policy_set_ref(s);
	policy_set_unref(s);
	/* Still alive: one reference left. The embedded default allows nothing. */
	policy_decide_query(policy_find(s, NULL), "example.test", &d);
	assert_int_equal(d.verdict, POLICY_BLOCK);
	assert_string_equal(d.reason, "not_allowed");
	assert_string_equal(d.rule, "");
	policy_set_unref(s);
	policy_set_unref(NULL);
}

/* Readers on other threads take and drop references while deciding (ASan: no UAF). */
struct reader {
	struct policy_set *set;
	unsigned allowed;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct policy_decision d;

	for (unsigned i = 0; i < 20000; i++) {
		policy_set_ref(r->set);
		policy_decide_query(policy_find(r->set, NULL), "a.example.test", &d);
		r->allowed += d.verdict == POLICY_ALLOW;
		policy_set_unref(r->set);
	}
	policy_set_unref(r->set);   /* the reference the spawner took for this reader */
	return NULL;
}

static void test_refcount_threads(void **state)
{
	static const char yaml[] =
		"policies:\n  default:\n    allow:\n      - domain: \"*.example.test\"\n";
	struct sg_config *c = NULL;
	struct policy_set *s = NULL;
	struct reader r[4];
	pthread_t t[4];

	(void)state;
	assert_int_equal(config_load_buffer("t.yaml", yaml, strlen(yaml), &c, NULL), 0);
	assert_int_equal(policy_set_build(c->policies, c->n_policies, NULL, &s), 0);
	config_free(c);
	for (size_t i = 0; i < 4; i++) {
		r[i] = (struct reader){ .set = s };
		policy_set_ref(s);
		assert_int_equal(pthread_create(&t[i], NULL, reader_main, &r[i]), 0);
	}
	policy_set_unref(s);   /* the builder lets go first: the readers keep it alive */
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(r[i].allowed, 20000);
	}
}

/* ---- the DoH list ----------------------------------------------------------------- */

static void test_doh_list_parse(void **state)
{
	static const char crlf[] = "# x\r\na.test\r\n198.18.0.1";
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct doh_list *l = NULL;

	(void)state;
	assert_int_equal(doh_list_parse("doh.txt", doh_text, strlen(doh_text), &l, &e), 0);
	assert_int_equal(doh_list_count(l), 4);
	assert_int_equal(config_errors_count(&e), 0);
	doh_list_free(l);
	/* Empty, comments only, no trailing newline, CRLF. */
	assert_int_equal(doh_list_parse("d", "", 0, &l, &e), 0);
	assert_int_equal(doh_list_count(l), 0);
	doh_list_free(l);
	assert_int_equal(doh_list_parse("d", crlf, strlen(crlf), &l, &e), 0);
	assert_int_equal(doh_list_count(l), 2);
	doh_list_free(l);
	assert_int_equal(doh_list_count(NULL), 0);
	doh_list_free(NULL);
}

static void expect_error(const struct config_errors *e, size_t i, const char *where,
			 const char *part)
{
	char buf[512];

	assert_true(i < config_errors_count(e));
	config_error_format(config_errors_at(e, i), buf, sizeof(buf));
	if (strncmp(buf, where, strlen(where)) != 0 || !strstr(buf, part))
		print_error("error %zu: '%s', want '%s' ... '%s'\n", i, buf, where, part);
	assert_int_equal(strncmp(buf, where, strlen(where)), 0);
	assert_non_null(strstr(buf, part));
}

static void test_doh_list_errors(void **state)
{
	static const char bad[] =
		"ok.test\n"
		"bad..name\n"
		"2001:db8::zz\n"
		"two names.test\n"
		"\xc3\xa9.test\n"
		"198.18.0.1/24\n"
		"# fine\n";
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct doh_list *l = (struct doh_list *)&e;   /* must be reset to NULL */

	(void)state;
	assert_int_equal(doh_list_parse("list.txt", bad, strlen(bad), &l, &e), -EINVAL);
	assert_null(l);
	assert_int_equal(config_errors_count(&e), 5);
	expect_error(&e, 0, "list.txt:2:", "bad..name");
	expect_error(&e, 1, "list.txt:3:", "not a valid IPv6 address");
	expect_error(&e, 2, "list.txt:4:", "one name or address per line");
	expect_error(&e, 3, "list.txt:5:", "non-ASCII");
	expect_error(&e, 4, "list.txt:6:", "198.18.0.1/24");
	config_errors_free(&e);
}

static void test_doh_list_load(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	char path[] = "/tmp/sg-doh-XXXXXX";
	struct doh_list *l = NULL;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, doh_text, strlen(doh_text)), (ssize_t)strlen(doh_text));
	assert_int_equal(close(fd), 0);
	assert_int_equal(doh_list_load(path, &l, &e), 0);
	assert_int_equal(doh_list_count(l), 4);
	doh_list_free(l);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(doh_list_load(path, &l, &e), -ENOENT);
	assert_null(l);
	expect_error(&e, 0, path, "cannot read the DoH list");
	assert_int_equal(doh_list_load("/tmp", &l, &e), -EINVAL);
	config_errors_free(&e);
}

static void test_shipped_doh_list(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	const char *dir = getenv("SANDGATE_TESTDATA");
	struct doh_list *l = NULL;
	char *path = NULL;

	(void)state;
	assert_non_null(dir);
	/* tests/data -> data/doh-endpoints.txt of the source tree */
	assert_true(asprintf(&path, "%s/../../data/doh-endpoints.txt", dir) > 0);
	if (doh_list_load(path, &l, &e))
		config_errors_print(&e, stderr);
	assert_non_null(l);
	assert_true(doh_list_count(l) >= 20);
	doh_list_free(l);
	free(path);
	config_errors_free(&e);
}

/* ---- normalisation ---------------------------------------------------------------- */

static void norm_ok(const char *in, size_t len, const char *want)
{
	char out[POLICY_NAME_MAX];
	const char *why = "x";

	assert_int_equal(policy_name_normalize(in, len, out, &why), 0);
	assert_null(why);
	assert_string_equal(out, want);
}

static void norm_bad(const char *in, size_t len)
{
	char out[POLICY_NAME_MAX];
	const char *why = NULL;

	if (policy_name_normalize(in, len, out, &why) != -EINVAL)
		print_error("'%.*s' normalised to '%s'\n", (int)len, in, out);
	assert_non_null(why);
	assert_string_equal(out, "");
}

static void test_normalize(void **state)
{
	char l63[64], name253[254], name254[256];

	(void)state;
	norm_ok("Example.TEST", 12, "example.test");
	norm_ok("example.test.", 13, "example.test");
	norm_ok("_dmarc.example.test", 19, "_dmarc.example.test");
	norm_ok("xn--bcher-kva.example", 21, "xn--bcher-kva.example");
	norm_ok("localhost", 9, "localhost");
	norm_ok("a.b.c.xyz-trailing", 11, "a.b.c.xyz-t");   /* len bounds the input */
	norm_ok("1.2.3.4.example", 15, "1.2.3.4.example");
	norm_bad("", 0);
	norm_bad(".", 1);
	norm_bad("example.test..", 14);
	norm_bad(".example.test", 13);
	norm_bad("a..b", 4);
	norm_bad("-a.test", 7);
	norm_bad("a-.test", 7);
	norm_bad("a b.test", 8);
	norm_bad("*.test", 6);
	norm_bad("a\0b.test", 8);
	norm_bad("\xc3\xa9.test", 7);
	norm_bad("198.18.0.1", 10);
	norm_bad("198.18.0.1.", 11);
	norm_bad("a.test:443", 10);
	memset(l63, 'a', 63);
	l63[63] = '\0';
	norm_ok(l63, 63, l63);
	memset(name254, 'a', 64);
	norm_bad(name254, 64);   /* one label of 64 bytes */
	/* 253 bytes: labels of 63+1+63+1+63+1+61 */
	memset(name253, 'a', 253);
	name253[63] = name253[127] = name253[191] = '.';
	name253[253] = '\0';
	norm_ok(name253, 253, name253);
	memcpy(name254, name253, 253);
	name254[253] = '.';
	name254[254] = '\0';
	norm_ok(name254, 254, name253);   /* 253 plus the trailing dot */
	name254[253] = 'a';
	norm_bad(name254, 254);
	norm_bad(name254, 255);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refcount),
		cmocka_unit_test(test_refcount_threads),
		cmocka_unit_test(test_doh_list_parse),
		cmocka_unit_test(test_doh_list_errors),
		cmocka_unit_test(test_doh_list_load),
		cmocka_unit_test(test_shipped_doh_list),
		cmocka_unit_test(test_normalize),
	};

	return cmocka_run_group_tests_name("policy api", tests, NULL, NULL);
}
