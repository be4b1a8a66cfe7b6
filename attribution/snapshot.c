/*
 * What a session looked like when it was frozen: its workdir's files (path, inode,
 * size, mtime, ctime; ctime catches `touch -d` backdating) and its processes (pid with
 * start time). Compared at resume, the difference is changed_while_paused: the session
 * could not have made those changes itself, since it was frozen.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attribution/attribution.h"
#include "journal/event.h"

#define SNAPSHOT_MAX_DEPTH 32

struct fentry {
	char *path;            /* relative to the workdir */
	uint64_t ino, size;
	int64_t mtime_ns, ctime_ns;
};

struct pentry {
	pid_t pid;
	uint64_t start;
};

struct snapshot {
	struct fentry *f;
	size_t nf, capf;
	bool truncated;
	struct pentry *p;
	size_t np;
};

void snapshot_free(struct snapshot *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nf; i++)
		free(s->f[i].path);
	free(s->f);
	free(s->p);
	free(s);
}

static int add_file(struct snapshot *s, const char *rel, const struct stat *st)
{
	struct fentry *grown;

	if (s->nf == SNAPSHOT_MAX_FILES) {
		s->truncated = true;
		return 0;
	}
	if (s->nf == s->capf) {
		size_t cap = s->capf ? s->capf * 2 : 64;

		grown = realloc(s->f, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		s->f = grown;
		s->capf = cap;
	}
	s->f[s->nf].path = strdup(rel);
	if (!s->f[s->nf].path)
		return -ENOMEM;
	s->f[s->nf].ino = st->st_ino;
	s->f[s->nf].size = (uint64_t)st->st_size;
	s->f[s->nf].mtime_ns = st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
	s->f[s->nf].ctime_ns = st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
	s->nf++;
	return 0;
}

/* Walks dfd (owned) without following symlinks; rel is its path below the workdir. */
static int walk(struct snapshot *s, int dfd, const char *rel, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	struct stat st;
	char sub[4096];
	int ret = 0, cfd;

	if (!d) {
		close(dfd);
		return -errno;
	}
	while (ret == 0 && !s->truncated && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;   /* vanished while we looked: the next snapshot says so */
		snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", de->d_name);
		ret = add_file(s, sub, &st);
		if (ret || !S_ISDIR(st.st_mode))
			continue;
		if (depth >= SNAPSHOT_MAX_DEPTH) {
			s->truncated = true;
			continue;
		}
		cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd >= 0)
			ret = walk(s, cfd, sub, depth + 1);
	}
	closedir(d);
	return ret;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct fentry *)a)->path, ((const struct fentry *)b)->path);
}

static int take_procs(struct snapshot *s, const struct cg_host *h, const char *rel)
{
	pid_t *pids = NULL;
	size_t i, n = 0;
	int ret = cg_pids(h, rel, &pids, &n);

	if (ret)
		return ret;
	s->p = calloc(n ? n : 1, sizeof(*s->p));
	if (!s->p) {
		free(pids);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		s->p[s->np].pid = pids[i];
		if (proc_starttime(pids[i], &s->p[s->np].start) == 0)
			s->np++;
	}
	free(pids);
	return 0;
}

int snapshot_take(const struct cg_host *h, const char *rel, const char *workdir,
		  struct snapshot **out)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	int ret = 0, fd;

	if (!s)
		return -ENOMEM;
	if (workdir) {
		fd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ret = fd < 0 ? -errno : walk(s, fd, "", 0);
		qsort(s->f, s->nf, sizeof(*s->f), cmp_file);
	}
	if (ret == 0)
		ret = take_procs(s, h, rel);
	if (ret) {
		snapshot_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

static bool proc_in(const struct snapshot *s, const struct pentry *p)
{
	size_t i;

	for (i = 0; i < s->np; i++)
		if (s->p[i].pid == p->pid && s->p[i].start == p->start)
			return true;
	return false;
}

static size_t emit_procs(const struct snapshot *from, const struct snapshot *not_in,
			 struct event *e, const char *key)
{
	size_t i, n = 0;

	event_array_begin(e, key);
	for (i = 0; i < from->np; i++) {
		if (!proc_in(not_in, &from->p[i])) {
			event_int(e, NULL, from->p[i].pid);
			n++;
		}
	}
	event_array_end(e);
	return n;
}

/* Merge of two sorted lists: one pass, each kind listed up to SNAPSHOT_MAX_LIST. */
static size_t emit_files(const struct snapshot *a, const struct snapshot *b, struct event *e,
			 int kind)
{
	size_t i = 0, j = 0, n = 0;
	int c;

	while (i < a->nf || j < b->nf) {
		c = i == a->nf ? 1 : j == b->nf ? -1 : strcmp(a->f[i].path, b->f[j].path);
		if (c == 0) {
			const struct fentry *x = &a->f[i++], *y = &b->f[j++];
			bool changed = x->ino != y->ino || x->size != y->size ||
				       x->mtime_ns != y->mtime_ns || x->ctime_ns != y->ctime_ns;

			if (kind == 0 && changed && n++ < SNAPSHOT_MAX_LIST)
				event_str(e, NULL, x->path);
		} else if (c < 0) {
			if (kind == 2 && n++ < SNAPSHOT_MAX_LIST)
				event_str(e, NULL, a->f[i].path);
			i++;
		} else {
			if (kind == 1 && n++ < SNAPSHOT_MAX_LIST)
				event_str(e, NULL, b->f[j].path);
			j++;
		}
	}
	return n;
}

static size_t emit_file_kinds(const struct snapshot *before, const struct snapshot *after,
			      struct event *e)
{
	static const char *const kinds[] = { "modified", "created", "deleted" };
	size_t k, n = 0, total = 0;

	for (k = 0; k < 3; k++) {
		event_array_begin(e, kinds[k]);
		n = emit_files(before, after, e, (int)k);
		event_array_end(e);
		total += n;
	}
	return total;
}

int snapshot_diff_emit(const struct snapshot *before, const struct cg_host *h,
		       const char *rel, const char *workdir, struct event *e,
		       const char *key, size_t *nfiles, size_t *nprocs)
{
	struct snapshot *after = NULL;
	int ret = snapshot_take(h, rel, workdir, &after);

	if (ret)
		return ret;
	*nfiles = 0;
	event_object_begin(e, key);
	if (workdir) {
		event_object_begin(e, "files");
		*nfiles = emit_file_kinds(before, after, e);
		event_uint(e, "count", *nfiles);
		event_bool(e, "truncated", before->truncated || after->truncated ||
						   *nfiles > SNAPSHOT_MAX_LIST);
		event_object_end(e);
	} else {
		event_null(e, "files");
	}
	event_object_begin(e, "processes");
	*nprocs = emit_procs(after, before, e, "appeared");
	*nprocs += emit_procs(before, after, e, "vanished");
	event_object_end(e);
	event_object_end(e);
	snapshot_free(after);
	return 0;
}
