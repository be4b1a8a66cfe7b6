/* Lowercase hex (common/hex.h) against RFC 4648's base16 vectors (section 10). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#include <cmocka.h>

#include "common/hex.h"

/* RFC 4648 section 10, BASE16, written in the lowercase the journal uses. */
static const struct { const char *in, *hex; } rfc4648[] = {
	{ "", "" }, { "f", "66" }, { "fo", "666f" }, { "foo", "666f6f" },
	{ "foob", "666f6f62" }, { "fooba", "666f6f6261" }, { "foobar", "666f6f626172" },
};

static void encode_rfc4648(void **state)
{
	char out[16];

	(void)state;
	for (size_t i = 0; i < sizeof(rfc4648) / sizeof(rfc4648[0]); i++) {
		memset(out, 'x', sizeof(out));
		hex_encode((const uint8_t *)rfc4648[i].in, strlen(rfc4648[i].in), out);
		assert_string_equal(out, rfc4648[i].hex);
	}
}

static void decode_rfc4648(void **state)
{
	uint8_t out[8];

	(void)state;
	for (size_t i = 0; i < sizeof(rfc4648) / sizeof(rfc4648[0]); i++) {
		size_t n = strlen(rfc4648[i].in);

		assert_int_equal(hex_decode(rfc4648[i].hex, 2 * n, out, n), 0);
		assert_memory_equal(out, rfc4648[i].in, n);
	}
}

static void every_nibble(void **state)
{
	static const uint8_t bytes[] = { 0x00, 0xff, 0x0f, 0xf0, 0x12, 0x34, 0x56, 0x78,
					 0x9a, 0xbc, 0xde };
	uint8_t back[sizeof(bytes)];
	char out[2 * sizeof(bytes) + 1];

	(void)state;
	hex_encode(bytes, sizeof(bytes), out);
	assert_string_equal(out, "00ff0ff0123456789abcde");
	assert_int_equal(hex_decode(out, strlen(out), back, sizeof(back)), 0);
	assert_memory_equal(back, bytes, sizeof(bytes));
	for (int c = 0; c < 256; c++) {
		int want = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		assert_int_equal(hex_digit((char)c), want);
	}
}

/* Only the canonical form: exact length, lowercase, digits only. */
static void decode_refuses(void **state)
{
	uint8_t out[3];

	(void)state;
	assert_int_equal(hex_decode("666F6F", 6, out, 3), -EINVAL);
	assert_int_equal(hex_decode("666f6", 5, out, 3), -EINVAL);
	assert_int_equal(hex_decode("666f6f00", 8, out, 3), -EINVAL);
	assert_int_equal(hex_decode("66 f6f", 6, out, 3), -EINVAL);
	assert_int_equal(hex_decode("0x6f6f", 6, out, 3), -EINVAL);
	assert_int_equal(hex_decode("66g66f", 6, out, 3), -EINVAL);
	assert_int_equal(hex_decode("+f6f6f", 6, out, 3), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(encode_rfc4648),
		cmocka_unit_test(decode_rfc4648),
		cmocka_unit_test(every_nibble),
		cmocka_unit_test(decode_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
