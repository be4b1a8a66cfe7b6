/* A retention pass (retention/retention.h): archive what is due, then purge what is due. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "journal/journal_impl.h"
#include "retention/retention_impl.h"

bool retention_held(const struct retention_settings *s, json_t *sessions)
{
	if (s->hold_all)
		return true;
	for (size_t i = 0; i < s->n_hold; i++)
		if (json_object_get(sessions, s->hold_sessions[i]))
			return true;
	return false;
}

/* Every sealed segment (not the last, which the writer may still append to). */
static int archive_pass(struct retention_run *r)
{
	char (*names)[SEGMENT_NAME_LEN + 1] = NULL;
	size_t n = 0;
	int ret = segment_list(r->journal_dir, &names, &n);

	for (size_t i = 0; ret == 0 && i + 1 < n; i++)
		ret = retention_archive_one(r, names[i], strtoull(names[i], NULL, 10));
	free(names);
	return ret;
}

/*
 * The tombstone NAME.purged.json: the manifest (seq range, checkpoint, Merkle state after
 * the segment) and when it was purged. Written before the data goes.
 */
static int write_tombstone(struct retention_run *r, const char *base, json_t *m)
{
	char path[8192], *text;
	int ret;

	if (json_object_set_new(m, "purged_at_us", json_integer(r->now_us)) < 0)
		return -ENOMEM;
	text = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%s.purged.json", r->cold_dir, base);
	ret = file_replace_atomic(path, text, strlen(text), 0600);
	free(text);
	return ret;
}

static int purge_one(struct retention_run *r, const char *manifest_name)
{
	char path[8192], base[256];
	json_t *m;
	size_t blen = strlen(manifest_name) - strlen(".manifest.json");
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%s", r->cold_dir, manifest_name);
	m = json_load_file(path, 0, NULL);
	if (!m)
		return 0;   /* unreadable: kept (never purge what cannot be judged) */
	if (json_integer_value(json_object_get(m, "last_ts_us")) +
		    (int64_t)r->s->cold_ms * 1000 > r->now_us ||
	    retention_held(r->s, json_object_get(m, "sessions")) || blen >= sizeof(base)) {
		json_decref(m);
		return 0;
	}
	memcpy(base, manifest_name, blen);
	base[blen] = '\0';
	ret = write_tombstone(r, base, m);
	if (ret == 0 && r->db)
		ret = index_db_forget_segment(r->db, strtoull(base, NULL, 10));
	snprintf(path, sizeof(path), "%s/%s.zst", r->cold_dir, base);
	if (ret == 0 && unlink(path) < 0 && errno != ENOENT)
		ret = -errno;
	snprintf(path, sizeof(path), "%s/%s", r->cold_dir, manifest_name);
	if (ret == 0 && unlink(path) < 0)
		ret = -errno;
	if (ret == 0)
		ret = dir_fsync(r->cold_dir);
	if (ret == 0 && r->fn) {
		struct retention_item it = {
			.segment = base,
			.first_seq = (uint64_t)json_integer_value(json_object_get(m, "first_seq")),
			.last_seq = (uint64_t)json_integer_value(json_object_get(m, "last_seq")),
			.lines = (uint64_t)json_integer_value(json_object_get(m, "lines")),
			.bytes = (uint64_t)json_integer_value(json_object_get(m, "bytes")),
			.checkpoint = json_string_value(json_object_get(m, "checkpoint")),
		};

		r->fn(r->ctx, "retention.purge", &it);
	}
	json_decref(m);
	return ret;
}

static int purge_pass(struct retention_run *r)
{
	struct dirent *de;
	DIR *d = opendir(r->cold_dir);
	int ret = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (ret == 0 && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n > 14 && strcmp(de->d_name + n - 14, ".manifest.json") == 0)
			ret = purge_one(r, de->d_name);
	}
	closedir(d);
	return ret;
}

static int setup(struct retention_run *r, const struct retention_settings *s)
{
	const char *sd = s->state_dir;
	char idx[8192];

	if ((size_t)snprintf(r->journal_dir, sizeof(r->journal_dir), "%s/journal", sd) >=
		    sizeof(r->journal_dir) ||
	    (size_t)snprintf(r->cold_dir, sizeof(r->cold_dir), "%s/cold", sd) >=
		    sizeof(r->cold_dir) ||
	    (size_t)snprintf(r->sinks_dir, sizeof(r->sinks_dir), "%s/sinks", sd) >=
		    sizeof(r->sinks_dir))
		return -ENAMETOOLONG;
	if (mkdir(r->cold_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* With an index kept, even one not created yet, segments wait until it has them. */
	snprintf(idx, sizeof(idx), "%s/index/index.db", sd);
	if (s->index || access(idx, F_OK) == 0)
		return index_db_open(&r->db, sd, INDEX_WRITE, NULL);
	return 0;
}

int retention_pass(const struct retention_settings *s, int64_t now_us, retention_fn fn,
		   void *ctx)
{
	struct retention_run r = { .s = s, .now_us = now_us, .fn = fn, .ctx = ctx };
	int ret = setup(&r, s);

	if (ret == 0)
		ret = archive_pass(&r);
	if (ret == 0)
		ret = purge_pass(&r);
	index_db_close(r.db);
	return ret;
}
