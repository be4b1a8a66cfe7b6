/*
 * Archiving one sealed segment (retention/retention.h): scan it, check it is old enough
 * and that the index and every sink are past it, write the seekable zstd copy and the
 * manifest durably, and only then remove the hot file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/hex.h"
#include "journal/envelope.h"
#include "retention/retention_impl.h"
#include "journal/zseek.h"

struct scan {
	uint64_t first_seq, last_seq, lines;
	int64_t last_ts_us;
	char first_ts[28], last_ts[28];
	char *checkpoint;                /* the last journal.checkpoint's note */
	json_t *sessions;                /* object used as a set */
	bool tree_known;                 /* the Merkle state at the start was found */
	struct merkle_range tree;        /* ... and after every line scanned */
	uint8_t last_leaf[MERKLE_HASH_LEN];
};

static void scan_line(struct scan *sc, const char *line, size_t len)
{
	struct line_envelope env;
	json_t *o = NULL, *sid;

	if (sc->tree_known) {
		merkle_leaf_hash(line, len, sc->last_leaf);
		sc->tree_known = merkle_range_append(&sc->tree, sc->last_leaf) == 0;
	}
	if (line_envelope_parse(line, len, &env))
		return;   /* damage is verify's to report; the bytes are archived as they are */
	if (sc->lines++ == 0) {
		sc->first_seq = env.seq;
		memcpy(sc->first_ts, env.ts, 27);
	}
	sc->last_seq = env.seq;
	memcpy(sc->last_ts, env.ts, 27);
	(void)line_ts_parse(env.ts, 27, &sc->last_ts_us);
	(void)line_json_load(line, len, &o);   /* NULL when it is none: nothing found */
	sid = json_object_get(o, "session_id");
	if (json_is_string(sid))
		json_object_set_new(sc->sessions, json_string_value(sid), json_true());
	if (env.event_len == 18 && memcmp(env.event, "journal.checkpoint", 18) == 0 &&
	    json_is_string(json_object_get(o, "note"))) {
		free(sc->checkpoint);
		sc->checkpoint = strdup(json_string_value(json_object_get(o, "note")));
	}
	json_decref(o);
}

static void scan_all(struct scan *sc, const char *data, size_t len)
{
	const char *p = data, *end = data + len, *nl;

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		scan_line(sc, p, (size_t)(nl - p));
		p = nl + 1;
	}
}

static int read_whole(const char *path, char **data, size_t *len)
{
	struct stat st;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (!(*data = malloc((size_t)st.st_size + 1)))
		ret = -ENOMEM;
	else if ((got = pread(fd, *data, (size_t)st.st_size, 0)) != st.st_size)
		ret = got < 0 ? -errno : -EIO;
	close(fd);
	if (ret == 0)
		*len = (size_t)st.st_size;
	return ret;
}

/* The index and every sink must have read past seg before it leaves the hot tier. */
static bool consumers_past(struct retention_run *r, uint64_t seg)
{
	struct follow_cursor c;
	struct dirent *de;
	DIR *d;
	bool ok = true;

	if (r->db && (index_db_cursor(r->db, &c) != 0 || c.segment <= seg))
		return false;
	d = opendir(r->sinks_dir);
	while (d && ok && (de = readdir(d))) {
		char path[8192];
		FILE *f;
		uint64_t seq, s;

		if (!strstr(de->d_name, ".cursor") || strstr(de->d_name, ".tmp"))
			continue;
		/* A stalled sink (sinks/sink_stats.c) no longer holds the disk hostage. */
		snprintf(path, sizeof(path), "%s/%.*s.stalled", r->sinks_dir,
			 (int)(strstr(de->d_name, ".cursor") - de->d_name), de->d_name);
		if (access(path, F_OK) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", r->sinks_dir, de->d_name);
		f = fopen(path, "re");
		ok = f && fscanf(f, "%" SCNu64 " %" SCNu64, &seq, &s) == 2 && s > seg;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return ok;
}

void retention_sha256_hex(const char *data, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0;

	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	hex_encode(md, sizeof(md), out);
}

static int write_manifest(struct retention_run *r, const char *name, const struct scan *sc,
			  const char *data, size_t len, uint64_t cold_bytes)
{
	char path[8192], sha[65];
	json_t *m, *tree = NULL;
	char *text;
	int ret;

	/* Without the state before the segment there is none after it: verify will say
	 * that a purge of this segment cannot be bridged. */
	if (sc->tree_known && sc->tree.size == sc->last_seq + 1 &&
	    !(tree = retention_tree_json(&sc->tree, sc->last_leaf)))
		return -ENOMEM;
	retention_sha256_hex(data, len, sha);
	m = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:s, s:s, s:s?, s:O, s:I}",
		      "segment", name, "first_seq", (json_int_t)sc->first_seq,
		      "last_seq", (json_int_t)sc->last_seq, "lines", (json_int_t)sc->lines,
		      "bytes", (json_int_t)len, "cold_bytes", (json_int_t)cold_bytes,
		      "sha256", sha, "first_ts", sc->first_ts, "last_ts", sc->last_ts,
		      "checkpoint", sc->checkpoint, "sessions", sc->sessions,
		      "last_ts_us", (json_int_t)sc->last_ts_us);
	if (m && tree && json_object_set_new(m, "tree", tree) < 0) {
		json_decref(m);
		m = NULL;
	} else if (!m) {
		json_decref(tree);
	}
	text = m ? json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(m);
	if (!text)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%s.manifest.json", r->cold_dir, name);
	ret = file_replace_atomic(path, text, strlen(text), 0600);
	free(text);
	return ret;
}

