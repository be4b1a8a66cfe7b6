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

#include "common/buf.h"
#include "index/index_impl.h"
#include "journal/envelope.h"
#include "journal/handoff.h"
#include "journal/zseek.h"

int index_prepare(struct index_db *db)
{
	static const char ins_event[] =
		"INSERT OR IGNORE INTO events(seq, ts, eid, sid, segment, off, len,"
		" pkg_name, pkg_version, reason, uid, euid, pid, ppid)"
		" VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
	static const char ins_name[] =
		"INSERT OR IGNORE INTO names(kind, value, first_seq, segment, seqs)"
		" VALUES(?,?,?,?,?)";
	static const char get_event_id[] = "SELECT id FROM event_names WHERE event = ?";
	static const char ins_event_name[] = "INSERT INTO event_names(event) VALUES(?)";
	static const char get_session_id[] = "SELECT id FROM sessions WHERE session_id = ?";
	static const char ins_session[] = "INSERT INTO sessions(session_id) VALUES(?)";
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
		rc = sqlite3_prepare_v2(db->h, get_event_id, -1, &db->get_event_id, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db->h, ins_event_name, -1, &db->ins_event_name, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db->h, get_session_id, -1, &db->get_session_id, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db->h, ins_session, -1, &db->ins_session, NULL);
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

/* Keeps a names row for the end of the batch. 0 or -ENOMEM. */
static int pend_name(struct index_db *db, int kind, const char *value, uint64_t seq,
		     uint64_t segment)
{
	size_t len = strlen(value) + 1;

	if (db->n_pending == db->cap_pending) {
		size_t cap = db->cap_pending ? 2 * db->cap_pending : 4096;
		struct index_pending_name *p = realloc(db->pending, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		db->pending = p;
		db->cap_pending = cap;
	}
	if (db->text_len + len > db->text_cap) {
		size_t cap = db->text_cap ? 2 * db->text_cap : 256 * 1024;
		char *t;

		while (cap < db->text_len + len)
			cap *= 2;
		t = realloc(db->pending_text, cap);
		if (!t)
			return -ENOMEM;
		db->pending_text = t;
		db->text_cap = cap;
	}
	memcpy(db->pending_text + db->text_len, value, len);
	db->pending[db->n_pending++] = (struct index_pending_name){
		.seq = seq, .segment = segment, .value_at = db->text_len, .kind = kind };
	db->text_len += len;
	return 0;
}

static int pend_names(struct index_db *db, const struct index_row *r, uint64_t segment)
{
	int ret = 0;

	for (size_t i = 0; i < r->n_names && ret == 0; i++) {
		/* A name the line already gave (sni = domain, mostly) would only be ignored. */
		if (i > 0 && name_seen(r, i))
			continue;
		ret = pend_name(db, (int)r->names[i].kind, r->names[i].value, r->seq, segment);
	}
	return ret;
}

/* The order of the names table's key (kind, value, seq); SQLite compares text bytewise.
 * text: the batch's pending_text (qsort_r's argument). */
static int pending_cmp(const void *a, const void *b, void *text)
{
	const struct index_pending_name *x = a, *y = b;
	const char *pending_text_base = text;
	int c;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	c = strcmp(pending_text_base + x->value_at, pending_text_base + y->value_at);
	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The batch's names as postings: sorted by (kind, value, seq), each run of one name in
 * one segment becomes one row whose seqs lists its lines ("[3,17,20]"). A row never
 * spans segments, so a segment's rows can be deleted whole (index_cold.c).
 */
static int insert_pending(struct index_db *db)
{
	struct buf seqs;
	size_t i = 0, j;
	int ret = 0;

	if (db->n_pending > 1)
		qsort_r(db->pending, db->n_pending, sizeof(*db->pending), pending_cmp,
			db->pending_text);
	buf_init(&seqs);
	while (i < db->n_pending && ret == 0) {
		const struct index_pending_name *p = &db->pending[i];
		const char *value = db->pending_text + p->value_at;

		buf_reset(&seqs);
		buf_putc(&seqs, '[');
		for (j = i; j < db->n_pending; j++) {
			const struct index_pending_name *q = &db->pending[j];

			if (q->kind != p->kind || q->segment != p->segment ||
			    (q->value_at != p->value_at &&
			     strcmp(db->pending_text + q->value_at, value) != 0))
				break;
			if (j > i)
				buf_putc(&seqs, ',');
			buf_put_u64(&seqs, q->seq);
		}
		buf_putc(&seqs, ']');
		if (seqs.oom) {
			ret = -ENOMEM;
			break;
		}
		sqlite3_bind_int(db->ins_name, 1, p->kind);
		bind_text(db->ins_name, 2, value);
		sqlite3_bind_int64(db->ins_name, 3, (sqlite3_int64)p->seq);
		sqlite3_bind_int64(db->ins_name, 4, (sqlite3_int64)p->segment);
		sqlite3_bind_text(db->ins_name, 5, seqs.data, (int)seqs.len, SQLITE_STATIC);
		ret = run(db->ins_name);
		i = j;
	}
	buf_free(&seqs);
	db->n_pending = 0;
	db->text_len = 0;
	return ret;
}

void index_pending_free(struct index_db *db)
{
	free(db->pending);
	free(db->pending_text);
	db->pending = NULL;
	db->pending_text = NULL;
	db->n_pending = db->cap_pending = db->text_len = db->text_cap = 0;
}

static void forget_sessions(struct index_db *db)
{
	for (size_t i = 0; i < INDEX_KNOWN_SESSIONS; i++) {
		free(db->known_sessions[i].session_id);
		db->known_sessions[i].session_id = NULL;
	}
	db->n_known_sessions = 0;
}

void index_forget_known(struct index_db *db)
{
	for (size_t i = 0; i < db->n_known; i++)
		free(db->known_events[i]);
	db->n_known = 0;
	forget_sessions(db);
}

/*
 * The id of text in a dictionary table (event_names, sessions): looked up with get,
 * inserted with ins when absent. 0 and *id, or -errno.
 */
static int dict_id(struct index_db *db, sqlite3_stmt *get, sqlite3_stmt *ins,
		   const char *text, int64_t *id)
{
	int rc;

	bind_text(get, 1, text);
	rc = sqlite3_step(get);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(get, 0);
	sqlite3_reset(get);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc != SQLITE_DONE)
		return index_sql_err(rc);
	bind_text(ins, 1, text);
	rc = run(ins);
	if (rc == 0)
		*id = sqlite3_last_insert_rowid(db->h);
	return rc;
}

/* The event name's id: a handful of names, so a lookup in memory spares nearly every
 * line a statement. */
static int event_id(struct index_db *db, const char *event, int64_t *id)
{
	int ret;

	for (size_t i = 0; i < db->n_known; i++)
		if (strcmp(db->known_events[i], event) == 0) {
			*id = db->known_event_ids[i];
			return 0;
		}
	ret = dict_id(db, db->get_event_id, db->ins_event_name, event, id);
	if (ret == 0 && db->n_known < INDEX_KNOWN_EVENTS &&
	    (db->known_events[db->n_known] = strdup(event))) {
		db->known_event_ids[db->n_known] = *id;
		db->n_known++;
	}
	return ret;
}

/* FNV-1a: the slot of a session id in the cache. */
static size_t session_slot(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)(h & (INDEX_KNOWN_SESSIONS - 1));
}

/*
 * The session's id, through a cache of INDEX_KNOWN_SESSIONS slots (open addressing;
 * when 3/4 full it is emptied and refilled by the lines that follow: a host runs far
 * fewer live sessions than that, and a miss costs one lookup statement, not a wrong id).
 */
static int session_id(struct index_db *db, const char *session, int64_t *id)
{
	size_t i = session_slot(session);
	int ret;

	for (; db->known_sessions[i].session_id; i = (i + 1) & (INDEX_KNOWN_SESSIONS - 1))
		if (strcmp(db->known_sessions[i].session_id, session) == 0) {
			*id = db->known_sessions[i].id;
			return 0;
		}
	ret = dict_id(db, db->get_session_id, db->ins_session, session, id);
	if (ret)
		return ret;
	if (db->n_known_sessions >= INDEX_KNOWN_SESSIONS / 4 * 3) {
		forget_sessions(db);
		i = session_slot(session);
	}
	db->known_sessions[i].session_id = strdup(session);
	if (db->known_sessions[i].session_id) {
		db->known_sessions[i].id = *id;
		db->n_known_sessions++;
	}
	return 0;
}

static int insert_row(struct index_db *db, const struct index_row *r,
		      const struct follow_pos *pos)
{
	sqlite3_stmt *st = db->ins_event;
	int64_t eid = 0, sid = 0;
	int ret = event_id(db, r->event, &eid);

	if (ret == 0 && r->session_id)
		ret = session_id(db, r->session_id, &sid);
	if (ret)
		return ret;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)r->seq);
	sqlite3_bind_int64(st, 2, r->ts_us);
	sqlite3_bind_int64(st, 3, eid);
	bind_opt(st, 4, r->session_id != NULL, sid);
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
	/* A seq seen before (duplicate line after a cursor reset) keeps its first names. */
	if (ret == 0 && sqlite3_changes(db->h) > 0)
		ret = pend_names(db, r, pos->segment);
	return ret;
}

