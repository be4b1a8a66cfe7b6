/*
 * Building the index incrementally (index/index.h): each step is one transaction that
 * reads the cursor, indexes the lines after it and stores the new cursor, so any number
 * of indexers (the daemon's thread, `sandgate reindex`) may take turns on one file.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_impl.h"
#include "journal/zseek.h"

int index_prepare(struct index_db *db)
{
	static const char ins_event[] =
		"INSERT OR IGNORE INTO events(seq, ts, event, session_id, segment, off, len,"
		" pkg_name, pkg_version, reason, uid, euid, pid, ppid)"
		" VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
	static const char ins_name[] = "INSERT OR IGNORE INTO names(kind, value, seq) VALUES(?,?,?)";
	static const char ins_event_name[] =
		"INSERT OR IGNORE INTO event_names(event) VALUES(?)";
	static const char get_cursor[] = "SELECT next_seq, segment, off FROM cursor WHERE id = 0";
	static const char set_cursor[] =
		"UPDATE cursor SET next_seq = ?, segment = ?, off = ? WHERE id = 0";
	int rc = sqlite3_prepare_v2(db->h, ins_event, -1, &db->ins_event, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db->h, ins_name, -1, &db->ins_name, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db->h, get_cursor, -1, &db->get_cursor, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db->h, set_cursor, -1, &db->set_cursor, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db->h, ins_event_name, -1, &db->ins_event_name, NULL);
	return index_sql_err(rc);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static void bind_opt(sqlite3_stmt *st, int i, bool has, int64_t v)
{
	if (has)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int run(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	/* Every statement binds all its parameters each time: no clear_bindings needed. */
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : index_sql_err(rc);
}

static bool name_seen(const struct index_row *r, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (r->names[j].kind == r->names[i].kind &&
		    strcmp(r->names[j].value, r->names[i].value) == 0)
			return true;
	return false;
}

static int insert_names(struct index_db *db, const struct index_row *r)
{
	int ret = 0;

	for (size_t i = 0; i < r->n_names && ret == 0; i++) {
		/* A name the line already gave (sni = domain, mostly) would only be ignored. */
		if (i > 0 && name_seen(r, i))
			continue;
		sqlite3_bind_int(db->ins_name, 1, (int)r->names[i].kind);
		bind_text(db->ins_name, 2, r->names[i].value);
		sqlite3_bind_int64(db->ins_name, 3, (sqlite3_int64)r->seq);
		ret = run(db->ins_name);
	}
	return ret;
}

void index_forget_known(struct index_db *db)
{
	for (size_t i = 0; i < db->n_known; i++)
		free(db->known_events[i]);
	db->n_known = 0;
}

/* Stores the event name unless known to be stored: a handful of names, so a lookup in
 * memory spares nearly every line a statement. */
static int note_event_name(struct index_db *db, const char *event)
{
	int ret;

	for (size_t i = 0; i < db->n_known; i++)
		if (strcmp(db->known_events[i], event) == 0)
			return 0;
	bind_text(db->ins_event_name, 1, event);
	ret = run(db->ins_event_name);
	if (ret == 0 && db->n_known < INDEX_KNOWN_EVENTS &&
	    (db->known_events[db->n_known] = strdup(event)))
		db->n_known++;
	return ret;
}

static int insert_row(struct index_db *db, const struct index_row *r,
		      const struct follow_pos *pos)
{
	sqlite3_stmt *st = db->ins_event;
	int ret;

	sqlite3_bind_int64(st, 1, (sqlite3_int64)r->seq);
	sqlite3_bind_int64(st, 2, r->ts_us);
	bind_text(st, 3, r->event);
	bind_text(st, 4, r->session_id);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)pos->segment);
	sqlite3_bind_int64(st, 6, (sqlite3_int64)pos->offset);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)pos->len);
	bind_text(st, 8, r->pkg_name);
	bind_text(st, 9, r->pkg_version);
	bind_text(st, 10, r->reason);
	bind_opt(st, 11, r->has_uid, r->uid);
	bind_opt(st, 12, r->has_euid, r->euid);
	bind_opt(st, 13, r->has_pid, r->pid);
	bind_opt(st, 14, r->has_ppid, r->ppid);
	ret = run(st);
	if (ret == 0)
		ret = note_event_name(db, r->event);
	/* A seq seen before (duplicate line after a cursor reset) keeps its first names. */
	if (ret == 0 && sqlite3_changes(db->h) > 0)
		ret = insert_names(db, r);
	return ret;
}

