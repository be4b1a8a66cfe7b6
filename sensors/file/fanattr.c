/*
 * file.attr (FAN_ATTRIB: chmod, chown, setxattr, utimes, link count) and the files under
 * a moved directory. The kernel says that attributes changed, not what they were: the
 * new values are read through the file's handle when the event is handled, the old ones
 * from what was read before (the sensitive files at start, any file at its creation or
 * last change). A change of times or link count alone, with the rest known and equal, is
 * not reported.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sensors/file/fan_int.h"
#include "common/hash.h"
#include "journal/event.h"

#define FAN_XLIST_MAX 4096
#define FAN_XVAL_MAX 4096

/* A hash of the names and values of fd's extended attributes (fd: O_PATH). */
static int xattr_hash(int fd, uint64_t *out)
{
	char link[64], *names = malloc(FAN_XLIST_MAX), *val = malloc(FAN_XVAL_MAX);
	ssize_t n, v;
	uint32_t h1 = FNV1A_INIT, h2 = 0x9e3779b9u;
	int ret = 0;

	if (!names || !val) {
		ret = -ENOMEM;
		goto out;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = listxattr(link, names, FAN_XLIST_MAX);
	if (n < 0) {
		ret = errno == ENOTSUP ? 0 : -errno;
		n = 0;
	}
	for (ssize_t i = 0; ret == 0 && i < n; i += (ssize_t)strlen(names + i) + 1) {
		v = getxattr(link, names + i, val, FAN_XVAL_MAX);
		h1 = fnv1a(h1, names + i, strlen(names + i) + 1);
		h2 = fnv1a(h2, names + i, strlen(names + i) + 1);
		if (v > 0) {
			h1 = fnv1a(h1, val, (size_t)v);
			h2 = fnv1a(h2 ^ (uint32_t)v, val, (size_t)v);
		}
	}
	*out = (uint64_t)h1 << 32 | h2;
out:
	free(names);
	free(val);
	return ret;
}

int fansens_attr(struct fanmon *f, const struct fan_dfid *fid, struct fan_attr *out)
{
	struct stat st;
	int fd = fanpath_open(&f->mnts, fid), ret = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) != 0) {
		ret = -errno;
		goto out;
	}
	*out = (struct fan_attr){ .known = true, .mode = st.st_mode & 07777,
				  .uid = st.st_uid, .gid = st.st_gid };
	out->xknown = xattr_hash(fd, &out->xhash) == 0;
out:
	close(fd);
	return ret;
}

static void put_mode(struct event *e, const char *key, const struct fan_attr *a)
{
	char m[8];

	if (!a->known) {
		event_null(e, key);
		return;
	}
	snprintf(m, sizeof(m), "%04o", a->mode);
	event_str(e, key, m);
}

static void put_id(struct event *e, const char *key, const struct fan_attr *a, uint32_t v)
{
	if (a->known)
		event_uint(e, key, v);
	else
		event_null(e, key);
}

/* The "changed" array; false when the old values are known and nothing listed changed. */
static bool put_changed(struct event *e, const struct fan_attr *o, const struct fan_attr *n)
{
	bool any = false;

	if (!o->known) {
		event_null(e, "changed");
		return true;
	}
	event_array_begin(e, "changed");
	if (o->mode != n->mode && (any = true))
		event_str(e, NULL, "mode");
	if (o->uid != n->uid && (any = true))
		event_str(e, NULL, "owner");
	if (o->gid != n->gid && (any = true))
		event_str(e, NULL, "group");
	if (o->xknown && n->xknown && o->xhash != n->xhash && (any = true))
		event_str(e, NULL, "xattr");
	event_array_end(e);
	return any;
}

/* The old attributes of fid (zeroed: unknown) and the slot where the new ones go. */
static struct fanid_ent *old_attr(struct fanmon *f, const struct fan_dfid *fid,
				  struct fan_attr *old)
{
	struct fanid_ent *s = fansens_file(f, fid), *a = NULL;

