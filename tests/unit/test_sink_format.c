/*
 * The sinks' pure parts: the fixed-place envelope, filters, RFC 5424/6587 framing, and
 * the Splunk HEC and OTLP/HTTP JSON bodies.
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

#include "journal/envelope.h"
#include "sinks/sink.h"

#define PREV "\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\""
#define LINE(ev) "{\"ts\":\"2026-06-29T10:04:00.123456Z\",\"seq\":42," PREV \
		 ",\"event\":\"" ev "\",\"host\":\"h\",\"session_id\":null,\"source\":\"sandgate\"}"

static void test_envelope(void **state)
{
	static const char line[] = LINE("net.dns");
	static const char *const bad[] = {
		"", "{\"ts\":\"2026-06-29T10:04:00.123456Z\",\"seq\":x",
		"{\"ts\":\"2026-06-29T10:04:00.123456Z\",\"seq\":1,\"prev\":\"00\",\"event\":\"x\"}",
		"{\"ts\":\"2026-06-29T10:04:00.123456Z\",\"seq\":1," PREV ",\"event\":\"\"}",
		"{\"ts\":\"2026-06-29T10:04:00.123456Z\",\"seq\":1," PREV ",\"event\":\"abc",
		"{\"ts\":\"2026-06-29T10:04:00.123456Z\",\"seq\":123456789012345678901," PREV
		",\"event\":\"x\"}",
	};
	struct line_envelope e;

	(void)state;
	assert_int_equal(line_envelope_parse(line, strlen(line), &e), 0);
	assert_int_equal(e.seq, 42);
	assert_memory_equal(e.ts, "2026-06-29T10:04:00.123456Z", 27);
	assert_int_equal(e.event_len, 7);
	assert_memory_equal(e.event, "net.dns", 7);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(line_envelope_parse(bad[i], strlen(bad[i]), &e), -EINVAL);
}

static void test_filters(void **state)
{
	char f1[] = "net.*", f2[] = "process.exec";
	char *filters[] = { f1, f2 };

	(void)state;
	assert_true(sink_filter_pass(NULL, 0, "x", 1));
	assert_true(sink_filter_pass(filters, 2, "net.dns", 7));
	assert_true(sink_filter_pass(filters, 2, "process.exec", 12));
	assert_false(sink_filter_pass(filters, 2, "process.exit", 12));
	assert_false(sink_filter_pass(filters, 2, "netx", 4));
	assert_true(sink_filter_pass(filters, 2, "journal.checkpoint", 18));
}

#define PASS(v, ev, line) sink_verbosity_pass(v, ev, strlen(ev), line, strlen(line))

static void test_verbosity(void **state)
{
	static const char allowed[] = LINE("net.connect") ",\"verdict\":\"allowed\"}";
	static const char blocked[] = "{\"x\":1,\"verdict\":\"blocked\",\"reason\":\"policy\"}";
	static const char quoted[] = "{\"cmd\":\"echo \\\"verdict\\\":\\\"blocked\\\"\"}";
	enum sink_verbosity full = SINK_VERBOSITY_FULL, sum = SINK_VERBOSITY_SUMMARY,
			    min = SINK_VERBOSITY_MINIMAL;

	(void)state;
	assert_true(PASS(full, "net.flow", allowed));
	assert_true(PASS(full, "journal.heartbeat", ""));
	assert_false(PASS(sum, "net.flow", allowed));
	assert_false(PASS(sum, "journal.heartbeat", ""));
	assert_true(PASS(sum, "process.exec", ""));
	assert_true(PASS(sum, "file.read", ""));
	assert_true(PASS(sum, "net.dns", allowed));
	assert_true(PASS(sum, "some.new_type", ""));
	assert_true(PASS(sum, "alert", ""));
	assert_false(PASS(min, "process.exec", ""));
	assert_false(PASS(min, "net.connect", allowed));
	assert_false(PASS(min, "some.new_type", ""));
	assert_true(PASS(min, "net.connect", blocked));
	assert_true(PASS(min, "net.flow", blocked));
	assert_false(PASS(min, "process.exec", quoted));   /* only net.* looks at verdict */
	assert_false(PASS(min, "net.connect", quoted));    /* escaped: not the key */
	assert_true(PASS(min, "alert", ""));
	assert_true(PASS(min, "sensor.loss", ""));
	assert_true(PASS(min, "session.terminate", ""));
	assert_false(PASS(min, "session", ""));
	assert_true(PASS(min, "daemon.start", ""));
	assert_true(PASS(min, "retention.purge", ""));
	assert_true(PASS(min, "journal.checkpoint", ""));
	assert_false(PASS(min, "journal.heartbeat", ""));
	assert_true(PASS(min, "package.install", ""));
}

