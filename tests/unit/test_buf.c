/* The JSON string encoder: escapes, UTF-8 validity, and U+FFFD substitution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/buf.h"

#define R "\xEF\xBF\xBD"   /* U+FFFD in UTF-8 */

static void expect_json(const char *in, size_t n, const char *want)
{
	struct buf b;

	buf_init(&b);
	buf_put_json_str(&b, in, n);
	assert_false(b.oom);
	buf_putc(&b, '\0');
	assert_string_equal(b.data, want);
	buf_free(&b);
}

static void test_plain_and_escapes(void **state)
{
	(void)state;
	expect_json("abc", 3, "\"abc\"");
	expect_json("", 0, "\"\"");
	expect_json("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
	expect_json("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
	expect_json("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"");
	expect_json("a\0b", 3, "\"a\\u0000b\"");
	expect_json("/", 1, "\"/\"");
}

static void test_valid_utf8_kept(void **state)
{
	(void)state;
	expect_json("\xc3\xa9", 2, "\"\xc3\xa9\"");                 /* é */
	expect_json("\xe2\x82\xac", 3, "\"\xe2\x82\xac\"");         /* € */
	expect_json("\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\""); /* 😀 */
	expect_json("\xf4\x8f\xbf\xbf", 4, "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF */
	expect_json("\xed\x9f\xbf", 3, "\"\xed\x9f\xbf\"");         /* U+D7FF */
}

/* The Unicode Standard, chapter 3.9, Table 3-8: "U+FFFD for maximal subparts". */
static void test_unicode_table_3_8(void **state)
{
	static const char in[] = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";

	(void)state;
	expect_json(in, sizeof(in) - 1, "\"a" R R R "b" R "c" R R "d\"");
}

static void test_invalid_forms(void **state)
{
	(void)state;
	expect_json("\xc0\xaf", 2, "\"" R R "\"");             /* overlong '/' */
	expect_json("\xe0\x80\xaf", 3, "\"" R R R "\"");       /* overlong, 3 bytes */
	expect_json("\xed\xa0\x80", 3, "\"" R R R "\"");       /* surrogate U+D800 */
	expect_json("\xf4\x90\x80\x80", 4, "\"" R R R R "\""); /* above U+10FFFF */
	expect_json("\xf5\x80", 2, "\"" R R "\"");             /* F5 never valid */
	expect_json("\xe2\x82", 2, "\"" R "\"");               /* truncated at the end */
	expect_json("\xff", 1, "\"" R "\"");
	expect_json("\xe2\x82x", 3, "\"" R "x\"");
}

/* Any bytes at all: one valid JSON string, on one line, decoding to valid UTF-8. */
static void test_random_bytes_always_valid(void **state)
{
	unsigned seed = 12345;
	int round;

	(void)state;
	for (round = 0; round < 20000; round++) {
		unsigned char in[64];
		size_t n = (size_t)(rand_r(&seed) % 64), i;
		struct buf b;
		json_t *v;

		for (i = 0; i < n; i++)
			in[i] = (unsigned char)rand_r(&seed);
		buf_init(&b);
		buf_put_json_str(&b, (const char *)in, n);
		assert_false(b.oom);
		assert_null(memchr(b.data, '\n', b.len));
		/* JSON_ALLOW_NUL: \u0000 is valid JSON; jansson refuses it by default. */
		v = json_loadb(b.data, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
		assert_non_null(v);
		assert_true(json_is_string(v));
		json_decref(v);
		buf_free(&b);
	}
}

static void test_numbers_and_hex(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b);
	buf_put_u64(&b, 0);
	buf_putc(&b, ' ');
	buf_put_u64(&b, UINT64_MAX);
	buf_putc(&b, ' ');
	buf_put_i64(&b, INT64_MIN);
	buf_putc(&b, ' ');
	buf_put_hex(&b, (const uint8_t *)"\x00\xff\x10", 3);
	buf_putc(&b, '\0');
	assert_string_equal(b.data, "0 18446744073709551615 -9223372036854775808 00ff10");
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_and_escapes),
		cmocka_unit_test(test_valid_utf8_kept),
		cmocka_unit_test(test_unicode_table_3_8),
		cmocka_unit_test(test_invalid_forms),
		cmocka_unit_test(test_random_bytes_always_valid),
		cmocka_unit_test(test_numbers_and_hex),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
