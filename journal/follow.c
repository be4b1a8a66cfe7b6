/* The segment follower (journal/follow.h): complete lines only, rotations crossed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal/envelope.h"
#include "journal/follow.h"
#include "journal/journal_impl.h"

#define FOLLOW_CHUNK (256u << 10)
#define FOLLOW_LINE_MAX (64u << 20)   /* a longer "line" is not one the writer made */

struct reader {
	char *buf;
	size_t cap;
	size_t have;        /* bytes in buf */
	uint64_t base;      /* file offset of buf[0] */
};

/* The first segment whose first seq is > after (strict) or >= after; *found says. */
static int segment_after(const char *dir, uint64_t after, bool strict, uint64_t *out,
			 bool *found)
{
	char (*names)[SEGMENT_NAME_LEN + 1] = NULL;
	size_t n = 0, i;
	int ret = segment_list(dir, &names, &n);

	*found = false;
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		uint64_t s = strtoull(names[i], NULL, 10);

		if (s > after || (!strict && s == after)) {
			*out = s;
			*found = true;
			break;
		}
	}
	free(names);
	return 0;
}

static int open_segment(const char *dir, uint64_t seg, int *fd)
{
	char path[4096], name[SEGMENT_NAME_LEN + 1];

	segment_name(seg, name);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

/* Refills r from fd at r->base + r->have; grows the buffer when one line fills it. */
static int fill(struct reader *r, int fd, bool *eof)
{
	ssize_t got;

	if (r->have == r->cap) {
		size_t ncap = r->cap * 2;
		char *nb;

		if (ncap > FOLLOW_LINE_MAX)
			return -E2BIG;
		nb = realloc(r->buf, ncap);
		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->cap = ncap;
	}
	got = pread(fd, r->buf + r->have, r->cap - r->have, (off_t)(r->base + r->have));
	if (got < 0)
		return -errno;
	*eof = got == 0;
	r->have += (size_t)got;
	return 0;
}

/* Hands the complete lines in r to fn; keeps the incomplete tail. */
static int drain(struct reader *r, struct follow_cursor *c, size_t max, size_t *n,
		 follow_line_fn fn, void *ctx)
{
	size_t start = 0;
	int ret = 0;

	while (*n < max) {
		char *nl = memchr(r->buf + start, '\n', r->have - start);
		struct follow_pos pos = { c->segment, r->base + start, 0 };
		uint64_t seq;

		if (!nl)
			break;
		pos.len = (size_t)(nl - (r->buf + start));
		ret = fn(ctx, r->buf + start, pos.len, &pos);
		if (ret < 0)
			break;
		if (line_envelope_seq(r->buf + start, pos.len, &seq) == 0)
			c->next_seq = seq + 1;
		start += pos.len + 1;
		c->offset = r->base + start;
		(*n)++;
		if (ret == 1)
			break;
	}
	if (*n >= max || ret != 0) {
		r->have = 0;   /* the caller stops here: the rest is read again next time */
		return ret;
	}
	memmove(r->buf, r->buf + start, r->have - start);
	r->have -= start;
	r->base += start;
	return ret;
}

/* Reads one segment from c->offset to its end (or max). *done: stopped early. */
static int read_segment(int fd, struct reader *r, struct follow_cursor *c, size_t max,
			size_t *n, follow_line_fn fn, void *ctx, bool *done)
{
	bool eof = false;
	int ret = 0;

	r->have = 0;
	r->base = c->offset;
	*done = false;
	/* Stop at max: reading on would pull the rest of the segment into memory (and grow
	 * the buffer to hold it) for lines the caller will not take this time. */
	while (!eof && ret == 0 && !*done) {
		ret = fill(r, fd, &eof);
		if (ret == 0)
			ret = drain(r, c, max, n, fn, ctx);
		if (ret != 0 || *n >= max)
			*done = true;
	}
	return ret < 0 ? ret : 0;
}

void follow_buf_free(struct follow_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->cap = 0;
}

int follow_read(const char *journal_dir, struct follow_cursor *c, size_t max_lines,
		follow_line_fn fn, void *ctx, size_t *n_read)
{
	struct follow_buf b = { 0 };
	int ret = follow_read_buf(journal_dir, c, max_lines, fn, ctx, n_read, &b);

	follow_buf_free(&b);
	return ret;
}

int follow_read_buf(const char *journal_dir, struct follow_cursor *c, size_t max_lines,
		    follow_line_fn fn, void *ctx, size_t *n_read, struct follow_buf *b)
{
	struct reader r;
	bool found, done = false;
	uint64_t next = 0;
	int fd, ret = 0;

	*n_read = 0;
	if (!b->data) {
		b->data = malloc(FOLLOW_CHUNK);
		if (!b->data)
			return -ENOMEM;
		b->cap = FOLLOW_CHUNK;
	}
	r = (struct reader){ .buf = b->data, .cap = b->cap };
	while (!done && ret == 0) {
		/* Listed before reading: a later segment seen now means this one is sealed. */
		ret = segment_after(journal_dir, c->segment, true, &next, &found);
		if (ret)
			break;
		ret = open_segment(journal_dir, c->segment, &fd);
		if (ret == -ENOENT) {
			/* Gone (retention) or not yet created: resume at the first one after. */
			ret = segment_after(journal_dir, c->segment, false, &next, &found);
			if (ret == 0 && found && next != c->segment) {
				c->segment = next;
				c->offset = 0;
				continue;
			}
			break;
		}
		if (ret)
			break;
		ret = read_segment(fd, &r, c, max_lines, n_read, fn, ctx, &done);
		close(fd);
		if (ret || done || !found || r.have)
			break;   /* a torn tail in a sealed segment waits for recovery */
		c->segment = next;
		c->offset = 0;
	}
	b->data = r.buf;   /* fill may have grown it */
	b->cap = r.cap;
	return ret;
}

int follow_read_line(const char *journal_dir, const struct follow_pos *pos, char **line)
{
	char *buf;
	ssize_t got;
	int fd, ret = open_segment(journal_dir, pos->segment, &fd);

	if (ret)
		return ret;
	buf = malloc(pos->len + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	got = pread(fd, buf, pos->len, (off_t)pos->offset);
	ret = got < 0 ? -errno : (size_t)got != pos->len ? -EIO : 0;
	close(fd);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[pos->len] = '\0';
	*line = buf;
	return 0;
}