static void test_syslog_frame(void **state)
{
	static const char line[] = LINE("alert");
	static const char want_msg[] =
		"<132>1 2026-06-29T10:04:00.123456Z host1- sandgate - alert - " LINE("alert");
	struct buf b;
	char want[1024];

	(void)state;
	buf_init(&b);
	assert_int_equal(sink_syslog_frame(&b, "host 1\n-", line, strlen(line), line,
					   strlen(line)), 0);
	snprintf(want, sizeof(want), "%zu %s", strlen(want_msg), want_msg);
	/* Spaces and control bytes are dropped from HOSTNAME: it must be one token. */
	buf_putc(&b, '\0');
	assert_string_equal(b.data, want);
	buf_reset(&b);
	assert_int_equal(sink_syslog_frame(&b, "", "{}", 2, "{}", 2), -EINVAL);
	assert_int_equal(b.len, 0);
	assert_int_equal(sink_syslog_frame(&b, "", LINE("net.dns"), strlen(LINE("net.dns")),
					   "x", 1), 0);
	buf_putc(&b, '\0');
	assert_non_null(strstr(b.data, "<134>1 2026-06-29T10:04:00.123456Z - sandgate - net.dns - x"));
	buf_free(&b);
}

static void test_hec_and_otlp(void **state)
{
	static const char line[] = LINE("alert");
	struct buf b, w;

	(void)state;
	buf_init(&b);
	assert_int_equal(sink_hec_event(&b, "h\"1", line, strlen(line), line, strlen(line),
					false), 0);
	buf_putc(&b, '\0');
	assert_string_equal(b.data, "{\"time\":1782727440.123456,\"host\":\"h\\\"1\","
			    "\"source\":\"sandgate\",\"sourcetype\":\"sandgate:journal\","
			    "\"event\":" LINE("alert") "}");
	buf_reset(&b);
	assert_int_equal(sink_hec_event(&b, "h", "{}", 2, "{}", 2, true), -EINVAL);
	assert_int_equal(sink_otlp_record(&b, line, strlen(line), "x\"y", 3, true), 0);
	assert_int_equal(sink_otlp_record(&b, line, strlen(line), "z", 1, false), 0);
	buf_init(&w);
	sink_otlp_wrap(&w, "h", b.data, b.len);
	buf_putc(&w, '\0');
	assert_non_null(strstr(w.data, "{\"resourceLogs\":[{\"resource\":{\"attributes\":["
				   "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"sandgate\"}}"));
	assert_non_null(strstr(w.data, "\"logRecords\":[{\"timeUnixNano\":\"1782727440123456000\","
				   "\"severityNumber\":13,\"severityText\":\"WARN\",\"body\":"
				   "{\"stringValue\":\"x\\\"y\"},\"attributes\":[{\"key\":\"event\","
				   "\"value\":{\"stringValue\":\"alert\"}},{\"key\":\"seq\",\"value\":"
				   "{\"intValue\":\"42\"}}]},{\"timeUnixNano\""));
	assert_non_null(strstr(w.data, "]}]}]}"));
	buf_free(&w);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_verbosity),
		cmocka_unit_test(test_syslog_frame),
		cmocka_unit_test(test_hec_and_otlp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
