/*
 * audit/auditrec: audit record text, against records captured from Linux 6.18
 * (tests/data/audit/execve.log: two execve events as auditd 3.0.9 logged them with an
 * execve rule; the second has a 9000-byte argument split over three EXECVE records).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sensors/kaudit/auditrec.h"

#include "audit_records.h"

/* Feeds every EXECVE line of the event with serial into e. */
static void feed_event(struct auditrec_execve *e, uint64_t serial, size_t upto)
{
	uint64_t s, ms;
	size_t body, fed = 0;

	for (size_t i = 0; i < nlines && fed < upto; i++) {
		if (strncmp(lines[i], "type=EXECVE ", 12) != 0)
			continue;
		assert_int_equal(auditrec_head(lines[i], strlen(lines[i]), &s, &ms, &body), 0);
		if (s != serial)
			continue;
		assert_int_equal(auditrec_execve_feed(e, lines[i] + body, strlen(lines[i] + body)), 0);
		fed++;
	}
}

static void test_head(void **state)
{
	uint64_t s, ms;
	size_t body;
	const char *nl = "audit(1795955022.596:186035): argc=1 a0=\"x\"";

	(void)state;
	assert_int_equal(auditrec_head(lines[0], strlen(lines[0]), &s, &ms, &body), 0);
	assert_int_equal(s, 186035);
	assert_int_equal(ms, 1795955022596ull);
	/* The netlink payload has no "type= msg=" prefix. */
	assert_int_equal(auditrec_head(nl, strlen(nl), &s, &ms, &body), 0);
	assert_string_equal(nl + body, "argc=1 a0=\"x\"");
	assert_int_equal(auditrec_head("audit(1.2:3)", 12, &s, &ms, &body), -EINVAL);
	assert_int_equal(auditrec_head("audit(x.2:3): ", 14, &s, &ms, &body), -EINVAL);
	assert_int_equal(auditrec_head("type=EXECVE", 11, &s, &ms, &body), -EINVAL);
}

static void test_syscall_fields(void **state)
{
	struct auditrec_kv kv;
	uint64_t s, ms;
	size_t body, off;
	const char *l = lines[0];
	bool pid = false, exe = false, key = false;

	(void)state;
	assert_true(strncmp(l, "type=SYSCALL ", 13) == 0);
	assert_int_equal(auditrec_head(l, strlen(l), &s, &ms, &body), 0);
	off = body;
	while (auditrec_next(l, strlen(l), &off, &kv) > 0) {
		if (kv.klen == 3 && memcmp(kv.key, "pid", 3) == 0)
			pid = kv.vlen == 4 && memcmp(kv.val, "4920", 4) == 0 && !kv.quoted;
		if (kv.klen == 3 && memcmp(kv.key, "exe", 3) == 0)
			exe = kv.quoted && kv.vlen == 13 && memcmp(kv.val, "/usr/bin/echo", 13) == 0;
		if (kv.klen == 3 && memcmp(kv.key, "key", 3) == 0)
			key = kv.quoted && kv.vlen == 5;
	}
	assert_true(pid && exe && key);
}

static void test_execve_encoded(void **state)
{
	struct auditrec_execve e;
	static const char *want[] = { "/bin/echo", "plain-marker", "with space", "q\"uote",
				      "nl\nline", "bad\xff" };

	(void)state;
	auditrec_execve_init(&e, 1 << 20);
	feed_event(&e, 186035, 99);
	assert_int_equal(e.argc, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(e.a[i].len, strlen(want[i]));
		assert_memory_equal(e.a[i].b, want[i], e.a[i].len);
	}
	assert_true(auditrec_execve_complete(&e));
	auditrec_execve_free(&e);
}

static void test_execve_long_pieces(void **state)
{
	struct auditrec_execve e;
	char *as = malloc(9000);

	(void)state;
	assert_non_null(as);
	memset(as, 'a', 9000);
	auditrec_execve_init(&e, 1 << 20);
	feed_event(&e, 186038, 2);   /* the third piece is missing */
	assert_int_equal(e.argc, 3);
	assert_false(auditrec_execve_complete(&e));
	auditrec_execve_free(&e);

	auditrec_execve_init(&e, 1 << 20);
	feed_event(&e, 186038, 99);
	assert_true(auditrec_execve_complete(&e));
	assert_int_equal(e.a[1].len, 11);
	assert_int_equal(e.a[2].len, 9000);
	assert_memory_equal(e.a[2].b, as, 9000);
	auditrec_execve_free(&e);

	auditrec_execve_init(&e, 100);   /* kept up to 100 bytes in all */
	feed_event(&e, 186038, 99);
	assert_true(e.truncated);
	assert_int_equal(e.total, 100);
	assert_false(auditrec_execve_complete(&e));
	auditrec_execve_free(&e);
	free(as);
}

static void test_execve_malformed(void **state)
{
	static const char *bad[] = {
		"argc=2 a0=\"x\" a1=414",          /* odd hex */
		"argc=2 a0=\"x\" a1=4G",           /* not hex */
		"argc=1 a0=\"x",                   /* unterminated quote */
		"argc=1 a1=\"x\"",                 /* index beyond argc */
		"argc=1 a0=\"x\" a0=\"y\"",        /* twice */
		"argc=1 a0[0]=41",                 /* a piece without aI_len */
		"argc=1 a0_len=2 a0[0]=414141",    /* more than announced */
		"a0=\"x\"",                        /* no argc first */
		"argc=0",
		"argc=99999999999",
		"argc=1 =x",
		"argc=1 a0",
	};
	struct auditrec_execve e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		auditrec_execve_init(&e, 1 << 20);
		assert_int_equal(auditrec_execve_feed(&e, bad[i], strlen(bad[i])), -EINVAL);
		auditrec_execve_free(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head),
		cmocka_unit_test(test_syscall_fields),
		cmocka_unit_test(test_execve_encoded),
		cmocka_unit_test(test_execve_long_pieces),
		cmocka_unit_test(test_execve_malformed),
	};

	return cmocka_run_group_tests(tests, load, unload);
}
