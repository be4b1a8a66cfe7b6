/*
 * fanotify records of session processes into file.* events. Paths come from the
 * directory handle + name (fanpath_best); what cannot be resolved is counted by reason
 * and reported as sensor.loss, never dropped in silence. Writes are coalesced per
 * (pid, file identity): one file.write at close-after-write, or after a second for a
 * file still open; a close-after-write with no write() seen (a shared mmap) is a write
 * too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "sensors/file/fan_int.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "journal/event.h"

#ifndef FAN_RENAME
#define FAN_RENAME 0x10000000
#endif

enum fan_loss fan_loss_of(int err)
{
	switch (err) {
	case -ESTALE:
		return FL_DIR_GONE;
	case -ENODEV:
		return FL_NO_MOUNT;
	case -ENAMETOOLONG:
		return FL_TOO_LONG;
	case -ENOENT:
		return FL_NO_PATH;
	default:
		return FL_OTHER;
	}
}

static const char *const loss_why[FL_N] = {
	[FL_DIR_GONE] = "path unresolved: its directory was removed before the event was "
			"read and its path had not been seen",
	[FL_NO_MOUNT] = "path unresolved: the filesystem is not marked (no handle to open)",
	[FL_TOO_LONG] = "path unresolved: longer than PATH_MAX",
	[FL_NO_PATH] = "path unresolved: no directory reported and the file has no name "
		       "(unlinked, or opened by handle and not connected)",
	[FL_KCLOSE] = "last close made by a kernel thread (a descriptor in flight on a "
		      "unix socket, or a deferred close): the writer or reader is unknown",
	[FL_DIRWALK] = "moved directory: entries beyond the listing bound not reported "
		       "under their new paths",
	[FL_READ_UNKNOWN] = "read of a file whose path could not be resolved: whether it "
			    "was sensitive is unknown",
	[FL_SENS_FULL] = "sensitive file not kept by identity (the table of 16384 is full, "
			 "or its handle is too long): recognised by its path only, not "
			 "through another name",
	[FL_OTHER] = "path unresolved: other error",
};

void fanemit_losses(struct fanmon *f)
{
	for (int i = 0; i < FL_N; i++) {
		if (!f->loss[i])
			continue;
		if (audit_emit_loss("fanotify", (int64_t)f->loss[i], loss_why[i]) != 0)
			log_warnx("audit: could not record a fanotify loss");
		f->loss[i] = 0;
	}
}

static const char *how_str(enum fan_how h)
{
	switch (h) {
	case FAN_HOW_LAST_KNOWN:
		return "last_known";
	case FAN_HOW_OBJECT:
		return "object";
	case FAN_HOW_CANONICAL:
		return "canonical";   /* the path used is unknown: the identity's path */
	default:
		return "handle";
	}
}

/* An event with path and the actor's ids; the caller adds fields and emits it. */
struct event *fanemit_begin(const char *type, const struct ptab_ent *pe, const char *path,
			    enum fan_how how)
{
	struct event *e = event_new(type, pe->sid, EVENT_SRC_KERNEL);

	if (!e)
		return NULL;
	event_str(e, "path", path);
	if (how != FAN_HOW_HANDLE)
		event_str(e, "path_source", how_str(how));
	event_int(e, "pid", pe->pid);
	if (pe->ids_known) {
		event_uint(e, "uid", pe->uid);
		event_uint(e, "euid", pe->euid);
	} else {
		event_null(e, "uid");
		event_null(e, "euid");
	}
	return e;
}

void fanemit_end(struct event *e, const char *type)
{
	int ret = e ? event_emit(e) : -ENOMEM;

	if (ret)
		log_errno(ret, "audit: %s", type);
}

/* Resolves the record's object; a failure is counted. 0 or -errno. */
static int path_of(struct fanmon *f, const struct fan_dfid *d, const struct fan_dfid *fid,
		   char *out, enum fan_how *how)
{
	int ret = fanpath_best(&f->mnts, d, fid, out, PATH_MAX, how);

	if (ret && getenv("SG_FANDBG"))
		fprintf(stderr, "DBG path_of %d\n", ret);
	if (ret)
		f->loss[fan_loss_of(ret)]++;
	return ret;
}

