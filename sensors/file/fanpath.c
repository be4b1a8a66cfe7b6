/*
 * Paths of fanotify objects: a directory file handle is opened (O_PATH) relative to the
 * marked filesystem it came from, its path read back from /proc/self/fd, and the entry
 * name appended. Needs CAP_DAC_READ_SEARCH (the daemon runs as root). Those three system
 * calls were most of the sensor's CPU (an untar: 100 files per directory, each looked up
 * again), so within one read of the queue a directory is looked up once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "sensors/file/fan_int.h"
#include "common/hash.h"

bool fanpath_has(const struct fan_mounts *m, uint64_t fsid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].fsid == fsid)
			return true;
	return false;
}

int fanpath_mount_fd(struct fan_mounts *m, int fd, uint64_t fsid, dev_t dev,
		     const char *prefix)
{
	if (fanpath_has(m, fsid) || m->n >= FAN_MOUNTS_MAX) {
		close(fd);
		return fanpath_has(m, fsid) ? -EEXIST : -ENOSPC;
	}
	if (!m->last.v && fanid_init(&m->last, FAN_LASTDIR_MAX) != 0)
		m->last.v = NULL;   /* no memory: no fallback for directories gone */
	m->v[m->n].fsid = fsid;
	m->v[m->n].fd = fd;
	m->v[m->n].dev = dev;
	snprintf(m->v[m->n].prefix, sizeof(m->v[m->n].prefix), "%s",
		 strcmp(prefix, "/") == 0 ? "" : prefix);
	m->n++;
	return 0;
}

int fanpath_mount(struct fan_mounts *m, const char *path)
{
	struct statfs sf;
	struct stat st;
	int32_t v[2];
	int fd, ret;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &sf) != 0 || fstat(fd, &st) != 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	memcpy(v, &sf.f_fsid, sizeof(v));
	return fanpath_mount_fd(m, fd, (uint64_t)(uint32_t)v[0] << 32 | (uint32_t)v[1],
				st.st_dev, "");
}

int fanpath_unmount(struct fan_mounts *m, dev_t dev)
{
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].dev != dev || m->v[i].prefix[0] == '\0')
			continue;   /* the configured marks are kept */
		close(m->v[i].fd);
		m->v[i] = m->v[--m->n];
		m->epoch++;   /* cached directories may name it */
		return 0;
	}
	return -ENOENT;
}

void fanpath_close(struct fan_mounts *m)
{
	for (size_t i = 0; i < m->n; i++)
		close(m->v[i].fd);
	m->n = 0;
	free(m->cache);
	m->cache = NULL;
	fanid_fini(&m->last);
}

void fanpath_new_batch(struct fan_mounts *m)
{
	m->epoch++;
	if (!m->cache)   /* no memory: every lookup goes to the kernel, as it always may */
		m->cache = calloc(FAN_DIRCACHE_SLOTS, sizeof(*m->cache));
}

static struct fan_dirslot *slot_of(struct fan_mounts *m, uint64_t fsid, const uint8_t *h,
				   size_t hlen)
{
	if (!m->cache || hlen > FAN_DIRCACHE_HANDLE)
		return NULL;
	return &m->cache[fnv1a(fnv1a(FNV1A_INIT, &fsid, sizeof(fsid)), h, hlen) %
			 FAN_DIRCACHE_SLOTS];
}

static bool slot_holds(const struct fan_mounts *m, const struct fan_dirslot *s,
		       uint64_t fsid, const uint8_t *h, size_t hlen)
{
	return s->epoch == m->epoch && s->fsid == fsid && s->hlen == hlen &&
	       memcmp(s->handle, h, hlen) == 0;
}

static int mount_idx(const struct fan_mounts *m, uint64_t fsid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].fsid == fsid)
			return (int)i;
	return -1;
}

/* Whether readlink gave a path that names nothing: unlinked, or a dentry the kernel
 * could not connect to its directory (an open by handle after the cache was dropped). */
static bool no_path(const char *p, size_t n)
{
	static const char del[] = " (deleted)";

	return p[0] != '/' || (n >= sizeof(del) - 1 && strcmp(p + n - (sizeof(del) - 1), del) == 0);
}

/* The path of handle h (a directory, or with object the object itself). 0 or -errno
 * (-ESTALE: it is gone, -ENODEV: no filesystem of that fsid marked). */
