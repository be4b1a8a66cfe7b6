/*
 * Retention tiers: sealed segments older than the hot period move to STATE_DIR/cold as
 * zstd seekable files (journal/zseek.h), each with a manifest (seq range, line count,
 * SHA-256 of the original bytes, sessions, and the checkpoint note that covers it);
 * cold files older than the cold period are purged, unless a legal hold covers them
 * (all data, or any session whose lines are in the segment); a purged segment leaves a
 * tombstone (its manifest, with the Merkle state after it) so what remains verifies. The caller turns each
 * archive and purge into an event. A segment moves only once the index and every
 * sink's cursor are past it, so neither ever misses a line.
 */
#ifndef SANDGATE_RETENTION_RETENTION_H
#define SANDGATE_RETENTION_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "journal/merkle.h"

struct retention_settings {
	const char *state_dir;
	bool index;                       /* an index is kept: segments wait for it */
	uint64_t hot_ms;                  /* age (of a segment's last line) before cold */
	uint64_t cold_ms;                 /* age before purge */
	bool hold_all;
	char *const *hold_sessions;
	size_t n_hold;
};

/* One segment archived or purged. Strings live until the callback returns. */
struct retention_item {
	const char *segment;              /* the segment's file name */
	uint64_t first_seq, last_seq, lines, bytes, cold_bytes;
	const char *checkpoint;           /* the note covering the segment's last line */
	const char *cold_path;
};

/* Called once per archive ("retention.archive") and purge ("retention.purge"). */
typedef void (*retention_fn)(void *ctx, const char *what, const struct retention_item *it);

/*
 * One pass at wall time now_us: archives what is due, then purges what is due and not
 * held. Returns 0, or the first -errno (the pass stops there; what was done stays done
 * and consistent: a hot segment is removed only after its cold copy and manifest are
 * durable).
 */
int retention_pass(const struct retention_settings *s, int64_t now_us, retention_fn fn,
		   void *ctx);

/*
 * A manifest's (or tombstone's) "tree": the Merkle compact range after the segment's
 * last line and that line's hash (the next line's prev). A purged segment leaves a
 * tombstone, STATE/cold/NAME.purged.json (the manifest plus "purged_at"), so that
 * `sandgate verify` can check what remains after it against the later checkpoints.
 * Returns 0 or -EINVAL (missing or malformed).
 */
int retention_tree_parse(json_t *tree, struct merkle_range *t,
			 uint8_t next_prev[MERKLE_HASH_LEN]);

/* The lowercase hex SHA-256 of a segment's bytes, as its manifest's "sha256" records. */
void retention_sha256_hex(const char *data, size_t len, char out[65]);

#endif