static void emit_plain(struct fanmon *f, const char *type, const struct ptab_ent *pe,
		       const struct fan_dfid *d, const struct fan_dfid *fid, bool dir)
{
	char path[PATH_MAX];
	enum fan_how how;
	struct event *e;

	if (path_of(f, d, fid, path, &how))
		return;
	if (dir && strcmp(type, "file.create") == 0)
		fanpath_note_dir(&f->mnts, fid, path);
	if (strcmp(type, "file.create") == 0 &&
	    audit_path_sensitive(path, f->sensitive, f->n_sensitive))
		fansens_add(f, fid, path, dir);
	audit_exec_release(f->a, pe->pid);
	e = fanemit_begin(type, pe, path, how);
	if (e && dir)
		event_bool(e, "dir", true);
	fanemit_end(e, type);
}

/* ---- write coalescing -------------------------------------------------------------- */

static size_t key_of(const struct fan_dfid *d, const struct fan_dfid *fid, uint8_t *key)
{
	size_t nlen = d->name ? strlen(d->name) + 1 : 0;

	if (fid->set && fid->handle_len <= FAN_PENDING_KEY) {
		memcpy(key, fid->handle, fid->handle_len);   /* identity: links agree */
		return fid->handle_len;
	}
	if (d->handle_len + nlen > FAN_PENDING_KEY)
		return 0;
	memcpy(key, d->handle, d->handle_len);
	if (nlen)
		memcpy(key + d->handle_len, d->name, nlen);
	return d->handle_len + nlen;
}

static uint64_t fsid_of(const struct fan_dfid *d, const struct fan_dfid *fid)
{
	return fid->set ? fid->fsid : d->fsid;
}

/* pid 0: any process's. */
static struct pending *pend_find(struct fanmon *f, pid_t pid, uint64_t fsid,
				 const uint8_t *key, size_t klen)
{
	for (size_t i = 0; i < FAN_PENDING_MAX; i++) {
		struct pending *p = &f->pend[i];

		if (p->pid != 0 && (pid == 0 || p->pid == pid) && fsid_of(&p->d, &p->fid) == fsid &&
		    p->klen == klen && memcmp(p->key, key, klen) == 0)
			return p;
	}
	return NULL;
}

static void emit_write(struct fanmon *f, const struct ptab_ent *pe, const struct fan_dfid *d,
		       const struct fan_dfid *fid, pid_t closed_by, bool no_write_seen)
{
	char path[PATH_MAX];
	enum fan_how how;
	struct event *e;

	if (path_of(f, d, fid, path, &how))
		return;
	audit_exec_release(f->a, pe->pid);
	e = fanemit_begin("file.write", pe, path, how);
	if (e && closed_by)
		event_int(e, "closed_by_pid", closed_by);
	if (e && no_write_seen)
		event_bool(e, "write_seen", false);   /* mmap, or opened for writing only */
	fanemit_end(e, "file.write");
}

static void pend_emit(struct fanmon *f, struct pending *p, pid_t closed_by)
{
	emit_write(f, &p->pe, &p->d, &p->fid, closed_by, false);
	p->pid = 0;
}

/* A FAN_MODIFY: remember (pid, file) once until its close or the flush. */
static void pend_add(struct fanmon *f, const struct ptab_ent *pe, const struct fan_dfid *d,
		     const struct fan_dfid *fid)
{
	uint8_t key[FAN_PENDING_KEY];
	size_t klen = key_of(d, fid, key), nlen = d->name ? strlen(d->name) + 1 : 0;
	struct pending *p = NULL;

	if (klen && pend_find(f, pe->pid, fsid_of(d, fid), key, klen))
		return;
	for (size_t i = 0; klen && !p && i < FAN_PENDING_MAX; i++)
		if (f->pend[i].pid == 0)
			p = &f->pend[i];
	if (!p || d->handle_len + nlen > FAN_PENDING_KEY) {
		emit_write(f, pe, d, fid, 0, false);   /* no room to coalesce: as is */
		return;
	}
	p->pid = pe->pid;
	p->pe = *pe;
	memcpy(p->key, key, klen);
	p->klen = klen;
	memcpy(p->dbuf, d->handle, d->handle_len);
	if (nlen)
		memcpy(p->dbuf + d->handle_len, d->name, nlen);
	p->d = *d;
	p->d.handle = p->dbuf;
	p->d.name = d->name ? (const char *)p->dbuf + d->handle_len : NULL;
	p->fid = *fid;
	p->fid.handle = fid->set && klen == fid->handle_len ? p->key : NULL;
	p->fid.set = p->fid.handle != NULL;
	p->first_ns = time_mono_ns();
}

