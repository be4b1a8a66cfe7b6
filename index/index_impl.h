/* Internals shared by the index's files (index/index_db.c, index_build.c). */
#ifndef SANDGATE_INDEX_INDEX_IMPL_H
#define SANDGATE_INDEX_INDEX_IMPL_H

#include <sqlite3.h>

#include "index/index.h"

#define INDEX_KNOWN_EVENTS 128

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
	sqlite3_stmt *ins_event, *ins_name, *get_cursor, *set_cursor, *ins_event_name;
	/* Event names known to be in event_names (forgotten on rollback and reset). */
	char *known_events[INDEX_KNOWN_EVENTS];
	size_t n_known;
	uint64_t bad_lines;          /* lines that were not indexable (counted, skipped) */
};

/* SQLite result code -> -errno: BUSY/LOCKED -EBUSY, NOMEM -ENOMEM, else -EIO. */
int index_sql_err(int rc);

/* Reads the line at pos from the cold tier (cached per segment). 0, -ENOENT, -EIO. */
int index_cold_line(struct index_db *db, const struct follow_pos *pos, char **line);

/* Prepares the writer's statements. Returns 0 or -errno. */
int index_prepare(struct index_db *db);

/* Forgets which event names are stored (after a rollback or a reset). */
void index_forget_known(struct index_db *db);

#endif
