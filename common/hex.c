/* Lowercase hex (common/hex.h). */
#include <errno.h>

#include "common/hex.h"

const char hex_digits[17] = "0123456789abcdef";

int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int hex_digit_any(char c)
{
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return hex_digit(c);
}

void hex_encode(const uint8_t *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex_digits[in[i] >> 4];
		out[2 * i + 1] = hex_digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

int hex_decode(const char *s, size_t slen, uint8_t *out, size_t n)
{
	if (slen != 2 * n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
