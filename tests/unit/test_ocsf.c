/* OCSF 1.8 rendering (sinks/ocsf.h): class, activity, type, key objects, raw_data. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "sinks/ocsf.h"

#define PREV "\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\""
#define HEAD(ev) "{\"ts\":\"2026-06-29T10:04:00.123456Z\",\"seq\":9," PREV ",\"event\":\"" ev \
		 "\",\"host\":\"h1\",\"session_id\":\"s1\",\"source\":\"kernel\""

static json_t *render(const char *line)
{
	struct buf b;
	json_t *o;

	buf_init(&b);
	assert_int_equal(ocsf_render(&b, line, strlen(line)), 0);
	o = json_loadb(b.data, b.len, 0, NULL);
	buf_free(&b);
	assert_non_null(o);
	/* The native line rides along, intact, for the hash chain. */
	assert_string_equal(json_string_value(json_object_get(o, "raw_data")), line);
	return o;
}

static const char *str_at(json_t *o, const char *a, const char *b)
{
	return json_string_value(json_object_get(b ? json_object_get(o, a) : o, b ? b : a));
}

static int64_t int_at(json_t *o, const char *a)
{
	return json_integer_value(json_object_get(o, a));
}

static void test_process(void **state)
{
	json_t *o = render(HEAD("process.exec") ",\"pid\":10,\"ppid\":1,\"uid\":0,\"euid\":0,"
			   "\"cwd\":\"/\",\"exe\":\"/bin/sh\",\"cmd\":\"sh\",\"args\":[\"-c\"]}");

	(void)state;
	assert_int_equal(int_at(o, "class_uid"), 1007);
	assert_int_equal(int_at(o, "category_uid"), 1);
	assert_int_equal(int_at(o, "type_uid"), 100701);
	assert_int_equal(int_at(o, "time"), 1782727440123LL);
	assert_string_equal(str_at(json_object_get(o, "process"), "file", "path"), "/bin/sh");
	assert_string_equal(str_at(o, "metadata", "version"), "1.8.0");
	assert_string_equal(str_at(json_object_get(o, "actor"), "session", "uid"), "s1");
	assert_string_equal(str_at(json_object_get(o, "actor"), "user", "uid"), "0");
	assert_string_equal(str_at(o, "unmapped", "cmd"), "sh");
	json_decref(o);
}

static void test_network_and_dns(void **state)
{
	json_t *o = render(HEAD("net.connect") ",\"proto\":\"tcp\",\"src\":{\"ip\":\"198.18.0.2\","
			   "\"port\":4000},\"dst\":{\"ip\":\"198.18.2.20\",\"port\":443},"
			   "\"domain\":\"evil.test\",\"sni\":\"evil.test\",\"verdict\":\"blocked\"}");

	(void)state;
	assert_int_equal(int_at(o, "class_uid"), 4001);
	assert_int_equal(int_at(o, "activity_id"), 5);
	assert_int_equal(int_at(o, "type_uid"), 400105);
	assert_int_equal(int_at(o, "disposition_id"), 2);
	assert_string_equal(str_at(o, "dst_endpoint", "hostname"), "evil.test");
	assert_string_equal(str_at(o, "tls", "sni"), "evil.test");
	json_decref(o);
	o = render(HEAD("net.dns") ",\"qname\":\"a.test\",\"qtype\":\"A\",\"rcode\":\"NOERROR\","
		   "\"answers\":[{\"type\":\"A\",\"data\":\"198.18.0.9\",\"ttl\":60}],"
		   "\"verdict\":\"allowed\"}");
	assert_int_equal(int_at(o, "class_uid"), 4003);
	assert_string_equal(str_at(o, "query", "hostname"), "a.test");
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(o, "answers"), 0), "rdata")), "198.18.0.9");
	assert_int_equal(int_at(o, "disposition_id"), 1);
	json_decref(o);
}

