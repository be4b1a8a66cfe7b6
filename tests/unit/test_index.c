/*
 * The index's pure parts: line -> row extraction (hostile shapes included) and the
 * query -> SQL builder (fixed fragments only; every value a bound parameter).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "journal/envelope.h"
#include "index/index.h"
#include "index/index_query.h"

#define PREV "\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\""
#define HEAD(seq, ev) "{\"ts\":\"2026-06-29T10:04:00.123456Z\",\"seq\":" #seq "," PREV \
		      ",\"event\":\"" ev "\",\"host\":\"h\""

static int extract(const char *line, struct index_row *r)
{
	return index_extract(line, strlen(line), r);
}

static void test_exec_row(void **state)
{
	struct index_row r;

	(void)state;
	assert_int_equal(extract(HEAD(7, "process.exec") ",\"session_id\":\"s1\","
				 "\"source\":\"kernel\",\"pid\":10,\"ppid\":1,\"uid\":0,"
				 "\"euid\":0,\"exe\":\"/bin/sh\",\"reason\":null}", &r), 0);
	assert_int_equal(r.seq, 7);
	assert_int_equal(r.ts_us, 1782727440123456LL);
	assert_string_equal(r.event, "process.exec");
	assert_string_equal(r.session_id, "s1");
	assert_true(r.has_pid && r.pid == 10 && r.has_ppid && r.ppid == 1);
	assert_true(r.has_uid && r.uid == 0 && r.has_euid);
	assert_null(r.reason);
	assert_int_equal(r.n_names, 1);
	assert_int_equal(r.names[0].kind, INDEX_NAME_PATH);
	assert_string_equal(r.names[0].value, "/bin/sh");
	index_row_free(&r);
}

static void test_names_and_package(void **state)
{
	struct index_row r;

	(void)state;
	assert_int_equal(extract(HEAD(1, "net.dns") ",\"session_id\":null,\"source\":\"gateway\","
				 "\"qname\":\"WWW.Example.TEST.\",\"domain\":null}", &r), 0);
	assert_null(r.session_id);
	assert_int_equal(r.n_names, 1);
	assert_int_equal(r.names[0].kind, INDEX_NAME_DOMAIN);
	assert_string_equal(r.names[0].value, "www.example.test");
	index_row_free(&r);
	/* Before 2026-12 package.install repeated the envelope's "source" (now "registry"):
	 * such lines, in journals written then, are still indexed. */
	assert_int_equal(extract(HEAD(2, "package.install") ",\"session_id\":\"s\","
				 "\"source\":\"kernel\",\"name\":\"requests\",\"requested_version\":"
				 "\"2.31\",\"resolved_version\":null,\"source\":\"https://x\"}", &r), 0);
	assert_string_equal(r.pkg_name, "requests");
	assert_string_equal(r.pkg_version, "2.31");
	index_row_free(&r);
}

static void test_hostile_lines(void **state)
{
	static const char *const bad[] = {
		"", "{", "[]", "null", "{\"ts\":1}", HEAD(1, "x") "}}", HEAD(1, "x"),
		"{\"ts\":\"2026-13-29T10:04:00.123456Z\",\"seq\":1," PREV ",\"event\":\"x\"}",
		"{\"ts\":\"2026-06-29T10:04:00.123456Z\",\"seq\":-1," PREV ",\"event\":\"x\"}",
	};
	struct index_row r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(extract(bad[i], &r), -EINVAL);
		index_row_free(&r);
	}
	/* Wrong types are absent, not errors; \u0000 in a value is cut there. */
	assert_int_equal(extract(HEAD(3, "file.read") ",\"session_id\":5,\"pid\":\"10\","
				 "\"uid\":1.5,\"path\":\"/a\\u0000b\",\"new_path\":[\"x\"]}", &r), 0);
	assert_null(r.session_id);
	assert_false(r.has_pid);
	assert_false(r.has_uid);
	assert_int_equal(r.n_names, 1);
	assert_string_equal(r.names[0].value, "/a");
	index_row_free(&r);
}

