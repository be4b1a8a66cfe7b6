/*
 * The query index: a SQLite database (WAL) at STATE_DIR/index/index.db holding, per
 * journal line, where it is (segment, offset, length) and the fields investigations
 * filter on. It follows the journal (journal/follow.h), so it is rebuildable from the
 * segments at any time; its cursor is stored in the same transaction as the rows it
 * covers, so a crash never leaves rows without cursor or the reverse, and several
 * indexers (the daemon's thread, `sandgate reindex`) can take turns safely.
 */
#ifndef SANDGATE_INDEX_INDEX_H
#define SANDGATE_INDEX_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal/follow.h"

#define INDEX_MAX_NAMES 8

/* What a name in the names table is: a file path or a network name. */
enum index_name_kind { INDEX_NAME_PATH = 1, INDEX_NAME_DOMAIN = 2 };

struct index_name {
	enum index_name_kind kind;
	char *value;                 /* domains lowercased, without a trailing dot */
};

/*
 * The fields one line contributes: the record the index stores, whoever extracted it.
 * Strings are NUL-terminated, NULL when absent or null; index_extract puts them all in
 * one allocation (strings), which index_row_free frees.
 */
struct index_row {
	uint64_t seq;
	int64_t ts_us;               /* microseconds since the epoch */
	char *event;
	char *session_id;
	char *pkg_name;
	char *pkg_version;           /* resolved_version, else requested_version */
	char *reason;
	int64_t uid, euid, pid, ppid;   /* valid when the matching has_ is set */
	bool has_uid, has_euid, has_pid, has_ppid;
	struct index_name names[INDEX_MAX_NAMES];
	size_t n_names;
	char *strings;               /* what the strings above point into */
};

/*
 * Extracts the indexed fields from one journal line (len bytes, not NUL-terminated; any
 * bytes). Pure: no I/O. Fills row (free it with index_row_free, also on failure).
 * Returns 0, -EINVAL when the line is not a JSON object with an integer seq, a string
 * event and a well-formed ts, -ENOMEM.
 */
int index_extract(const char *line, size_t len, struct index_row *row);
/* The same, with the line's shape from the journal's writer (journal/shape.h): the
 * values taken where the shape says, the JSON not read (scanned if the shape does not
 * fit the line). */
struct shape;
int index_extract_shaped(const char *line, size_t len, const struct shape *shape,
			 struct index_row *row);

/* Frees what index_extract allocated and zeroes row. Accepts a zeroed row. */
void index_row_free(struct index_row *row);

struct index_db;

enum index_open_mode {
	INDEX_READ,          /* queries; fails with -ENOENT when there is no index */
	INDEX_WRITE,         /* create or update; header-level damage is detected */
	INDEX_WRITE_CHECK,   /* the same, plus PRAGMA quick_check (slow on a large file) */
};

/*
 * Opens (creating unless INDEX_READ) STATE_DIR/index/index.db in WAL mode with the
 * schema. When a writable open finds a file that is not a valid index (corrupt, foreign,
 * a newer schema) it moves it aside to index.db.corrupt and creates a fresh one: the
 * index is derived data. *rebuilt (may be NULL) says so. Returns 0, -ENOENT, -EPROTO
 * (INDEX_READ of a bad file), -EBUSY, -EIO, -ENOMEM.
 */
int index_db_open(struct index_db **out, const char *state_dir, enum index_open_mode mode,
		  bool *rebuilt);

/* PRAGMA quick_check: 0 when sound, -EPROTO when not, or another -errno. */
int index_db_quick_check(struct index_db *db);

/* Closes and frees. Accepts NULL. */
void index_db_close(struct index_db *db);

/*
 * Indexes up to max_lines journal lines after the stored cursor, in one transaction
 * that also advances the cursor. *n gets the lines consumed (0: caught up).
 * Returns 0, -EBUSY when another indexer holds the database, -EIO, -ENOMEM, or a
 * follow_read error.
 */
int index_db_step(struct index_db *db, size_t max_lines, size_t *n);

/*
 * Lines per index_db_step when catching up (the daemon's thread, query, reindex): a
 * batch rewrites the B-trees' hot leaf pages once, whatever its size, so larger batches
 * write fewer pages a line. Reindexing 973k lines took 6.2-7.7 s in batches of 5,000
 * and 4.9-5.1 s in batches of 20,000 (2026-12-02). On 9.7M lines, whose sessions' rows
 * are spread over the whole tree, 20,000 made 155k lines/s, 80,000 198k and 200,000
 * 207k, at 15.7 and 20.7 MB of peak RSS for the last two (2026-12-03,
 * docs/bench-query.md). A batch of 200,000 holds the write lock for about a second
 * (readers are not blocked: WAL); one is only that long while catching up.
 */
#define INDEX_BATCH_LINES 200000

/* Indexes until caught up with the journal. Returns as index_db_step. */
int index_db_catch_up(struct index_db *db, uint64_t *total);

/*
 * Indexes every segment of the cold tier (STATE_DIR/cold/NAME.zst), marking each
 * cold; for reindex, since the follower only reads the hot segments. *n gets the lines.
 * Returns 0, -EBUSY, -EIO, -ENOMEM.
 */
int index_db_index_cold(struct index_db *db, uint64_t *n);

/* Empties the index and resets its cursor (for reindex). Returns 0, -EBUSY, -EIO. */
int index_db_reset(struct index_db *db);

/* The stored cursor. Returns 0 or -EIO. */
int index_db_cursor(struct index_db *db, struct follow_cursor *c);

/* Records that segment (its first seq) moved to the cold tier. 0, -EBUSY, -EIO. */
int index_db_mark_cold(struct index_db *db, uint64_t segment);

/* Drops the rows of a purged segment. 0, -EBUSY, -EIO. */
int index_db_forget_segment(struct index_db *db, uint64_t segment);

/* The underlying sqlite3 handle (for the query runner). */
struct sqlite3 *index_db_handle(struct index_db *db);

/*
 * Lines to index are taken from the journal writer's shapes of them when it still has
 * them (journal/handoff.h; h NULL: every line scanned). For the indexing thread.
 */
struct handoff;
void index_db_set_handoff(struct index_db *db, struct handoff *h);
/* Lines indexed so far from their shapes, and by scanning their JSON. */
void index_db_shape_stats(const struct index_db *db, uint64_t *shaped, uint64_t *scanned);

/* STATE_DIR/journal, as the db was opened with. */
const char *index_db_journal_dir(const struct index_db *db);

#endif
