/* The limits: section of the config: defaults, values, and refusals with line numbers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/config.h"

static struct sg_config *load(const char *text, int want, struct config_errors *errs)
{
	struct sg_config *c = NULL;

	assert_int_equal(config_load_buffer("t.yaml", text, strlen(text), &c, errs), want);
	return c;
}

static void test_defaults(void **state)
{
	struct sg_config *c = config_default();

	(void)state;
	assert_non_null(c);
	assert_true(c->limits.enabled);
	assert_int_equal(c->limits.sample_interval_ms, 1000);
	assert_int_equal(c->limits.report_interval_ms, 10000);
	assert_int_equal(c->limits.disk_interval_ms, 5000);
	assert_int_equal(c->limits.disk_action, SG_DISK_WARN);
	assert_int_equal(c->limits.disk_max_entries, 100000);
	assert_true(c->limits.kmsg);
	config_free(c);
}

static void test_values(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = load("limits:\n  enabled: false\n  sample_interval: 200ms\n"
				   "  report_interval: 1m\n  disk_interval: 2s\n"
				   "  disk_action: kill\n  disk_max_entries: 500\n"
				   "  kmsg: false\n", 0, &e);

	(void)state;
	assert_false(c->limits.enabled);
	assert_int_equal(c->limits.sample_interval_ms, 200);
	assert_int_equal(c->limits.report_interval_ms, 60000);
	assert_int_equal(c->limits.disk_interval_ms, 2000);
	assert_int_equal(c->limits.disk_action, SG_DISK_KILL);
	assert_int_equal(c->limits.disk_max_entries, 500);
	assert_false(c->limits.kmsg);
	config_free(c);
	config_errors_free(&e);
}

static void test_refused(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;

	(void)state;
	assert_null(load("limits:\n  sample_interval: 10ms\n  disk_action: stop\n"
			 "  disk_max_entries: 5\n  bogus: 1\n", -EINVAL, &e));
	assert_int_equal(config_errors_count(&e), 4);
	assert_int_equal(config_errors_at(&e, 0)->line, 2);
	assert_int_equal(config_errors_at(&e, 1)->line, 3);
	assert_int_equal(config_errors_at(&e, 3)->line, 5);
	config_errors_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
