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
#include <sys/statfs.h>
#include <unistd.h>

#include "audit/fan_int.h"
#include "common/hash.h"

int fanpath_mount(struct fan_mounts *m, const char *path)
{
	struct statfs sf;
	int32_t v[2];
	int fd;

	if (m->n >= FAN_MOUNTS_MAX)
		return -ENOSPC;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &sf) != 0) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	memcpy(v, &sf.f_fsid, sizeof(v));
	m->v[m->n].fsid = (uint64_t)(uint32_t)v[0] << 32 | (uint32_t)v[1];
	m->v[m->n].fd = fd;
	m->n++;
	return 0;
}

void fanpath_close(struct fan_mounts *m)
{
	for (size_t i = 0; i < m->n; i++)
		close(m->v[i].fd);
	m->n = 0;
	free(m->cache);
	m->cache = NULL;
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

static int mount_fd(const struct fan_mounts *m, uint64_t fsid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].fsid == fsid)
			return m->v[i].fd;
	return -1;
}

/* The directory of handle h as a path. 0 or -errno (-ESTALE: it is gone). */
static int dir_path(const struct fan_mounts *m, uint64_t fsid, const uint8_t *h,
		    size_t hlen, char *out, size_t len)
{
	union {
		struct file_handle fh;
		uint8_t raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	char link[64];
	ssize_t n;
	int mfd = mount_fd(m, fsid), fd;

	if (mfd < 0 || hlen > sizeof(u.raw))
		return -ENOENT;
	memcpy(u.raw, h, hlen);
	fd = open_by_handle_at(mfd, &u.fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, len - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	out[n] = '\0';
	return 0;
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

int fanpath_resolve(struct fan_mounts *m, const struct fan_dfid *d, char *out, size_t len)
{
	size_t n;
	int ret;

	if (!d->set)
		return -ENOENT;
	ret = dir_path_cached(m, d->fsid, d->handle, d->handle_len, out, len);
	if (ret || !d->name || d->name[0] == '\0' || strcmp(d->name, ".") == 0)
		return ret;
	n = strlen(out);
	if (n + 1 + strlen(d->name) + 1 > len)
		return -ENAMETOOLONG;
	snprintf(out + n, len - n, "%s%s", n > 0 && out[n - 1] == '/' ? "" : "/", d->name);
	return 0;
}