static int on_line(void *ctx, const char *line, size_t len, const struct follow_pos *pos)
{
	struct index_db *db = ctx;
	struct index_row row;
	int ret = index_extract(line, len, &row);

	if (ret == -EINVAL) {
		/* Not indexable (verify reports damage); the line is skipped, not fatal. */
		db->bad_lines++;
		ret = 0;
	} else if (ret == 0) {
		ret = insert_row(db, &row, pos);
	}
	index_row_free(&row);
	return ret;
}

int index_db_cursor(struct index_db *db, struct follow_cursor *c)
{
	sqlite3_stmt *st = db->get_cursor;
	int rc = sqlite3_step(st);

	memset(c, 0, sizeof(*c));
	if (rc == SQLITE_ROW) {
		c->next_seq = (uint64_t)sqlite3_column_int64(st, 0);
		c->segment = (uint64_t)sqlite3_column_int64(st, 1);
		c->offset = (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -EIO : index_sql_err(rc);
}

static int store_cursor(struct index_db *db, const struct follow_cursor *c)
{
	sqlite3_bind_int64(db->set_cursor, 1, (sqlite3_int64)c->next_seq);
	sqlite3_bind_int64(db->set_cursor, 2, (sqlite3_int64)c->segment);
	sqlite3_bind_int64(db->set_cursor, 3, (sqlite3_int64)c->offset);
	return run(db->set_cursor);
}

int index_db_step(struct index_db *db, size_t max_lines, size_t *n)
{
	struct follow_cursor c;
	int ret;

	*n = 0;
	if (db->readonly)
		return -EROFS;
	ret = index_sql_err(sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL));
	if (ret)
		return ret;
	ret = index_db_cursor(db, &c);
	if (ret == 0)
		ret = follow_read(db->journal_dir, &c, max_lines, on_line, db, n);
	if (ret == 0 && *n)
		ret = store_cursor(db, &c);
	if (ret == 0)
		ret = index_sql_err(sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL));
	if (ret) {
		(void)sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		index_forget_known(db);
		*n = 0;
	}
	return ret;
}

int index_db_catch_up(struct index_db *db, uint64_t *total)
{
	size_t n;
	int ret;

	*total = 0;
	do {
		ret = index_db_step(db, 20000, &n);
		*total += n;
	} while (ret == 0 && n > 0);
	return ret;
}

int index_db_reset(struct index_db *db)
{
	static const char sql[] =
		"BEGIN IMMEDIATE; DELETE FROM names; DELETE FROM events; DELETE FROM cold;"
		" DELETE FROM event_names;"
		" UPDATE cursor SET next_seq = 0, segment = 0, off = 0 WHERE id = 0; COMMIT;";
	int ret;

	if (db->readonly)
		return -EROFS;
	index_forget_known(db);
	ret = index_sql_err(sqlite3_exec(db->h, sql, NULL, NULL, NULL));
	if (ret)
		(void)sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}

/* One cold segment's lines, in one transaction with its cold mark. */
static int index_cold_segment(struct index_db *db, uint64_t seg, const char *path,
			      uint64_t *n)
{
	char *data = NULL;
	size_t len = 0, at = 0;
	int ret = zseek_read_all(path, &data, &len);

	if (ret == 0)
		ret = index_sql_err(sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL));
	while (ret == 0 && at < len) {
		char *nl = memchr(data + at, '\n', len - at);
		struct follow_pos pos = { seg, at, 0 };

		if (!nl)
			break;
		pos.len = (size_t)(nl - (data + at));
		ret = on_line(db, data + at, pos.len, &pos);
		at += pos.len + 1;
		(*n)++;
	}
	if (ret == 0)
		ret = index_db_mark_cold(db, seg);
	if (ret == 0)
		ret = index_sql_err(sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL));
	else if (data)
		(void)sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	if (ret)
		index_forget_known(db);
	free(data);
	return ret;
}

int index_db_index_cold(struct index_db *db, uint64_t *n)
{
	struct dirent *de;
	DIR *d = opendir(db->cold_dir);
	int ret = 0;

	*n = 0;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (ret == 0 && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[8192];

		if (len != 30 || strcmp(de->d_name + 20, ".jsonl.zst") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", db->cold_dir, de->d_name);
		ret = index_cold_segment(db, strtoull(de->d_name, NULL, 10), path, n);
	}
	closedir(d);
	return ret;
}