/*
 * A FAN_CLOSE_WRITE. With FAN_MODIFY marked, the coalesced write (if any) is complete;
 * none seen means the file was changed without write() (a shared mmap: the kernel sends
 * no FAN_MODIFY for it) or not at all: reported, with write_seen false.
 */
static void on_close_write(struct fanmon *f, const struct ptab_ent *pe, const struct fan_rec *r)
{
	uint8_t key[FAN_PENDING_KEY];
	size_t klen = key_of(&r->dfid, &r->fid, key);
	struct pending *p;

	if (!f->modify) {
		emit_write(f, pe, &r->dfid, &r->fid, 0, false);   /* opened for writing, closed */
		return;
	}
	p = klen ? pend_find(f, pe->pid, fsid_of(&r->dfid, &r->fid), key, klen) : NULL;
	if (p)
		pend_emit(f, p, 0);
	else if (!(r->mask & FAN_MODIFY))
		emit_write(f, pe, &r->dfid, &r->fid, 0, true);
}

void fanemit_flush(struct fanmon *f, bool all)
{
	uint64_t now = time_mono_ns();

	for (size_t i = 0; i < FAN_PENDING_MAX; i++)
		if (f->pend[i].pid != 0 &&
		    (all || now - f->pend[i].first_ns >= FAN_WRITE_FLUSH_NS))
			pend_emit(f, &f->pend[i], 0);
}

/* ---- closes by no session's process --------------------------------------------------- */

/* Kernel threads are children of kthreadd (pid 2). Answers are cached per pid slot. */
static bool is_kthread(struct fanmon *f, pid_t pid)
{
	struct proc_stat_info st;
	char path[32], buf[512];
	size_t slot = (size_t)pid % (sizeof(f->kt) / sizeof(f->kt[0]));
	ssize_t n;
	int fd;

	if (f->kt[slot].pid == pid)
		return f->kt[slot].kthread;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
	if (fd >= 0)
		close(fd);
	f->kt[slot].pid = pid;
	f->kt[slot].kthread = n > 0 && proc_stat_parse(buf, (size_t)n, &st) == 0 &&
			      (st.ppid == 2 || pid == 2);
	return f->kt[slot].kthread;
}

void fanemit_foreign_close(struct fanmon *f, const struct fan_rec *r)
{
	uint8_t key[FAN_PENDING_KEY];
	size_t klen = key_of(&r->dfid, &r->fid, key);
	uint64_t fsid = fsid_of(&r->dfid, &r->fid);
	struct pending *p;
	bool any = false;

	if ((r->mask & FAN_CLOSE_WRITE) && klen) {
		/* The writes of session processes to this file are complete now. */
		while ((p = pend_find(f, 0, fsid, key, klen)) != NULL) {
			pend_emit(f, p, r->pid);
			any = true;
		}
	}
	if (any || r->pid <= 0 || !is_kthread(f, r->pid))
		return;
	if ((r->mask & FAN_CLOSE_WRITE) ||
	    ((r->mask & FAN_CLOSE_NOWRITE) && f->reads && fansens_file(f, &r->fid)))
		f->loss[FL_KCLOSE]++;
}

/* ---- reads, renames, attributes ------------------------------------------------------ */