static void test_sql_all_filters(void **state)
{
	struct index_query q = {
		.session = "s1' OR 1=1 --", .has_since = true, .since_us = 5, .has_until = true,
		.until_us = 9, .path = "/etc/*", .domain = "Example.TEST.", .pkg_name = "p",
		.pkg_version = "1", .reason = "oom", .has_uid = true, .uid = 0,
	};
	char list[] = "file.read,net.dns";
	struct index_sql s;

	(void)state;
	assert_int_equal(index_query_set_events(&q, list), 0);
	assert_int_equal(index_sql_build(&q, &s), 0);
	/* The value never reaches the SQL text. */
	assert_null(strstr(s.sql, "1=1"));
	assert_non_null(strstr(s.sql, "sid = (SELECT id FROM sessions WHERE session_id = ?)"));
	assert_non_null(strstr(s.sql, "eid IN (SELECT id FROM event_names WHERE event IN (?,?))"));
	assert_non_null(strstr(s.sql, "kind = 1 AND names.value >= ? AND names.value < ?"));
	assert_non_null(strstr(s.sql, "kind = 2 AND names.value = ?"));
	assert_non_null(strstr(s.sql, "(uid = ? OR (euid = ? AND euid IS NOT uid))"));
	assert_int_equal(s.n_params, 13);
	assert_string_equal(s.params[0].text, "s1' OR 1=1 --");
	assert_int_equal(s.params[1].i, 5);
	assert_string_equal(s.params[3].text, "file.read");
	assert_string_equal(s.params[5].text, "p");
	assert_string_equal(s.params[7].text, "oom");
	assert_int_equal(s.params[8].kind, INDEX_PARAM_INT);
	assert_int_equal(s.params[9].i, 0);
	assert_string_equal(s.params[10].text, "/etc/");
	assert_string_equal(s.params[11].text, "/etc/\xff");
	assert_string_equal(s.params[12].text, "example.test");
}

static void test_sql_domain_normalised(void **state)
{
	struct index_query q = { .domain = "Example.TEST." };
	struct index_sql s;

	(void)state;
	assert_int_equal(index_sql_build(&q, &s), 0);
	assert_int_equal(s.n_params, 1);
	assert_string_equal(s.params[0].text, "example.test");
	assert_string_equal(s.sql, "SELECT seq, segment, off, len FROM events WHERE 1 AND seq IN "
			    "(SELECT p.value FROM names, json_each(names.seqs) AS p"
			    " WHERE kind = 2 AND names.value = ?)"
			    " AND segment NOT IN (SELECT segment FROM cold) ORDER BY seq");
}

static void test_arg_parsers(void **state)
{
	struct index_query q = { 0 };
	char scoped[] = "@scope/pkg@1.0", plain[] = "requests", empty[] = "@", bad1[] = "a,,b",
	     bad2[] = ",a";
	char big[INDEX_QUERY_MAX_EVENTS * 2 + 8];

	(void)state;
	assert_int_equal(index_query_set_package(&q, scoped), 0);
	assert_string_equal(q.pkg_name, "@scope/pkg");
	assert_string_equal(q.pkg_version, "1.0");
	q = (struct index_query){ 0 };
	assert_int_equal(index_query_set_package(&q, plain), 0);
	assert_null(q.pkg_version);
	assert_int_equal(index_query_set_package(&q, empty), 0);   /* "@" is a name */
	assert_int_equal(index_query_set_events(&q, bad1), -EINVAL);
	assert_int_equal(index_query_set_events(&q, bad2), -EINVAL);
	q = (struct index_query){ 0 };
	memset(big, 0, sizeof(big));
	for (size_t i = 0; i < INDEX_QUERY_MAX_EVENTS + 1; i++)
		strcat(big, i ? ",e" : "e");
	assert_int_equal(index_query_set_events(&q, big), -E2BIG);
}

static void test_parse_ts(void **state)
{
	int64_t us;

	(void)state;
	assert_int_equal(line_ts_parse("1970-01-01T00:00:01.000002Z", 27, &us), 0);
	assert_int_equal(us, 1000002);
	assert_int_equal(line_ts_parse("1970-01-01T00:00:01.00000Z", 26, &us), -EINVAL);
	assert_int_equal(line_ts_parse("1970-01-01 00:00:01.000002Z", 27, &us), -EINVAL);
	assert_int_equal(line_ts_parse("1970-01-01T24:00:01.000002Z", 27, &us), -EINVAL);
	assert_int_equal(line_ts_parse("1970-01-01T00:00:01.00000xZ", 27, &us), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_row),
		cmocka_unit_test(test_names_and_package),
		cmocka_unit_test(test_hostile_lines),
		cmocka_unit_test(test_sql_all_filters),
		cmocka_unit_test(test_sql_domain_normalised),
		cmocka_unit_test(test_arg_parsers),
		cmocka_unit_test(test_parse_ts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
