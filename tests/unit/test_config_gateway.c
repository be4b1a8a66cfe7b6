/* The gateway keys of the config: defaults, values, errors, the derived cgroup level. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/config.h"

static struct sg_config *load(const char *text)
{
	struct sg_config *c = NULL;

	if (config_load_buffer("t.yaml", text, strlen(text), &c, NULL) != 0)
		return NULL;
	return c;
}

static void test_defaults(void **state)
{
	struct sg_config *c = config_default();

	(void)state;
	assert_non_null(c);
	/* Issue 18.6: on by default (it only touches session traffic), enforcing. */
	assert_true(c->gateway.enabled);
	assert_true(c->gateway.enforce);
	assert_null(c->gateway.netns);
	assert_int_equal(c->gateway.mode, SG_GW_MODE_BOTH);
	assert_int_equal(c->gateway.flow_interim_ms, 60000);
	assert_int_equal(c->gateway.dns_timeout_ms, 5000);
	assert_int_equal(c->gateway.ct_event_buffer, 16 << 20);
	assert_int_equal(c->gateway.worker_priority, 0);
	assert_int_equal(c->gateway.flood_worker_priority, 10);
	assert_true(c->gateway.flood_worker_realtime);
	assert_int_equal(config_cgroup_level(c), 2);
	config_free(c);
}

static void test_values(void **state)
{
	struct sg_config *c = load("cgroup:\n  parent: a/b/c\ngateway:\n  enabled: true\n"
				   "  mode: interface\n  flow_interim_interval: 90s\n"
				   "  dns_timeout: 250ms\n  ct_event_buffer: 8KiB\n"
				   "  worker_priority: 0\n  flood_worker_priority: 15\n"
				   "  flood_worker_realtime: false\n");

	(void)state;
	assert_non_null(c);
	assert_true(c->gateway.enabled);
	assert_int_equal(c->gateway.mode, SG_GW_MODE_INTERFACE);
	assert_int_equal(c->gateway.flow_interim_ms, 90000);
	assert_int_equal(c->gateway.dns_timeout_ms, 250);
	assert_int_equal(c->gateway.ct_event_buffer, 8192);
	assert_int_equal(c->gateway.worker_priority, 0);
	assert_int_equal(c->gateway.flood_worker_priority, 15);
	assert_false(c->gateway.flood_worker_realtime);
	assert_int_equal(config_cgroup_level(c), 4);
	config_free(c);
}

/* A file that leaves the gateway out, or its section empty, has it on; false turns it off. */
static void test_enabled(void **state)
{
	struct sg_config *c;

	(void)state;
	c = load("log_level: info\n");
	assert_non_null(c);
	assert_true(c->gateway.enabled);
	config_free(c);
	c = load("gateway:\n  queues: 1\n");
	assert_non_null(c);
	assert_true(c->gateway.enabled);
	config_free(c);
	c = load("gateway: {enabled: false}\n");
	assert_non_null(c);
	assert_false(c->gateway.enabled);
	config_free(c);
}

static void test_errors(void **state)
{
	(void)state;
	assert_null(load("gateway:\n  mode: bridge\n"));
	assert_null(load("gateway:\n  enabled: maybe\n"));
	assert_null(load("gateway:\n  flow_interim_interval: 10ms\n"));
	assert_null(load("gateway:\n  dns_timeout: 1h\n"));
	assert_null(load("gateway:\n  ct_event_buffer: 100\n"));
	assert_null(load("gateway:\n  worker_priority: 21\n"));
	assert_null(load("gateway:\n  worker_priority: -5\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_enabled),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
