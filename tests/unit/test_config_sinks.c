/* The index: and sinks: config sections (sinks/sink_conf.c): values and errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "daemon/config.h"

static int load(const char *yaml, struct sg_config **c, struct config_errors *e)
{
	return config_load_buffer("t.yaml", yaml, strlen(yaml), c, e);
}

static void test_defaults(void **state)
{
	struct sg_config *c = config_default();

	(void)state;
	assert_non_null(c);
	assert_true(c->invest.index_enabled);
	assert_int_equal(c->invest.index_poll_ms, 1000);
	assert_int_equal(c->invest.n_sinks, 0);
	assert_true(c->invest.retention_enabled);
	assert_int_equal(c->invest.hot_ms, 90 * 86400000ull);
	assert_int_equal(c->invest.cold_ms, 730 * 86400000ull);
	config_free(c);
}

static void test_full(void **state)
{
	static const char yaml[] =
		"index:\n  enabled: false\n  poll_interval: 250ms\n"
		"sinks:\n"
		"  - name: vector\n    kind: file\n    path: /var/log/sg.jsonl\n"
		"    events: [\"net.*\", process.exec]\n"
		"  - name: siem\n    kind: syslog_tcp\n    address: 198.18.7.2:6514\n"
		"    retry_min: 100ms\n    retry_max: 10s\n    batch_lines: 50\n"
		"  - name: splunk\n    kind: hec\n    format: ocsf\n"
		"    url: https://198.18.7.6:8088/services/collector/event\n    token: t\n"
		"  - name: tls\n    kind: syslog_tls\n    address: 198.18.7.10:6514\n"
		"    ca_file: /etc/sg/ca.pem\n    cert_file: /etc/sg/c.pem\n"
		"    key_file: /etc/sg/c.key\n    server_name: rsyslog.lab.test\n"
		"    verbosity: minimal\n"
		"retention:\n  hot: 7d\n  cold: 30d\n  hold_all: true\n  hold_sessions: [s1, s2]\n";
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	const struct sockaddr_in *in;

	(void)state;
	assert_int_equal(load(yaml, &c, &e), 0);
	assert_false(c->invest.index_enabled);
	assert_int_equal(c->invest.index_poll_ms, 250);
	assert_int_equal(c->invest.n_sinks, 4);
	assert_int_equal(c->invest.sinks[3].kind, SG_SINK_SYSLOG_TLS);
	assert_string_equal(c->invest.sinks[3].ca_file, "/etc/sg/ca.pem");
	assert_string_equal(c->invest.sinks[3].cert_file, "/etc/sg/c.pem");
	assert_string_equal(c->invest.sinks[3].key_file, "/etc/sg/c.key");
	assert_string_equal(c->invest.sinks[3].server_name, "rsyslog.lab.test");
	assert_int_equal(c->invest.sinks[3].verbosity, SG_SINK_MINIMAL);
	assert_int_equal(c->invest.sinks[0].verbosity, SG_SINK_FULL);
	assert_int_equal(c->invest.sinks[2].kind, SG_SINK_HEC);
	assert_int_equal(c->invest.sinks[2].format, SG_SINK_OCSF);
	assert_string_equal(c->invest.sinks[2].token, "t");
	assert_int_equal(c->invest.hot_ms, 7 * 86400000ull);
	assert_true(c->invest.hold_all);
	assert_int_equal(c->invest.n_hold_sessions, 2);
	assert_string_equal(c->invest.hold_sessions[1], "s2");
	assert_string_equal(c->invest.sinks[0].name, "vector");
	assert_int_equal(c->invest.sinks[0].kind, SG_SINK_FILE);
	assert_int_equal(c->invest.sinks[0].n_events, 2);
	assert_string_equal(c->invest.sinks[0].events[0], "net.*");
	assert_int_equal(c->invest.sinks[0].retry_min_ms, 200);
	assert_int_equal(c->invest.sinks[1].kind, SG_SINK_SYSLOG_TCP);
	in = (const struct sockaddr_in *)&c->invest.sinks[1].addr;
	assert_int_equal(in->sin_family, AF_INET);
	assert_int_equal(ntohs(in->sin_port), 6514);
	assert_int_equal(c->invest.sinks[1].retry_max_ms, 10000);
	assert_int_equal(c->invest.sinks[1].batch_lines, 50);
	config_free(c);
	config_errors_free(&e);
}

static void expect_error(const char *yaml, const char *needle)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	char msg[512];
	bool found = false;

	assert_int_equal(load(yaml, &c, &e), -EINVAL);
	assert_null(c);
	for (size_t i = 0; i < config_errors_count(&e); i++) {
		config_error_format(config_errors_at(&e, i), msg, sizeof(msg));
		found = found || strstr(msg, needle);
	}
	if (!found)
		config_errors_print(&e, stderr);
	assert_true(found);
	config_errors_free(&e);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("sinks:\n  - kind: file\n    path: /x\n", "needs a name");
	expect_error("sinks:\n  - name: a b\n    kind: file\n    path: /x\n", "needs a name");
	expect_error("sinks:\n  - name: a\n    kind: file\n", "needs an absolute path");
	expect_error("sinks:\n  - name: a\n    kind: syslog_tcp\n", "needs an address");
	expect_error("sinks:\n  - name: a\n    kind: syslog_tcp\n    address: host:514\n",
		     "t.yaml:4");
	expect_error("sinks:\n  - name: a\n    kind: stdout\n  - name: a\n    kind: stdout\n",
		     "two sinks are named a");
	expect_error("sinks:\n  - name: a\n    kind: kafka\n", "t.yaml:3");
	expect_error("sinks:\n  - name: a\n    kind: stdout\n    events: [\"NET;\"]\n",
		     "expected an event type");
	expect_error("sinks:\n  - name: a\n    kind: stdout\n    retry_min: 5s\n    retry_max: 1s\n",
		     "retry_min is above retry_max");
	expect_error("index:\n  colour: red\n", "t.yaml:2");
	expect_error("sinks:\n  - name: a\n    kind: hec\n", "kind hec needs a url");
	expect_error("sinks:\n  - name: a\n    kind: otlp_http\n    url: ftp://x\n",
		     "expected an http:// or https:// URL");
	expect_error("sinks:\n  - name: a\n    kind: file\n    path: /x\n    format: cef\n",
		     "t.yaml:5");
	expect_error("retention:\n  hot: 10d\n  cold: 1d\n", "hot is longer than cold");
	expect_error("sinks: {}\n", "t.yaml:1");
	expect_error("sinks:\n  - name: a\n    kind: syslog_tls\n", "kind syslog_tls needs an address");
	expect_error("sinks:\n  - name: a\n    kind: syslog_tls\n    address: 198.18.7.10:6514\n"
		     "    cert_file: /c.pem\n", "cert_file and key_file go together");
	expect_error("sinks:\n  - name: a\n    kind: syslog_tls\n    address: 198.18.7.10:6514\n"
		     "    ca_file: ca.pem\n", "expected an absolute path");
	expect_error("sinks:\n  - name: a\n    kind: syslog_tls\n    address: 198.18.7.10:6514\n"
		     "    server_name: \"a b\"\n", "expected a DNS name");
	expect_error("sinks:\n  - name: a\n    kind: stdout\n    verbosity: loud\n", "t.yaml:4");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