static void on_read(struct fanmon *f, const struct ptab_ent *pe, const struct fan_rec *r)
{
	struct fanid_ent *s = fansens_file(f, &r->fid);
	char path[PATH_MAX];
	enum fan_how how;
	bool ok, sens;
	struct event *e;

	ok = fanpath_best(&f->mnts, &r->dfid, &r->fid, path, sizeof(path), &how) == 0;
	if (!ok && (!s || !s->path)) {
		f->loss[FL_READ_UNKNOWN]++;
		return;
	}
	sens = s != NULL;
	if (ok && !sens && (audit_path_sensitive(path, f->sensitive, f->n_sensitive) ||
			    fansens_workdir(f, pe->sid, path))) {
		sens = true;
		if (audit_path_sensitive(path, f->sensitive, f->n_sensitive))
			fansens_add(f, &r->fid, path, false);   /* known by identity from now */
		s = fansens_file(f, &r->fid);
	}
	if (!sens)
		return;
	if (!fanreads_hit(f->rd, pe, &r->fid, ok ? path : s->path, s && s->path ? s->path : path))
		return;   /* a repeat: counted for the summary line */
	audit_exec_release(f->a, pe->pid);
	e = fanemit_begin("file.read", pe, ok ? path : s->path, ok ? how : FAN_HOW_CANONICAL);
	if (e) {
		event_str(e, "canonical_path", s && s->path ? s->path : path);
		event_bool(e, "path_resolved", ok);
	}
	fanemit_end(e, "file.read");
}

static void on_rename(struct fanmon *f, const struct ptab_ent *pe, const struct fan_rec *r)
{
	char from[PATH_MAX], to[PATH_MAX];
	bool dir = (r->mask & FAN_ONDIR) != 0;
	struct event *e;
	int ret;

	ret = fanpath_resolve(&f->mnts, &r->old, from, sizeof(from));
	if (ret == 0)
		ret = fanpath_resolve(&f->mnts, &r->new, to, sizeof(to));
	if (ret) {
		f->loss[fan_loss_of(ret)]++;
		return;
	}
	if (dir)
		fanpath_note_dir(&f->mnts, &r->fid, to);
	if (audit_path_sensitive(to, f->sensitive, f->n_sensitive))
		fansens_add(f, &r->fid, to, dir);
	audit_exec_release(f->a, pe->pid);
	e = fanemit_begin("file.rename", pe, from, FAN_HOW_HANDLE);
	if (e) {
		event_str(e, "new_path", to);
		if (dir)
			event_bool(e, "dir", true);
	}
	fanemit_end(e, "file.rename");
	if (dir)
		fanemit_dir_moved(f, pe, from, to);
}

static void on_delete(struct fanmon *f, const struct ptab_ent *pe, const struct fan_rec *r)
{
	struct fanid_ent *s = r->fid.set ? fanid_get(&f->sens, r->fid.fsid, r->fid.handle,
						     r->fid.handle_len) : NULL;
	char tmp[PATH_MAX];

	emit_plain(f, "file.delete", pe, &r->dfid, &r->fid, (r->mask & FAN_ONDIR) != 0);
	/* Its last name gone: the identity goes too (a handle cannot open it). */
	if (s && fanpath_object(&f->mnts, &r->fid, tmp, sizeof(tmp)) != 0)
		fanid_del(&f->sens, s);
}

void fanemit_rec(struct fanmon *f, const struct ptab_ent *pe, const struct fan_rec *r)
{
	bool dir = (r->mask & FAN_ONDIR) != 0;

	if (r->mask & FAN_CREATE)
		emit_plain(f, "file.create", pe, &r->dfid, &r->fid, dir);
	if ((r->mask & FAN_MODIFY) && !dir)
		pend_add(f, pe, &r->dfid, &r->fid);
	if ((r->mask & FAN_CLOSE_WRITE) && !dir)
		on_close_write(f, pe, r);
	if ((r->mask & FAN_CLOSE_NOWRITE) && f->reads && !dir)
		on_read(f, pe, r);
	if (r->mask & FAN_RENAME)
		on_rename(f, pe, r);
	if (r->mask & FAN_ATTRIB)
		fanemit_attr(f, pe, r);
	if (r->mask & FAN_DELETE)
		on_delete(f, pe, r);
}
