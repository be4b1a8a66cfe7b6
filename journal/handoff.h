/*
 * The writer's recent lines and their shapes (journal/shape.h), kept in memory for the
 * journal's own readers. Detection and the index follow the journal files as before
 * (their cursors, their catching up after a restart); for each line they read they ask
 * here for its shape, and get it only when the line is still held and is byte for byte
 * the line the writer wrote under that seq. Otherwise (a reader far behind, a line
 * written before this run, a file changed under us) they parse the line as before:
 * slower, never different (tests/unit/test_shape.c compares the two over hostile events).
 *
 * "Byte for byte the line": its leaf hash (journal/merkle.h: what the chain and the tree
 * hold for it) is the one the writer computed as it chained it. The reader hashes the
 * line it read (about 0.3 µs for a 400-byte line with the CPU's SHA instructions,
 * against several µs to parse it); the handoff keeps a 64-byte slot and the tokens a
 * line (4 bytes a value, packed: journal/handoff.c), not the line, so a burst a reader
 * falls behind on is still held when it catches up.
 *
 * A fixed arena of bytes, overwritten oldest first, and a table by seq: memory is
 * bounded whatever the burst. Producers claim, one thread puts (the journal's writer),
 * any threads get, without a lock: neither waits for a reader.
 */
#ifndef SANDGATE_JOURNAL_HANDOFF_H
#define SANDGATE_JOURNAL_HANDOFF_H

#include <stddef.h>
#include <stdint.h>

#include "journal/merkle.h"
#include "journal/shape.h"

struct handoff;

struct handoff_stats {
	uint64_t put;          /* lines held, since start */
	uint64_t skipped;      /* lines too large to hold (their readers parse them) */
	uint64_t mismatched;   /* lines read that were not the writer's (readers parsed them) */
	size_t arena_bytes;
};

/* bytes (≥ 64 KiB): the table and the arena together, mapped as lines reach them
 * (about 132 bytes a line). Returns NULL when out of memory or bytes is too small. */
struct handoff *handoff_new(size_t bytes);
void handoff_free(struct handoff *h);

/*
 * A producer, as it queues a line (callers serialize the claims: the journal queue's
 * lock): the line's tokens (n_tok of them, bytes as the builder made them: not
 * necessarily aligned) packed into the arena; *from says where, for handoff_put.
 * Returns false when they are not held (none, too many, or a value beyond what a held
 * token packs: journal/handoff.c), counted as skipped: the line's readers parse it.
 */
bool handoff_claim(struct handoff *h, const void *tokens, size_t n_tok, uint64_t *from);

/* The writer: line seq (len bytes, no '\n', leaf its leaf hash), whose n_tok tokens
 * handoff_claim placed at from. */
void handoff_put(struct handoff *h, uint64_t seq, const uint8_t leaf[MERKLE_HASH_LEN],
		 size_t len, uint64_t from, size_t n_tok);

/* A reader: line seq's tokens into out when held and equal to line. */
bool handoff_get(struct handoff *h, uint64_t seq, const char *line, size_t len,
		 struct shape *out);

void handoff_get_stats(struct handoff *h, struct handoff_stats *st);

#endif
