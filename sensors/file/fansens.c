/*
 * Sensitive files by identity. At start the sensitive prefixes are walked breadth first
 * (at most FAN_SENS_MAX entries: /etc and the credential directories come first, a large
 * home directory's depths last) and each file and directory is kept by its file handle
 * with its path (the canonical path a read reports) and attributes. The set is kept
 * current from the event stream of every process, host ones included, at the cost of a
 * hash lookup: what is created, linked or moved into a sensitive directory joins it; a
 * sensitive file whose last name is removed leaves it. A read is then recognised by the
 * file read, whatever path reached it (a hard link, a renamed parent, an open by handle).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "sensors/file/fan_int.h"
#include "common/log.h"

struct fanid_ent *fansens_file(struct fanmon *f, const struct fan_dfid *fid)
{
	struct fanid_ent *e;

	if (!fid->set)
		return NULL;
	e = fanid_get(&f->sens, fid->fsid, fid->handle, fid->handle_len);
	return e && (e->flags & FANID_FILE) ? e : NULL;
}

void fansens_add(struct fanmon *f, const struct fan_dfid *fid, const char *path, bool is_dir)
{
	struct fanid_ent *e;

	if (!fid->set)
		return;
	if (fanid_put(&f->sens, fid->fsid, fid->handle, fid->handle_len, &e) != 0) {
		/* Reported (sensor.loss, and a warning the first time): a read through
		 * another name of this file is not recognised. */
		if (f->sens_skipped++ == 0)
			log_warnx("audit: the sensitive identity table is full (%zu): files "
				  "entering sensitive directories are recognised by path only",
				  f->sens.max);
		f->loss[FL_SENS_FULL]++;
		return;
	}
	e->flags = is_dir ? FANID_DIR : FANID_FILE;
	if (!e->path || strcmp(e->path, path) != 0) {
		free(e->path);
		e->path = strdup(path);
	}
}

void fansens_entered(struct fanmon *f, const struct fan_dfid *d, const struct fan_dfid *fid,
		     bool is_dir)
{
	struct fanid_ent *dir;
	char path[PATH_MAX];

	if (!d->set || !d->name || !fid->set)
		return;
	dir = fanid_get(&f->sens, d->fsid, d->handle, d->handle_len);
	if (!dir || !(dir->flags & FANID_DIR) || !dir->path ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir->path, d->name) >= sizeof(path))
		return;
	fansens_add(f, fid, path, is_dir);
}

bool fansens_workdir(struct fanmon *f, const char *sid, const char *path)
{
	bool yes = false;
	size_t n;

	pthread_mutex_lock(&f->wd_mu);
	for (size_t i = 0; !yes && i < FAN_WORKDIRS_MAX; i++) {
		if (!f->wd[i].sid[0] || strcmp(f->wd[i].sid, sid) != 0)
			continue;
		n = strlen(f->wd[i].path);
		yes = n > 0 && strncmp(path, f->wd[i].path, n) == 0 &&
		      (path[n] == '\0' || path[n] == '/' || f->wd[i].path[n - 1] == '/');
	}
	pthread_mutex_unlock(&f->wd_mu);
	return yes;
}

/* ---- the start-up walk ------------------------------------------------------------- */

static uint64_t fsid_at(const char *path)
{
	struct statfs sf;
	int32_t v[2];

	if (statfs(path, &sf) != 0)
		return 0;
	memcpy(v, &sf.f_fsid, sizeof(v));
	return (uint64_t)(uint32_t)v[0] << 32 | (uint32_t)v[1];
}

/* Adds path (file or directory) with its attributes. False when the set is full. */
static bool add_path(struct fanmon *f, const char *path, uint64_t fsid, const struct stat *st)
{
	union {
		struct file_handle fh;
		uint8_t raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	struct fan_dfid fid = { .set = true, .fsid = fsid };
	struct fanid_ent *e;
	int mnt;

	if (f->sens.n >= f->sens.max)
		return false;
	u.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, &u.fh, &mnt, 0) != 0)
		return true;
	fid.handle = u.raw;
	fid.handle_len = 8 + u.fh.handle_bytes;
	fansens_add(f, &fid, path, S_ISDIR(st->st_mode));
	e = fanid_get(&f->sens, fsid, u.raw, fid.handle_len);
	if (e && S_ISREG(st->st_mode))
		e->attr = (struct fan_attr){ .known = true, .mode = st->st_mode & 07777,
					     .uid = st->st_uid, .gid = st->st_gid };
	return true;
}

