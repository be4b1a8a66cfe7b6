/* common/cpuload.c: /proc/stat's aggregate line and the idle share between two samples. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/cpuload.h"

static int parse(const char *s, struct cpu_sample *out)
{
	return cpu_sample_parse(s, strlen(s), out);
}

static void test_parse_kernel_line(void **state)
{
	/* This machine's /proc/stat head (6.18): ten fields, guest time inside user. */
	const char *stat = "cpu  252294 0 174711 295948 7085 0 27218 849 0 0\n"
			   "cpu0 126147 0 87355 147974 3542 0 13609 424 0 0\n";
	struct cpu_sample s;

	(void)state;
	assert_int_equal(parse(stat, &s), 0);
	assert_int_equal(s.idle, 295948 + 7085);
	assert_int_equal(s.total, 252294 + 174711 + 295948 + 7085 + 27218 + 849);
}

static void test_parse_old_kernel_line(void **state)
{
	/* 2.6.11+ has 8 fields; a ninth and tenth came later: 8 are enough. */
	struct cpu_sample s;

	(void)state;
	assert_int_equal(parse("cpu  1 2 3 4 5 6 7 8\n", &s), 0);
	assert_int_equal(s.idle, 9);
	assert_int_equal(s.total, 36);
}

static void test_parse_refuses(void **state)
{
	struct cpu_sample s;

	(void)state;
	assert_int_equal(parse("", &s), -EINVAL);
	assert_int_equal(parse("cpu0 1 2 3 4 5 6 7 8\n", &s), -EINVAL);   /* not the aggregate */
	assert_int_equal(parse("cpu  1 2 3 4 5 6 7\n", &s), -EINVAL);     /* too few */
	assert_int_equal(parse("cpu  1 2 x 4 5 6 7 8\n", &s), -EINVAL);
	assert_int_equal(parse("cpu  99999999999999999999 0 0 0 0 0 0 0\n", &s), -EINVAL);
	assert_int_equal(parse("cpu  18446744073709551615 1 0 0 0 0 0 0\n", &s), -EINVAL);
	/* cut after the fields: the buffer, not the terminator, bounds it */
	assert_int_equal(cpu_sample_parse("cpu  1 2 3 4 5 6 7 8", 10, &s), -EINVAL);
}

static void test_idle_pct(void **state)
{
	struct cpu_sample a = { .idle = 100, .total = 1000 }, b = { .idle = 110, .total = 1100 };

	(void)state;
	assert_int_equal(cpu_idle_pct(&a, &b, 0), 10);
	assert_int_equal(cpu_idle_pct(&a, &b, 40), 50);     /* the caller's own time is idle */
	assert_int_equal(cpu_idle_pct(&a, &b, 1000), 100);  /* never above all of it */
	assert_int_equal(cpu_idle_pct(&a, &a, 0), -1);      /* no time passed */
	assert_int_equal(cpu_idle_pct(&b, &a, 0), -1);      /* backwards */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_kernel_line),
		cmocka_unit_test(test_parse_old_kernel_line),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_idle_pct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
