/* Running a built query (index/index_query.h) and reading the lines back. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_impl.h"
#include "journal/envelope.h"
#include "index/index_query.h"

static int bind_all(sqlite3_stmt *st, const struct index_sql *s)
{
	int rc = SQLITE_OK;

	for (size_t i = 0; i < s->n_params && rc == SQLITE_OK; i++) {
		const struct index_param *p = &s->params[i];

		if (p->kind == INDEX_PARAM_INT)
			rc = sqlite3_bind_int64(st, (int)i + 1, p->i);
		else
			rc = sqlite3_bind_text(st, (int)i + 1, p->text, -1, SQLITE_STATIC);
	}
	return index_sql_err(rc);
}

/* The line read back must be the one indexed: its envelope, whole, names the same seq. */
static bool line_is(const char *line, size_t len, uint64_t seq)
{
	struct line_envelope env;

	return line_envelope_parse_strict(line, len, &env) == 0 && env.seq == seq;
}

static int emit_row(struct index_db *db, sqlite3_stmt *st, index_result_fn fn, void *ctx)
{
	uint64_t seq = (uint64_t)sqlite3_column_int64(st, 0);
	struct follow_pos pos = {
		.segment = (uint64_t)sqlite3_column_int64(st, 1),
		.offset = (uint64_t)sqlite3_column_int64(st, 2),
		.len = (size_t)sqlite3_column_int64(st, 3),
	};
	char *line = NULL;
	int ret = follow_read_line(db->journal_dir, &pos, &line);

	if (ret == -ENOENT)
		ret = index_cold_line(db, &pos, &line);   /* moved to the cold tier */

	if (ret == -ENOENT || ret == -EIO || (ret == 0 && !line_is(line, pos.len, seq)))
		ret = -ESTALE;
	if (ret == 0)
		ret = fn(ctx, seq, line, pos.len);
	free(line);
	return ret;
}

int index_query_run(struct index_db *db, const struct index_query *q, index_result_fn fn,
		    void *ctx)
{
	struct index_sql *s = malloc(sizeof(*s));
	sqlite3_stmt *st = NULL;
	int rc, ret;

	if (!s)
		return -ENOMEM;
	ret = index_sql_build(q, s);
	if (ret == 0)
		ret = index_sql_err(sqlite3_prepare_v2(db->h, s->sql, -1, &st, NULL));
	if (ret == 0)
		ret = bind_all(st, s);
	while (ret == 0 && (rc = sqlite3_step(st)) != SQLITE_DONE) {
		if (rc != SQLITE_ROW)
			ret = index_sql_err(rc);
		else
			ret = emit_row(db, st, fn, ctx);
	}
	sqlite3_finalize(st);
	free(s);
	return ret;
}
