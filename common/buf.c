#include "common/buf.h"
#include "common/hex.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b)
{
	memset(b, 0, sizeof(*b));
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->oom = false;
}

bool buf_grow(struct buf *b, size_t extra)
{
	size_t want;
	char *p;

	if (b->oom)
		return false;
	if (extra <= b->cap - b->len)
		return true;
	want = b->cap ? b->cap : 512;
	while (want - b->len < extra) {
		if (want > SIZE_MAX / 2)
			goto fail;
		want *= 2;
	}
	p = realloc(b->data, want);
	if (!p)
		goto fail;
	b->data = p;
	b->cap = want;
	return true;
fail:
	b->oom = true;
	return false;
}

void buf_puts(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_grow(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void buf_put_u64(struct buf *b, uint64_t v)
{
	char tmp[21];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	buf_put(b, tmp + i, sizeof(tmp) - (size_t)i);
}

void buf_put_i64(struct buf *b, int64_t v)
{
	if (v < 0) {
		buf_putc(b, '-');
		buf_put_u64(b, (uint64_t)0 - (uint64_t)v);
		return;
	}
	buf_put_u64(b, (uint64_t)v);
}

void buf_put_hex(struct buf *b, const uint8_t *p, size_t n)
{
	size_t i;

	char *out;

	if (!buf_grow(b, n * 2))
		return;
	/* Through a local pointer: a char store may alias b, so b->data[b->len++] made the
	 * compiler reload both for every digit (2.4 % of the journal writer's samples). */
	out = b->data + b->len;
	for (i = 0; i < n; i++) {
		out[2 * i] = hex_digits[p[i] >> 4];
		out[2 * i + 1] = hex_digits[p[i] & 15];
	}
	b->len += n * 2;
}

/*
 * Validity per the Unicode Standard, Table 3-7 (well-formed byte sequences): this is
 * what rejects overlong forms, surrogates and code points above U+10FFFF.
 */
size_t utf8_valid_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xBF;
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	if (n < len)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

/*
 * Length of the maximal subpart of an ill-formed sequence at s: the lead byte plus the
 * continuation bytes that could still have been part of a valid sequence. Replacing
 * each such subpart with one U+FFFD is the W3C/Unicode recommended practice.
 */
static size_t utf8_invalid_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xBF;
	size_t len, i;

	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4;
	else
		return 1;
	if (c == 0xE0)
		lo = 0xA0;
	else if (c == 0xED)
		hi = 0x9F;
	else if (c == 0xF0)
		lo = 0x90;
	else if (c == 0xF4)
		hi = 0x8F;
	for (i = 1; i < len && i < n; i++) {
		unsigned char min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;

		if (s[i] < min || s[i] > max)
			break;
	}
	return i;
}

void buf_put_json_str(struct buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	buf_putc(b, '"');
	while (i < n) {
		unsigned char c = s[i];
		size_t len;

		if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
			run++;
			i++;
			continue;
		}
		buf_put(b, s + i - run, run);
		run = 0;
		if (c >= 0x80) {
			len = utf8_valid_seq(s + i, n - i);
			if (len) {
				buf_put(b, s + i, len);
				i += len;
			} else {
				buf_put(b, "\xEF\xBF\xBD", 3);
				i += utf8_invalid_len(s + i, n - i);
			}
			continue;
		}
		switch (c) {
		case '"': buf_put(b, "\\\"", 2); break;
		case '\\': buf_put(b, "\\\\", 2); break;
		case '\n': buf_put(b, "\\n", 2); break;
		case '\r': buf_put(b, "\\r", 2); break;
		case '\t': buf_put(b, "\\t", 2); break;
		case '\b': buf_put(b, "\\b", 2); break;
		case '\f': buf_put(b, "\\f", 2); break;
		default: {
			char esc[6] = { '\\', 'u', '0', '0', hex_digits[c >> 4], hex_digits[c & 15] };

			buf_put(b, esc, sizeof(esc));
		}
		}
		i++;
	}
	buf_put(b, s + i - run, run);
	buf_putc(b, '"');
}
