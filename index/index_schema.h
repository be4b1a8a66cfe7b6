/* The index's SQL schema, shared by index_db.c and the query builder's tests. */
#ifndef SANDGATE_INDEX_INDEX_SCHEMA_H
#define SANDGATE_INDEX_INDEX_SCHEMA_H

#define INDEX_APP_ID 0x53474958   /* "SGIX": this file is a sandgate index */
#define INDEX_SCHEMA_VERSION 2

/*
 * events: one row per journal line, with where to read it back (segment, off, len).
 * names: the line's paths (kind 1) and network names (kind 2), several per line.
 * event_names: every event name seen (for a time-only question, which then walks
 *   (event, ts) once per name: an index on ts alone cost every line one more entry).
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
	" event TEXT NOT NULL, session_id TEXT, segment INTEGER NOT NULL,"               \
	" off INTEGER NOT NULL, len INTEGER NOT NULL, pkg_name TEXT, pkg_version TEXT,"  \
	" reason TEXT, uid INTEGER, euid INTEGER, pid INTEGER, ppid INTEGER);"           \
	"CREATE TABLE IF NOT EXISTS names(kind INTEGER NOT NULL, value TEXT NOT NULL,"   \
	" seq INTEGER NOT NULL, PRIMARY KEY(kind, value, seq)) WITHOUT ROWID;"           \
	"CREATE TABLE IF NOT EXISTS event_names(event TEXT PRIMARY KEY) WITHOUT ROWID;"  \
	"CREATE INDEX IF NOT EXISTS ev_session_ts ON events(session_id, ts)"              \
	" WHERE session_id IS NOT NULL;"                                                  \
	"CREATE INDEX IF NOT EXISTS ev_event_ts ON events(event, ts);"                    \
	"CREATE INDEX IF NOT EXISTS ev_pkg ON events(pkg_name, pkg_version)"              \
	" WHERE pkg_name IS NOT NULL;"                                                    \
	"CREATE INDEX IF NOT EXISTS ev_reason ON events(reason) WHERE reason IS NOT NULL;" \
	"CREATE INDEX IF NOT EXISTS ev_uid ON events(uid) WHERE uid IS NOT NULL;"         \
	"CREATE INDEX IF NOT EXISTS ev_euid ON events(euid)"                              \
	" WHERE euid IS NOT NULL AND euid IS NOT uid;"                                    \
	"CREATE TABLE IF NOT EXISTS cold(segment INTEGER PRIMARY KEY);"

#endif
