/*
 * Following the journal's segments like `tail -F`: a reader that hands every complete
 * line after a cursor to a callback, crossing rotations, and never touches the writer.
 * The index and the sinks use it, each with its own durable cursor, so they are
 * decoupled from the hot append path and a consumer that was down catches up.
 */
#ifndef SANDGATE_JOURNAL_FOLLOW_H
#define SANDGATE_JOURNAL_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

/* Where a consumer stands: the next line is at byte offset of segment (its first seq). */
struct follow_cursor {
	uint64_t next_seq;   /* the seq the next line should carry */
	uint64_t segment;    /* first seq of the segment being read (its file name) */
	uint64_t offset;     /* byte offset of the next line in that segment */
};

/* Where one line was read from, for reading it back byte for byte. */
struct follow_pos {
	uint64_t segment;
	uint64_t offset;
	size_t len;          /* without the '\n' */
};

/*
 * Called for each complete line (without '\n'; not NUL-terminated). Returns 0 to go on,
 * 1 to stop after this line (it counts as consumed), or -errno to stop before it.
 */
typedef int (*follow_line_fn)(void *ctx, const char *line, size_t len,
			      const struct follow_pos *pos);

/*
 * Reads complete lines after c in journal_dir, at most max_lines, calling fn for each and
 * advancing c past each line fn accepted. A segment is left for the next one only once a
 * later segment exists and this one has been read to its end (the writer seals a segment
 * before it creates the next). A cursor whose segment is gone (retention) moves to the
 * first segment after it. *n_read gets the number of lines consumed.
 * Returns 0 (nothing more now, or max_lines reached), -ENOENT when journal_dir does not
 * exist, fn's error, or another -errno from reading.
 */
int follow_read(const char *journal_dir, struct follow_cursor *c, size_t max_lines,
		follow_line_fn fn, void *ctx, size_t *n_read);

/*
 * A read buffer a consumer keeps between calls: a fresh one per call costs page faults
 * and zeroing on every batch, which a sink catching up pays thousands of times. Start
 * zeroed; free with follow_buf_free (accepts an empty one).
 */
struct follow_buf {
	char *data;
	size_t cap;
};

/* follow_read with the consumer's buffer b (grown as needed, kept for the next call). */
int follow_read_buf(const char *journal_dir, struct follow_cursor *c, size_t max_lines,
		    follow_line_fn fn, void *ctx, size_t *n_read, struct follow_buf *b);
void follow_buf_free(struct follow_buf *b);

/*
 * Reads back exactly one line at pos (for query output). line gets a malloc'd,
 * NUL-terminated copy of pos->len bytes. Returns 0, -ENOENT, -EIO when the file is
 * shorter than pos says, -ENOMEM.
 */
int follow_read_line(const char *journal_dir, const struct follow_pos *pos, char **line);

#endif