static int on_line(void *ctx, const char *line, size_t len, const struct follow_pos *pos)
{
	struct index_db *db = ctx;
	struct index_row row;
	uint64_t seq;
	int ret;

	/* From the writer's shape of the line when it still has it: the JSON not read. */
	if (db->handoff && line_envelope_seq(line, len, &seq) == 0 &&
	    handoff_get(db->handoff, seq, line, len, &db->shape)) {
		ret = index_extract_shaped(line, len, &db->shape, &row);
		db->lines_shaped++;
	} else {
		ret = index_extract(line, len, &row);
		db->lines_scanned++;
	}

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
	if (ret == 0)
		ret = insert_pending(db);
	if (ret == 0 && *n)
		ret = store_cursor(db, &c);
	if (ret == 0)
		ret = index_sql_err(sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL));
	if (ret) {
		(void)sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		index_forget_known(db);
		db->n_pending = db->text_len = 0;
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
		ret = index_db_step(db, INDEX_BATCH_LINES, &n);
		*total += n;
	} while (ret == 0 && n > 0);
	return ret;
}

int index_db_reset(struct index_db *db)
{
	static const char sql[] =
		"BEGIN IMMEDIATE; DELETE FROM names; DELETE FROM events; DELETE FROM cold;"
		" UPDATE cursor SET next_seq = 0, segment = 0, off = 0 WHERE id = 0; COMMIT;";
	int ret;

	/* event_names and sessions stay: their ids may be cached by another indexer. */
	if (db->readonly)
		return -EROFS;
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
		ret = insert_pending(db);
	if (ret == 0)
		ret = index_db_mark_cold(db, seg);
	if (ret == 0)
		ret = index_sql_err(sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL));
	else if (data)
		(void)sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	if (ret) {
		index_forget_known(db);
		db->n_pending = db->text_len = 0;
	}
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
