/* The index's SQL schema, shared by index_db.c and the query builder's tests. */
#ifndef SANDGATE_INDEX_INDEX_SCHEMA_H
#define SANDGATE_INDEX_INDEX_SCHEMA_H

#define INDEX_APP_ID 0x53474958   /* "SGIX": this file is a sandgate index */
#define INDEX_SCHEMA_VERSION 3

/*
 * events: one row per journal line, with where to read it back (segment, off, len); its
 *   event name and session are ids (eid, sid) into event_names and sessions: an integer
 *   key makes the row and its (eid, ts) and (sid, ts) index entries smaller and cheaper
 *   to compare than the text (schema 3, 2026-12-02; bench-query.md has the figures).
 * names: postings of the lines' paths (kind 1) and network names (kind 2): one row per
 *   name per batch and segment, seqs the JSON array of the lines that carry it (read with
 *   json_each). A row per (name, line) cost every line a B-tree insert at the name's
 *   place, which is anywhere in the tree; a batch of 20,000 lines holds a few hundred
 *   names, so this is tens of times fewer inserts.
 * event_names: every event name seen, with its id (a time-only question walks (eid, ts)
 *   once per name: an index on ts alone cost every line one more entry).
 * sessions: every session id seen, with its id. Rows of event_names and sessions are
 *   never deleted, not even by a reset, so an id the indexer has cached stays right.
 * cursor: the follower's position, written in the same transaction as the rows.
 * cold: segments moved to the cold tier (their rows are answered with --include-cold).
 * Each index entry costs the indexer about 1-2 µs a line, so there are few: euid is
 * indexed only where it differs from uid (a question on a uid asks for both), session
 * only where there is one.
 */
#define INDEX_SCHEMA_SQL                                                              \
	"CREATE TABLE IF NOT EXISTS cursor(id INTEGER PRIMARY KEY CHECK (id = 0),"        \
	" next_seq INTEGER NOT NULL, segment INTEGER NOT NULL, off INTEGER NOT NULL);"   \
	"INSERT OR IGNORE INTO cursor VALUES(0, 0, 0, 0);"                              \
	"CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY, ts INTEGER NOT NULL," \
	" eid INTEGER NOT NULL, sid INTEGER, segment INTEGER NOT NULL,"                  \
	" off INTEGER NOT NULL, len INTEGER NOT NULL, pkg_name TEXT, pkg_version TEXT,"  \
	" reason TEXT, uid INTEGER, euid INTEGER, pid INTEGER, ppid INTEGER);"           \
	"CREATE TABLE IF NOT EXISTS names(kind INTEGER NOT NULL, value TEXT NOT NULL,"   \
	" first_seq INTEGER NOT NULL, segment INTEGER NOT NULL, seqs TEXT NOT NULL,"      \
	" PRIMARY KEY(kind, value, first_seq)) WITHOUT ROWID;"                            \
	"CREATE TABLE IF NOT EXISTS event_names(id INTEGER PRIMARY KEY,"                 \
	" event TEXT NOT NULL UNIQUE);"                                                   \
	"CREATE TABLE IF NOT EXISTS sessions(id INTEGER PRIMARY KEY,"                    \
	" session_id TEXT NOT NULL UNIQUE);"                                              \
	"CREATE INDEX IF NOT EXISTS ev_session_ts ON events(sid, ts) WHERE sid IS NOT NULL;" \
	"CREATE INDEX IF NOT EXISTS ev_event_ts ON events(eid, ts);"                      \
	"CREATE INDEX IF NOT EXISTS ev_pkg ON events(pkg_name, pkg_version)"              \
	" WHERE pkg_name IS NOT NULL;"                                                    \
	"CREATE INDEX IF NOT EXISTS ev_reason ON events(reason) WHERE reason IS NOT NULL;" \
	"CREATE INDEX IF NOT EXISTS ev_uid ON events(uid) WHERE uid IS NOT NULL;"         \
	"CREATE INDEX IF NOT EXISTS ev_euid ON events(euid)"                              \
	" WHERE euid IS NOT NULL AND euid IS NOT uid;"                                    \
	"CREATE TABLE IF NOT EXISTS cold(segment INTEGER PRIMARY KEY);"

#endif
