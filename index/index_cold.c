/* The index's view of the retention tiers (index/index.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_impl.h"
#include "journal/zseek.h"

static int exec_seg(struct index_db *db, const char *sql, uint64_t segment)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (db->readonly)
		return -EROFS;
	rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, (sqlite3_int64)segment);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : index_sql_err(rc);
}

int index_db_mark_cold(struct index_db *db, uint64_t segment)
{
	return exec_seg(db, "INSERT OR IGNORE INTO cold(segment) VALUES(?)", segment);
}

int index_db_forget_segment(struct index_db *db, uint64_t segment)
{
	int ret = index_sql_err(sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL));

	if (ret == 0)
		/* A names row never spans segments (index_build.c): the segment's go whole.
		 * No index on segment: a scan of the postings, rare (retention). */
		ret = exec_seg(db, "DELETE FROM names WHERE segment = ?", segment);
	if (ret == 0)
		ret = exec_seg(db, "DELETE FROM events WHERE segment = ?", segment);
	if (ret == 0)
		ret = exec_seg(db, "DELETE FROM cold WHERE segment = ?", segment);
	if (ret == 0)
		ret = index_sql_err(sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL));
	if (ret)
		(void)sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}

/* Results come in seq order, so one segment's lines follow each other: keep it whole. */
int index_cold_line(struct index_db *db, const struct follow_pos *pos, char **line)
{
	char path[8192];
	int ret;

	if (!db->cold_data || db->cold_seg != pos->segment) {
		free(db->cold_data);
		db->cold_data = NULL;
		snprintf(path, sizeof(path), "%s/%020" PRIu64 ".jsonl.zst", db->cold_dir,
			 pos->segment);
		ret = zseek_read_all(path, &db->cold_data, &db->cold_len);
		if (ret)
			return ret == -ENOENT ? -ENOENT : -EIO;
		db->cold_seg = pos->segment;
	}
	if (pos->offset > db->cold_len || pos->len > db->cold_len - pos->offset)
		return -EIO;
	*line = strndup(db->cold_data + pos->offset, pos->len);
	return *line ? 0 : -ENOMEM;
}