struct fansens_walk {
	char **v;                    /* directories to list, breadth first */
	size_t head, n, cap;
	DIR *d;                      /* the one being listed */
	uint64_t fsid;
	bool full;
};

static int q_push(struct fansens_walk *q, const char *p)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		char **v = realloc(q->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		q->v = v;
		q->cap = cap;
	}
	if (!(q->v[q->n] = strdup(p)))
		return -ENOMEM;
	q->n++;
	return 0;
}

/* Lists up to *budget entries of the directory at the queue's head into the set,
 * queueing its subdirectories; moves on to the next directory when it is done. */
static void walk_some(struct fanmon *f, struct fansens_walk *q, size_t *budget)
{
	char path[PATH_MAX];
	struct dirent *de = NULL;
	struct stat st;
	const char *dir = q->v[q->head];

	if (!q->d) {
		q->d = opendir(dir);
		q->fsid = fsid_at(dir);
	}
	while (q->d && !q->full && *budget > 0 && (de = readdir(q->d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    (de->d_type != DT_REG && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "",
				     de->d_name) >= sizeof(path) ||
		    lstat(path, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			continue;
		(*budget)--;
		q->full = !add_path(f, path, q->fsid, &st);
		if (!q->full && S_ISDIR(st.st_mode) && q_push(q, path) != 0)
			q->full = true;
	}
	if (q->d && de != NULL && !q->full)
		return;   /* budget spent mid-directory */
	if (q->d)
		closedir(q->d);
	q->d = NULL;
	q->head++;
}

/* The prefix p as directories to walk ("~/x": /root/x and /home/ANY/x) queued on q. */
static void seed(struct fanmon *f, struct fansens_walk *q, const char *p, bool *full)
{
	char pat[PATH_MAX];
	struct stat st;
	glob_t g;

	if (p[0] == '~')
		snprintf(pat, sizeof(pat), "{/root,/home/*}%s", p + 1);
	else
		snprintf(pat, sizeof(pat), "%s", p);
	if (glob(pat, GLOB_BRACE | GLOB_NOSORT, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc && !*full; i++) {
		if (lstat(g.gl_pathv[i], &st) != 0)
			continue;
		*full = !add_path(f, g.gl_pathv[i], fsid_at(g.gl_pathv[i]), &st);
		if (!*full && S_ISDIR(st.st_mode) && q_push(q, g.gl_pathv[i]) != 0)
			*full = true;
	}
	globfree(&g);
}

static void walk_free(struct fansens_walk *q)
{
	if (q->d)
		closedir(q->d);
	for (size_t i = 0; i < q->n; i++)
		free(q->v[i]);
	free(q->v);
	free(q);
}

void fansens_walk_stop(struct fanmon *f)
{
	if (f->walk)
		walk_free(f->walk);
	f->walk = NULL;
}

int fansens_walk_start(struct fanmon *f)
{
	struct fansens_walk *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	/* The short prefixes first: a large home directory must not crowd /etc out. */
	for (size_t i = 0; i < f->n_sensitive && !q->full; i++)
		if (strcmp(f->sensitive[i], "/root") != 0)
			seed(f, q, f->sensitive[i], &q->full);
	for (size_t i = 0; i < f->n_sensitive && !q->full; i++)
		if (strcmp(f->sensitive[i], "/root") == 0)
			seed(f, q, f->sensitive[i], &q->full);
	f->walk = q;
	return 0;
}

bool fansens_walk_step(struct fanmon *f, size_t budget)
{
	struct fansens_walk *q = f->walk;

	while (q && !q->full && q->head < q->n && budget > 0)
		walk_some(f, q, &budget);
	if (!q || (!q->full && q->head < q->n))
		return q != NULL;
	if (q->full) {
		log_warnx("audit: %zu sensitive files and directories kept by identity (the "
			  "bound); the rest are recognised by their path only", f->sens.n);
		/* How many the walk did not reach is not counted (it stops): lost null. */
		if (audit_emit_loss("fanotify", -1, "sensitive identity table full at start "
				    "(16384): the files the start-up walk did not reach are "
				    "recognised by their path only, not through another name") != 0)
			log_warnx("audit: could not record the sensitive table's bound");
	}
	fansens_walk_stop(f);
	return false;
}