static void test_other_classes(void **state)
{
	json_t *o = render(HEAD("alert") ",\"rule\":\"r1\",\"severity\":\"high\","
			   "\"summary\":\"bad\",\"refs\":[1,2]}");

	(void)state;
	assert_int_equal(int_at(o, "class_uid"), 2004);
	assert_int_equal(int_at(o, "severity_id"), 4);
	assert_string_equal(str_at(o, "finding_info", "title"), "bad");
	json_decref(o);
	o = render(HEAD("package.install") ",\"manager\":\"pip\",\"name\":\"requests\","
		   "\"resolved_version\":\"2.31.0\",\"registry\":\"https://pypi.org/simple\"}");
	assert_int_equal(int_at(o, "class_uid"), 6002);
	assert_string_equal(str_at(o, "app", "version"), "2.31.0");
	/* The observer is the log provider; the registry is kept (app and unmapped). */
	assert_string_equal(str_at(o, "metadata", "log_provider"), "kernel");
	assert_string_equal(str_at(json_object_get(o, "metadata"), "product", "name"), "sandgate");
	assert_string_equal(str_at(o, "app", "url_string"), "https://pypi.org/simple");
	assert_string_equal(str_at(o, "unmapped", "registry"), "https://pypi.org/simple");
	json_decref(o);
	/* A line written before 2026-12 repeated "source": the first is the observer. */
	o = render(HEAD("package.install") ",\"manager\":\"pip\",\"name\":\"requests\","
		   "\"source\":\"https://pypi.org/simple\"}");
	assert_string_equal(str_at(o, "metadata", "log_provider"), "kernel");
	assert_string_equal(str_at(o, "unmapped", "registry"), "https://pypi.org/simple");
	assert_null(json_object_get(json_object_get(o, "unmapped"), "source"));
	json_decref(o);
	o = render(HEAD("file.mount") ",\"target\":\"/mnt\",\"source\":\"tmpfs\","
		   "\"fstype\":\"tmpfs\",\"pid\":null}");
	assert_string_equal(str_at(o, "metadata", "log_provider"), "kernel");
	assert_string_equal(str_at(o, "unmapped", "device"), "tmpfs");
	assert_string_equal(str_at(o, "file", "path"), "/mnt");
	json_decref(o);
	o = render(HEAD("file.rename") ",\"path\":\"/a\",\"new_path\":\"/b\",\"pid\":1,\"uid\":5}");
	assert_int_equal(int_at(o, "type_uid"), 100105);
	assert_string_equal(str_at(o, "file_result", "path"), "/b");
	json_decref(o);
	o = render(HEAD("journal.heartbeat") ",\"next_seq\":10}");
	assert_int_equal(int_at(o, "class_uid"), 1008);
	assert_int_equal(int_at(o, "type_uid"), 100899);
	assert_string_equal(str_at(o, "log_name", NULL), "journal");
	json_decref(o);
	o = render(HEAD("x.unknown") ",\"a\":1}");
	assert_int_equal(int_at(o, "class_uid"), 0);
	assert_int_equal(int_at(o, "type_uid"), 99);
	json_decref(o);
}

/* Every type sandgate writes has a class of its own (none falls to Base Event). */
static void test_every_type(void **state)
{
	static const struct { const char *ev; int cls, act; } want[] = {
		{ "process.uid_change", 1007, 5 }, { "session.attach", 6002, 99 },
		{ "session.adopt", 6002, 99 }, { "daemon.start", 6002, 3 },
		{ "daemon.stop", 6002, 4 }, { "daemon.reload", 6002, 99 },
		{ "gateway.start", 6002, 3 }, { "model.summary", 6003, 99 },
		{ "detail.read", 6003, 2 }, { "control.denied", 3002, 1 },
		{ "journal.open", 1008, 6 }, { "journal.segment", 1008, 5 },
		{ "journal.checkpoint", 1008, 99 }, { "journal.recovery", 1008, 99 },
		{ "journal.disk_full", 1008, 99 }, { "retention.archive", 1008, 4 },
		{ "retention.purge", 1008, 2 }, { "sensor.loss", 1008, 99 },
	};
	char line[512];

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		json_t *o;

		snprintf(line, sizeof(line), HEAD("%s") ",\"uid\":7,\"reason\":\"r\","
			 "\"segment\":\"00000000000000000010.jsonl\",\"version\":\"0.1\"}",
			 want[i].ev);
		o = render(line);
		assert_int_equal(int_at(o, "class_uid"), want[i].cls);
		assert_int_equal(int_at(o, "activity_id"), want[i].act);
		assert_int_equal(int_at(o, "type_uid"), want[i].cls * 100 + want[i].act);
		if (want[i].cls == 3002) {
			assert_int_equal(int_at(o, "status_id"), 2);
			assert_string_equal(str_at(o, "user", "uid"), "7");
		}
		if (want[i].cls == 1008)
			assert_string_equal(str_at(o, "file", "name"), "00000000000000000010.jsonl");
		if (strncmp(want[i].ev, "daemon.", 7) == 0)
			assert_string_equal(str_at(o, "app", "name"), "sandgated");
		json_decref(o);
	}
}

static void test_not_a_line(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(ocsf_render(&b, "{}", 2), -EINVAL);
	assert_int_equal(ocsf_render(&b, HEAD("x"), strlen(HEAD("x"))), -EINVAL);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_network_and_dns),
		cmocka_unit_test(test_other_classes),
		cmocka_unit_test(test_every_type),
		cmocka_unit_test(test_not_a_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