	memset(old, 0, sizeof(*old));
	if (!fid->set)
		return NULL;
	if (s && s->attr.known)
		*old = s->attr;
	else if ((a = fanid_get(&f->attrs, fid->fsid, fid->handle, fid->handle_len)))
		*old = a->attr;
	if (s)
		return s;
	if (!a) {
		if (f->attrs.n >= f->attrs.max)
			fanid_clear(&f->attrs);
		(void)fanid_put(&f->attrs, fid->fsid, fid->handle, fid->handle_len, &a);
	}
	return a;
}

void fanemit_attr(struct fanmon *f, const struct ptab_ent *pe, const struct fan_rec *r)
{
	struct fan_attr old, now;
	struct fanid_ent *slot = old_attr(f, &r->fid, &old);
	char path[PATH_MAX];
	enum fan_how how;
	struct event *e;
	int ret;

	if (fansens_attr(f, &r->fid, &now) != 0)
		return;   /* gone already: its delete is reported */
	if (slot)
		slot->attr = now;
	if (old.known && old.mode == now.mode && old.uid == now.uid && old.gid == now.gid &&
	    (!old.xknown || !now.xknown || old.xhash == now.xhash))
		return;   /* times or link count only */
	if (r->mask & FAN_CREATE)
		return;   /* just created: its creation says it all */
	ret = fanpath_best(&f->mnts, &r->dfid, &r->fid, path, sizeof(path), &how);
	if (ret) {
		f->loss[fan_loss_of(ret)]++;
		return;
	}
	audit_exec_release(f->a, pe->pid);
	e = fanemit_begin("file.attr", pe, path, how);
	if (!e)
		return;
	put_mode(e, "mode", &now);
	put_id(e, "file_uid", &now, now.uid);
	put_id(e, "file_gid", &now, now.gid);
	put_mode(e, "old_mode", &old);
	put_id(e, "old_file_uid", &old, old.uid);
	put_id(e, "old_file_gid", &old, old.gid);
	(void)put_changed(e, &old, &now);
	if (r->mask & FAN_ONDIR)
		event_bool(e, "dir", true);
	fanemit_end(e, "file.attr");
}

/* ---- a moved directory's entries ----------------------------------------------------- */

struct dirwalk {
	struct fanmon *f;
	const struct ptab_ent *pe;
	const char *from, *to;
	size_t n;
	bool cut;
};

static void walk_emit(struct dirwalk *w, const char *rel)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct event *e;

	if ((size_t)snprintf(a, sizeof(a), "%s/%s", w->from, rel) >= sizeof(a) ||
	    (size_t)snprintf(b, sizeof(b), "%s/%s", w->to, rel) >= sizeof(b)) {
		w->f->loss[FL_TOO_LONG]++;
		return;
	}
	e = fanemit_begin("file.rename", w->pe, a, FAN_HOW_HANDLE);
	if (!e)
		return;
	event_str(e, "new_path", b);
	event_str(e, "moved_with", w->from);   /* the directory whose move this is */
	fanemit_end(e, "file.rename");
}

static void walk(struct dirwalk *w, int dfd, const char *rel, int depth)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d = fdopendir(dfd);

	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (w->n >= FAN_DIRWALK_MAX) {
			w->cut = true;
			break;
		}
		w->n++;
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "",
				     de->d_name) >= sizeof(sub))
			continue;
		walk_emit(w, sub);
		if (de->d_type == DT_DIR && depth < 32) {
			int fd = openat(dirfd(d), de->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (fd >= 0)
				walk(w, fd, sub, depth + 1);
		}
	}
	closedir(d);
}

void fanemit_dir_moved(struct fanmon *f, const struct ptab_ent *pe, const char *from,
		       const char *to)
{
	struct dirwalk w = { .f = f, .pe = pe, .from = from, .to = to };
	int fd = open(to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;   /* moved again or removed since: its own events say so */
	walk(&w, fd, "", 0);
	if (w.cut)
		f->loss[FL_DIRWALK]++;
}
