/* The cold tier for `sandgate verify` (cli/verify_cold.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/verify_cold.h"
#include "retention/retention.h"
#include "journal/zseek.h"

#define PROG "sandgate verify"

static int write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len)
		ret = -EIO;
	close(fd);
	return ret;
}

/* One cold segment: its bytes match the manifest; written into tmp under its name. */
static int one_cold(const char *cold, const char *name, const char *tmp)
{
	char path[8192], sha[65];
	json_t *m;
	char *data = NULL;
	size_t len = 0, base = strlen(name) - 4;   /* without ".zst" */
	int ret;

	snprintf(path, sizeof(path), "%s/%s", cold, name);
	ret = zseek_read_all(path, &data, &len);
	if (ret) {
		fprintf(stderr, PROG ": %s: cannot read: %s\n", path, strerror(-ret));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%.*s.manifest.json", cold, (int)base, name);
	m = json_load_file(path, 0, NULL);
	retention_sha256_hex(data, len, sha);
	if (!json_is_string(json_object_get(m, "sha256")) ||
	    strcmp(json_string_value(json_object_get(m, "sha256")), sha) != 0) {
		fprintf(stderr, PROG ": cold segment %.*s: modified (its SHA-256 is not the "
			"manifest's, or the manifest is missing)\n", (int)base, name);
		ret = 1;
	}
	json_decref(m);
	snprintf(path, sizeof(path), "%s/%.*s", tmp, (int)base, name);
	if (ret == 0 && write_file(path, data, len) != 0) {
		fprintf(stderr, PROG ": %s: cannot write\n", path);
		ret = 1;
	}
	free(data);
	return ret;
}

/* Links to the hot segments and the checkpoints file, beside the cold copies. */
static int link_hot(const char *journal, const char *tmp)
{
	struct dirent *de;
	DIR *d = opendir(journal);
	int ret = 0;

	if (!d)
		return 1;
	while (ret == 0 && (de = readdir(d))) {
		char from[8192], to[8192];
		size_t n = strlen(de->d_name);

		if (!(n == 26 && strcmp(de->d_name + 20, ".jsonl") == 0) &&
		    strcmp(de->d_name, "checkpoints") != 0)
			continue;
		snprintf(from, sizeof(from), "%s/%s", journal, de->d_name);
		snprintf(to, sizeof(to), "%s/%s", tmp, de->d_name);
		if (symlink(from, to) < 0 && errno != EEXIST)
			ret = 1;
	}
	closedir(d);
	return ret;
}

struct tombstones {
	struct verify_purged *v;
	size_t n, cap;
};

/* One NAME.purged.json: its seq range and the Merkle state after it. */
static int one_tombstone(const char *cold, const char *name, struct tombstones *t)
{
	char path[8192];
	json_t *m, *first, *last;
	struct verify_purged p;
	int ret = 1;

	snprintf(path, sizeof(path), "%s/%s", cold, name);
	m = json_load_file(path, 0, NULL);
	first = json_object_get(m, "first_seq");
	last = json_object_get(m, "last_seq");
	if (json_is_integer(first) && json_is_integer(last) &&
	    json_integer_value(first) >= 0 && json_integer_value(last) >= json_integer_value(first) &&
	    retention_tree_parse(json_object_get(m, "tree"), &p.tree, p.next_prev) == 0) {
		p.first_seq = (uint64_t)json_integer_value(first);
		p.last_seq = (uint64_t)json_integer_value(last);
		ret = 0;
	}
	json_decref(m);
	if (ret) {
		/* Not fatal here: the range it stood for shows as deleted, with its seq. */
		fprintf(stderr, PROG ": %s: not a usable tombstone (no seq range or tree)\n", path);
		return 0;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct verify_purged *nv = realloc(t->v, cap * sizeof(*nv));

		if (!nv) {
			fprintf(stderr, PROG ": out of memory\n");
			return 1;
		}
		t->v = nv;
		t->cap = cap;
	}
	t->v[t->n++] = p;
	return 0;
}

static int by_first_seq(const void *a, const void *b)
{
	const struct verify_purged *x = a, *y = b;

	return x->first_seq < y->first_seq ? -1 : x->first_seq > y->first_seq;
}

static int assemble(const char *cold, DIR *d, char *journal, const char *tmp,
		    struct tombstones *t)
{
	struct dirent *de;
	int ret = 0;

	while (ret == 0 && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n == 30 && strcmp(de->d_name + 20, ".jsonl.zst") == 0)
			ret = one_cold(cold, de->d_name, tmp);
		else if (n == 38 && strcmp(de->d_name + 20, ".jsonl.purged.json") == 0)
			ret = one_tombstone(cold, de->d_name, t);
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), by_first_seq);
	if (ret == 0)
		ret = link_hot(journal, tmp);
	if (ret == 0)
		snprintf(journal, 4096, "%s", tmp);
	return ret;
}

int verify_cold_prepare(char *journal, char *tmp, size_t len, struct verify_purged **purged,
			size_t *n_purged)
{
	struct tombstones t = { 0 };
	char cold[8192];
	DIR *d;
	int ret;

	tmp[0] = '\0';
	*purged = NULL;
	*n_purged = 0;
	/* The cold tier lies beside the journal: STATE/journal and STATE/cold. */
	snprintf(cold, sizeof(cold), "%s/../cold", journal);
	d = opendir(cold);
	if (!d)
		return 0;
	snprintf(tmp, len, "/tmp/sgverify.XXXXXX");
	if (!mkdtemp(tmp)) {
		fprintf(stderr, PROG ": cannot create a temporary directory: %s\n",
			strerror(errno));
		tmp[0] = '\0';
		closedir(d);
		return 1;
	}
	ret = assemble(cold, d, journal, tmp, &t);
	closedir(d);
	if (ret) {
		free(t.v);
		return ret;
	}
	*purged = t.v;
	*n_purged = t.n;
	return 0;
}

void verify_cold_cleanup(const char *tmp)
{
	struct dirent *de;
	DIR *d;

	if (!tmp[0] || !(d = opendir(tmp)))
		return;
	while ((de = readdir(d))) {
		char path[8192];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp, de->d_name);
		(void)unlink(path);
	}
	closedir(d);
	(void)rmdir(tmp);
}
