/* Internals shared by the index's files (index/index_db.c, index_build.c). */
#ifndef SANDGATE_INDEX_INDEX_IMPL_H
#define SANDGATE_INDEX_INDEX_IMPL_H

#include <sqlite3.h>

#include "index/index.h"
#include "journal/shape.h"

#define INDEX_KNOWN_EVENTS 128
#define INDEX_KNOWN_SESSIONS 1024   /* slots of the session id cache (a power of two) */

/*
 * A session id cached by the indexer: the id its session_id has in `sessions`. Only ids
 * that are committed, or inserted by this handle's open transaction, are kept (forgotten
 * on rollback): an id once committed never changes, since no row of `sessions` or
 * `event_names` is ever deleted (a reset keeps them), so another indexer taking turns on
 * the file cannot make an entry wrong.
 */
struct index_known_session {
	char *session_id;            /* NULL: free slot */
	int64_t id;
};

/* A names row waiting for the end of its batch (index_build.c). */
struct index_pending_name {
	uint64_t seq;
	uint64_t segment;
	size_t value_at;             /* offset of the NUL-terminated value in pending_text */
	int kind;
};

struct index_db {
	sqlite3 *h;
	bool readonly;
	bool check;                  /* quick_check at open */
	char journal_dir[4096];
	char path[4096];
	char cold_dir[4096];
	char *cold_data;              /* the last cold segment read, decompressed (query) */
	size_t cold_len;
	uint64_t cold_seg;
	sqlite3_stmt *ins_event, *ins_name, *get_cursor, *set_cursor;
	sqlite3_stmt *get_event_id, *ins_event_name, *get_session_id, *ins_session;
	/* Event names and their ids in event_names (forgotten on rollback). */
	char *known_events[INDEX_KNOWN_EVENTS];
	int64_t known_event_ids[INDEX_KNOWN_EVENTS];
	size_t n_known;
	struct index_known_session known_sessions[INDEX_KNOWN_SESSIONS];
	size_t n_known_sessions;
	uint64_t bad_lines;          /* lines that were not indexable (counted, skipped) */
	struct handoff *handoff;     /* the journal writer's shapes of recent lines, or NULL */
	struct shape shape;          /* the current line's */
	uint64_t lines_shaped, lines_scanned;
	/* The batch's names rows, inserted sorted at its end (index_build.c). */
	struct index_pending_name *pending;
	size_t n_pending, cap_pending;
	char *pending_text;
	size_t text_len, text_cap;
};

/* SQLite result code -> -errno: BUSY/LOCKED -EBUSY, NOMEM -ENOMEM, else -EIO. */
int index_sql_err(int rc);

/* Reads the line at pos from the cold tier (cached per segment). 0, -ENOENT, -EIO. */
int index_cold_line(struct index_db *db, const struct follow_pos *pos, char **line);

/* Prepares the writer's statements. Returns 0 or -errno. */
int index_prepare(struct index_db *db);

/* Drops the batch's pending names rows and frees their buffers. */
void index_pending_free(struct index_db *db);

/* Forgets the cached event and session ids (after a rollback). */
void index_forget_known(struct index_db *db);

#endif
