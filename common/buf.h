/*
 * A growable byte buffer and the JSON string encoder every event goes through.
 * Allocation failure is latched in b->oom instead of being checked at each append,
 * so builders stay readable; the owner checks once before using the bytes.
 */
#ifndef SANDGATE_COMMON_BUF_H
#define SANDGATE_COMMON_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
	bool oom;
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);             /* len = 0, keeps memory, clears oom */
/* Grows b to hold extra more bytes; false (and b->oom) when out of memory. */
bool buf_grow(struct buf *b, size_t extra);

/* The hot appends are inline: one compare on the fast path. */
static inline void buf_put(struct buf *b, const void *p, size_t n)
{
	if (n == 0 || (n > b->cap - b->len && !buf_grow(b, n)))
		return;
	__builtin_memcpy(b->data + b->len, p, n);
	b->len += n;
}

static inline void buf_putc(struct buf *b, char c)
{
	if (b->len == b->cap && !buf_grow(b, 1))
		return;
	b->data[b->len++] = c;
}

void buf_puts(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_put_u64(struct buf *b, uint64_t v);
void buf_put_i64(struct buf *b, int64_t v);
void buf_put_hex(struct buf *b, const uint8_t *p, size_t n);   /* lowercase */

/*
 * Appends s[0..n) as a quoted JSON string. Escapes '"', '\\', every byte < 0x20 and
 * 0x7F; replaces each maximal invalid UTF-8 subsequence with U+FFFD. The output is
 * always one valid JSON string on one line, whatever the input bytes.
 */
void buf_put_json_str(struct buf *b, const char *s, size_t n);

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not valid. */
size_t utf8_valid_seq(const unsigned char *s, size_t n);

#endif