static int handle_path(const struct fan_mounts *m, uint64_t fsid, const uint8_t *h,
		       size_t hlen, char *out, size_t len)
{
	union {
		struct file_handle fh;
		uint8_t raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	char link[64], *p = out;
	size_t plen, room = len;
	ssize_t n;
	int mi = mount_idx(m, fsid), fd;

	if (mi < 0)
		return -ENODEV;
	if (hlen > sizeof(u.raw))
		return -ENAMETOOLONG;
	plen = strlen(m->v[mi].prefix);
	if (plen + 2 > len)
		return -ENAMETOOLONG;
	memcpy(out, m->v[mi].prefix, plen);   /* a clone's paths start at its root */
	p += plen;
	room -= plen;
	memcpy(u.raw, h, hlen);
	fd = open_by_handle_at(m->v[mi].fd, &u.fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESTALE : -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, p, room - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	p[n] = '\0';
	if ((size_t)n >= room - 1)
		return -ENAMETOOLONG;
	if (no_path(p, (size_t)n))
		return -ENOENT;
	if (plen && strcmp(p, "/") == 0)
		p[0] = '\0';   /* the clone's root is the mount point itself */
	return 0;
}

int fanpath_open(struct fan_mounts *m, const struct fan_dfid *fid)
{
	union {
		struct file_handle fh;
		uint8_t raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	int mi = fid->set ? mount_idx(m, fid->fsid) : -1, fd;

	if (mi < 0)
		return -ENODEV;
	if (fid->handle_len > sizeof(u.raw))
		return -ENAMETOOLONG;
	memcpy(u.raw, fid->handle, fid->handle_len);
	fd = open_by_handle_at(m->v[mi].fd, &u.fh, O_PATH | O_CLOEXEC);
	return fd >= 0 ? fd : errno == ENOENT ? -ESTALE : -errno;
}

static int dir_path(struct fan_mounts *m, uint64_t fsid, const uint8_t *h, size_t hlen,
		    char *out, size_t len)
{
	struct fanid_ent *e;
	int ret = handle_path(m, fsid, h, hlen, out, len);

	/* Every directory resolved is remembered: when it is gone before its events are
	 * read (removed right after the writes), its last path still names them. */
	if (ret == 0 && m->last.v) {
		if (m->last.n >= m->last.max)
			fanid_clear(&m->last);
		if (fanid_put(&m->last, fsid, h, hlen, &e) == 0 &&
		    (!e->path || strcmp(e->path, out) != 0)) {
			free(e->path);
			e->path = strdup(out);
		}
	}
	return ret;
}

/* dir_path through the cache of this read's directories. */
static int dir_path_cached(struct fan_mounts *m, uint64_t fsid, const uint8_t *h,
			   size_t hlen, char *out, size_t len)
{
	struct fan_dirslot *s = slot_of(m, fsid, h, hlen);
	int ret;

	m->lookups++;
	if (s && slot_holds(m, s, fsid, h, hlen) && strlen(s->path) < len) {
		m->hits++;
		strcpy(out, s->path);
		return 0;
	}
	ret = dir_path(m, fsid, h, hlen, out, len);
	if (ret == 0 && s && strlen(out) < sizeof(s->path)) {
		s->epoch = m->epoch;
		s->fsid = fsid;
		s->hlen = hlen;
		memcpy(s->handle, h, hlen);
		strcpy(s->path, out);
	}
	return ret;
}

static int append_name(const struct fan_dfid *d, char *out, size_t len)
{
	size_t n;

	if (!d->name || d->name[0] == '\0' || strcmp(d->name, ".") == 0)
		return 0;
	n = strlen(out);
	if (n + 1 + strlen(d->name) + 1 > len)
		return -ENAMETOOLONG;
	snprintf(out + n, len - n, "%s%s", n > 0 && out[n - 1] == '/' ? "" : "/", d->name);
	return 0;
}

int fanpath_resolve(struct fan_mounts *m, const struct fan_dfid *d, char *out, size_t len)
{
	int ret;

	if (!d->set)
		return -ENOENT;
	ret = dir_path_cached(m, d->fsid, d->handle, d->handle_len, out, len);
	return ret ? ret : append_name(d, out, len);
}

int fanpath_object(struct fan_mounts *m, const struct fan_dfid *fid, char *out, size_t len)
{
	int ret;

	if (!fid->set)
		return -ENOENT;
	ret = handle_path(m, fid->fsid, fid->handle, fid->handle_len, out, len);
	/* A file opened by handle whose dentry the kernel could not connect reads back as
	 * "/" (or its mount point): that is no path of it. */
	if (ret == 0 && (out[0] == '\0' || strcmp(out, "/") == 0))
		ret = -ENOENT;
	return ret;
}

void fanpath_note_dir(struct fan_mounts *m, const struct fan_dfid *fid, const char *path)
{
	struct fanid_ent *e;

	if (!fid->set || !m->last.v)
		return;
	if (m->last.n >= m->last.max)
		fanid_clear(&m->last);
	if (fanid_put(&m->last, fid->fsid, fid->handle, fid->handle_len, &e) == 0) {
		free(e->path);
		e->path = strdup(path);
	}
}

/* "#123": the name the kernel gives an O_TMPFILE file until it is linked. */
static bool tmpfile_name(const char *n)
{
	if (!n || n[0] != '#' || n[1] == '\0')
		return false;
	for (n++; *n; n++)
		if (*n < '0' || *n > '9')
			return false;
	return true;
}

int fanpath_best(struct fan_mounts *m, const struct fan_dfid *d, const struct fan_dfid *fid,
		 char *out, size_t len, enum fan_how *how)
{
	struct fanid_ent *e;
	int ret = -ENOENT;

	*how = FAN_HOW_HANDLE;
	if (d->set && tmpfile_name(d->name) && fanpath_object(m, fid, out, len) == 0) {
		*how = FAN_HOW_OBJECT;   /* linked since: its name now */
		return 0;
	}
	if (d->set)
		ret = fanpath_resolve(m, d, out, len);
	if (ret == -ESTALE && m->last.v &&
	    (e = fanid_get(&m->last, d->fsid, d->handle, d->handle_len)) && e->path &&
	    strlen(e->path) < len) {
		strcpy(out, e->path);
		*how = FAN_HOW_LAST_KNOWN;
		return append_name(d, out, len);
	}
	if (ret && !d->set && fanpath_object(m, fid, out, len) == 0) {
		*how = FAN_HOW_OBJECT;
		return 0;
	}
	return ret;
}
