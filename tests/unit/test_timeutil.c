#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/timeutil.h"

static void test_format(void **state)
{
	struct timespec ts = { .tv_sec = 1782727440, .tv_nsec = 123456789 };
	char out[RFC3339_LEN + 1];

	(void)state;
	time_format_rfc3339(&ts, out);
	assert_string_equal(out, "2026-06-29T10:04:00.123456Z");
	ts.tv_sec = 0;
	ts.tv_nsec = 0;
	time_format_rfc3339(&ts, out);
	assert_string_equal(out, "1970-01-01T00:00:00.000000Z");
}

static void test_parse_rfc3339(void **state)
{
	struct timespec now = { 0 }, t;

	(void)state;
	assert_int_equal(time_parse("2026-06-29T10:04:00Z", &now, &t), 0);
	assert_int_equal(t.tv_sec, 1782727440);
	assert_int_equal(time_parse("2026-06-29T10:04:00.5Z", &now, &t), 0);
	assert_int_equal(t.tv_nsec, 500000000);
	assert_int_equal(time_parse("2026-06-29T12:04:00+02:00", &now, &t), 0);
	assert_int_equal(t.tv_sec, 1782727440);
	assert_int_equal(time_parse("2026-06-29T10:04:00", &now, &t), -22);
	assert_int_equal(time_parse("2026-13-29T10:04:00Z", &now, &t), -22);
	assert_int_equal(time_parse("2026-06-29T10:04:00Zjunk", &now, &t), -22);
	assert_int_equal(time_parse("", &now, &t), -22);
}

static void test_parse_relative(void **state)
{
	struct timespec now = { .tv_sec = 100000, .tv_nsec = 0 }, t;

	(void)state;
	assert_int_equal(time_parse("-15m", &now, &t), 0);
	assert_int_equal(t.tv_sec, 100000 - 900);
	assert_int_equal(time_parse("-2h", &now, &t), 0);
	assert_int_equal(t.tv_sec, 100000 - 7200);
	assert_int_equal(time_parse("-1d", &now, &t), 0);
	assert_int_equal(time_parse("-5x", &now, &t), -22);
	assert_int_equal(time_parse("-m", &now, &t), -22);
	assert_int_equal(time_parse("-99999999999999999999d", &now, &t), -22);
}

static void test_mono_to_real(void **state)
{
	struct timespec real, got;

	(void)state;
	clock_gettime(CLOCK_REALTIME, &real);
	time_mono_to_real(time_mono_ns(), &got);
	/* Converted "now" lands within a few ms of the wall clock's now. */
	assert_true(llabs(time_ns_diff(&got, &real)) < 5000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_parse_rfc3339),
		cmocka_unit_test(test_parse_relative),
		cmocka_unit_test(test_mono_to_real),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
