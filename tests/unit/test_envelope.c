/*
 * The one reader of journal lines (journal/envelope.h): the seq, the envelope at its
 * fixed places, the strict envelope and the line as a JSON object, on the same lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "journal/envelope.h"

#define PREV "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define TS "2026-06-29T10:04:00.123456Z"

static const char ok[] = "{\"ts\":\"" TS "\",\"seq\":17,\"prev\":\"" PREV "\","
			 "\"event\":\"net.dns\",\"host\":\"h\"}";

/* Copies ok with one byte changed at `at`. */
static void with(char *line, size_t at, char c)
{
	memcpy(line, ok, sizeof(ok));
	line[at] = c;
}

static void all_readers_agree(void **state)
{
	struct line_envelope lax, strict;
	uint64_t seq = 0;
	json_t *o = NULL;

	(void)state;
	assert_int_equal(line_envelope_seq(ok, strlen(ok), &seq), 0);
	assert_int_equal(line_envelope_parse(ok, strlen(ok), &lax), 0);
	assert_int_equal(line_envelope_parse_strict(ok, strlen(ok), &strict), 0);
	assert_int_equal(seq, 17);
	assert_int_equal(lax.seq, 17);
	assert_int_equal(strict.seq, 17);
	assert_ptr_equal(lax.ts, ok + 7);
	assert_ptr_equal(strict.ts, ok + 7);
	assert_ptr_equal(lax.prev, strict.prev);
	assert_memory_equal(lax.prev, PREV, 64);
	assert_int_equal(strict.prev_hash[0], 0x00);
	assert_int_equal(strict.prev_hash[31], 0xff);
	assert_int_equal(lax.event_len, 7);
	assert_memory_equal(lax.event, "net.dns", 7);
	assert_ptr_equal(lax.event, strict.event);
	assert_int_equal(lax.event_len, strict.event_len);
	assert_int_equal(line_json_load(ok, strlen(ok), &o), 0);
	assert_string_equal(json_string_value(json_object_get(o, "host")), "h");
	json_decref(o);
}

/* What only the strict reader refuses: bytes the writer never writes. */
static void strict_only(void **state)
{
	struct line_envelope env;
	char line[sizeof(ok)];
	size_t prev_at = strlen("{\"ts\":\"" TS "\",\"seq\":17,\"prev\":\"");

	(void)state;
	with(line, 7, 'x');                            /* ts not of the RFC 3339 shape */
	assert_int_equal(line_envelope_parse(line, strlen(line), &env), 0);
	assert_int_equal(line_envelope_parse_strict(line, strlen(line), &env), -EINVAL);
	with(line, prev_at, 'A');                      /* uppercase hex in prev */
	assert_int_equal(line_envelope_parse(line, strlen(line), &env), 0);
	assert_int_equal(line_envelope_parse_strict(line, strlen(line), &env), -EINVAL);
	with(line, prev_at + 63, 'g');                 /* not hex at all */
	assert_int_equal(line_envelope_parse(line, strlen(line), &env), 0);
	assert_int_equal(line_envelope_parse_strict(line, strlen(line), &env), -EINVAL);
	with(line, 42, '0');                           /* "seq":07: a leading zero */
	assert_int_equal(line_envelope_parse(line, strlen(line), &env), 0);
	assert_int_equal(env.seq, 7);
	assert_int_equal(line_envelope_parse_strict(line, strlen(line), &env), -EINVAL);
	assert_int_equal(line_envelope_parse(ok, strlen(ok) - 1, &env), 0);   /* no '}' */
	assert_int_equal(line_envelope_parse_strict(ok, strlen(ok) - 1, &env), -EINVAL);
	with(line, prev_at + 64 + 11, 'N');            /* "event":"Net.dns" */
	assert_int_equal(line_envelope_parse(line, strlen(line), &env), 0);
	assert_int_equal(line_envelope_parse_strict(line, strlen(line), &env), -EINVAL);
}

/* What every reader refuses: no envelope at its places. */
static void all_refuse(void **state)
{
	static const char *bad[] = {
		"{}",
		"{\"seq\":1,\"ts\":\"" TS "\",\"prev\":\"" PREV "\",\"event\":\"x\"}",
		"{\"ts\":\"" TS "\",\"seq\":,\"prev\":\"" PREV "\",\"event\":\"x\"}",
		"{\"ts\":\"" TS "\",\"seq\":18446744073709551616,\"prev\":\"" PREV
		"\",\"event\":\"x\"}",
		"{\"ts\":\"" TS "\",\"seq\":1,\"prev\":\"" PREV "\",\"event\":\"\"}",
		"{\"ts\":\"" TS "\",\"seq\":1,\"prev\":\"0011\",\"event\":\"x\"}",
		"{\"ts\":\"" TS "\",\"seq\":1,\"prev\":\"" PREV "\",\"event\":\"x",
		"{\"ts\":\"2026",
	};
	struct line_envelope env;
	uint64_t seq;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(line_envelope_parse(bad[i], strlen(bad[i]), &env), -EINVAL);
		assert_int_equal(line_envelope_parse_strict(bad[i], strlen(bad[i]), &env),
				 -EINVAL);
	}
	/* The seq reader stops after the digits: a line cut there still has its seq. */
	assert_int_equal(line_envelope_seq(bad[4], strlen(bad[4]), &seq), 0);
	assert_int_equal(seq, 1);
	assert_int_equal(line_envelope_seq(bad[3], strlen(bad[3]), &seq), -EINVAL);
	assert_int_equal(line_envelope_seq(bad[1], strlen(bad[1]), &seq), -EINVAL);
	assert_int_equal(line_envelope_seq(bad[7], strlen(bad[7]), &seq), -EINVAL);
}

/*
 * The one place the fixed-place readers are the narrower: they stop at 19 digits, the
 * strict one takes any seq up to 2^64 - 1. No journal comes near 10^19 lines.
 */
static void twenty_digits(void **state)
{
	static const char l[] = "{\"ts\":\"" TS "\",\"seq\":18446744073709551615,\"prev\":\""
				PREV "\",\"event\":\"x\"}";
	struct line_envelope env;
	uint64_t seq;

	(void)state;
	assert_int_equal(line_envelope_seq(l, strlen(l), &seq), -EINVAL);
	assert_int_equal(line_envelope_parse(l, strlen(l), &env), -EINVAL);
	assert_int_equal(line_envelope_parse_strict(l, strlen(l), &env), 0);
	assert_true(env.seq == UINT64_MAX);
}

/* The body: NUL escapes allowed, a repeated key's last value kept, objects only. */
static void json_body(void **state)
{
	static const char dup[] = "{\"ts\":\"" TS "\",\"source\":\"a\",\"source\":\"b\","
				  "\"v\":\"x\\u0000y\"}";
	json_t *o = NULL;

	(void)state;
	assert_int_equal(line_json_load(dup, strlen(dup), &o), 0);
	assert_string_equal(json_string_value(json_object_get(o, "source")), "b");
	assert_int_equal(json_string_length(json_object_get(o, "v")), 3);
	json_decref(o);
	o = NULL;
	assert_int_equal(line_json_load("[1]", 3, &o), -EINVAL);
	assert_null(o);
	assert_int_equal(line_json_load("{\"a\":", 5, &o), -EINVAL);
	assert_null(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(all_readers_agree),
		cmocka_unit_test(strict_only),
		cmocka_unit_test(all_refuse),
		cmocka_unit_test(twenty_digits),
		cmocka_unit_test(json_body),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