static int move_cold(struct retention_run *r, const char *name, uint64_t seg,
		     const struct scan *sc, const char *data, size_t len)
{
	char zpath[8192], hot[8192];
	struct stat st;
	int ret;

	snprintf(zpath, sizeof(zpath), "%s/%s.zst", r->cold_dir, name);
	snprintf(hot, sizeof(hot), "%s/%s", r->journal_dir, name);
	ret = zseek_write_file(zpath, data, len, 3);
	if (ret == 0 && stat(zpath, &st) < 0)
		ret = -errno;
	if (ret == 0)
		ret = write_manifest(r, name, sc, data, len, (uint64_t)st.st_size);
	if (ret == 0)
		ret = dir_fsync(r->cold_dir);
	if (ret == 0 && r->db)
		ret = index_db_mark_cold(r->db, seg);
	if (ret == 0 && unlink(hot) < 0)
		ret = -errno;
	if (ret == 0)
		ret = dir_fsync(r->journal_dir);
	if (ret == 0 && r->fn) {
		struct retention_item it = {
			.segment = name, .first_seq = sc->first_seq, .last_seq = sc->last_seq,
			.lines = sc->lines, .bytes = len, .cold_bytes = (uint64_t)st.st_size,
			.checkpoint = sc->checkpoint, .cold_path = zpath,
		};

		r->fn(r->ctx, "retention.archive", &it);
	}
	return ret;
}

/* The last line's time from the file's tail, so segments not yet due cost one read. */
static int last_ts(const char *path, int64_t *us)
{
	char buf[8192];
	struct line_envelope env;
	ssize_t got;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -EINVAL;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && st.st_size > 1) {
		off_t from = st.st_size > (off_t)sizeof(buf) ? st.st_size - (off_t)sizeof(buf) : 0;

		got = pread(fd, buf, sizeof(buf), from);
		for (ssize_t i = got - 2; i >= 0 && ret == -EINVAL; i--)
			if (i == 0 || buf[i - 1] == '\n') {
				if (line_envelope_parse(buf + i, (size_t)(got - 1 - i), &env) == 0)
					ret = line_ts_parse(env.ts, 27, us);
				break;
			}
	}
	close(fd);
	return ret;
}

int retention_archive_one(struct retention_run *r, const char *name, uint64_t seg)
{
	struct scan sc = { .sessions = json_object() };
	char path[8192], *data = NULL;
	size_t len = 0;
	int ret = sc.sessions ? 0 : -ENOMEM;

	snprintf(path, sizeof(path), "%s/%s", r->journal_dir, name);
	/* Not due, or a consumer still reading it: nothing to do (and nothing to read). */
	if (ret == 0 && (last_ts(path, &sc.last_ts_us) != 0 ||
			 sc.last_ts_us + (int64_t)r->s->hot_ms * 1000 > r->now_us ||
			 !consumers_past(r, seg))) {
		json_decref(sc.sessions);
		return 0;
	}
	if (ret == 0)
		ret = read_whole(path, &data, &len);
	if (ret == 0)
		sc.tree_known = retention_tree_start(r, seg, &sc.tree, sc.last_leaf) == 0;
	if (ret == 0)
		scan_all(&sc, data, len);
	if (ret == 0 && sc.lines &&
	    sc.last_ts_us + (int64_t)r->s->hot_ms * 1000 <= r->now_us && consumers_past(r, seg))
		ret = move_cold(r, name, seg, &sc, data, len);
	free(data);
	free(sc.checkpoint);
	json_decref(sc.sessions);
	return ret;
}
