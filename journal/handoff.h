/*
 * The writer's recent lines and their shapes (journal/shape.h), kept in memory for the
 * journal's own readers. Detection and the index follow the journal files as before
 * (their cursors, their catching up after a restart); for each line they read they ask
 * here for its shape, and get it only when the line is still held and is byte for byte
 * the line the writer wrote under that seq. Otherwise (a reader far behind, a line
 * written before this run, a file changed under us) they parse the line as before:
 * slower, never different (tests/unit/test_shape.c compares the two over hostile events).
 *
 * A fixed arena of bytes, overwritten oldest first, and a table by seq: memory is
 * bounded whatever the burst. Thread-safe: the writer puts, any thread gets.
 */
#ifndef SANDGATE_JOURNAL_HANDOFF_H
#define SANDGATE_JOURNAL_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

#include "journal/shape.h"

struct handoff;

struct handoff_stats {
	uint64_t put;          /* lines held, since start */
	uint64_t skipped;      /* lines too large to hold (their readers parse them) */
	size_t arena_bytes;
};

/* arena_bytes ≥ 64 KiB. Returns NULL when out of memory or arena_bytes is too small. */
struct handoff *handoff_new(size_t arena_bytes);
void handoff_free(struct handoff *h);

/* The writer: line seq (len bytes, no '\n') and its tokens (n_tok of them, bytes as
 * queued: not necessarily aligned). */
void handoff_put(struct handoff *h, uint64_t seq, const char *line, size_t len,
		 const void *tokens, size_t n_tok);

/* A reader: line seq's tokens into out when held and equal to line. */
bool handoff_get(struct handoff *h, uint64_t seq, const char *line, size_t len,
		 struct shape *out);

void handoff_get_stats(struct handoff *h, struct handoff_stats *st);

#endif
