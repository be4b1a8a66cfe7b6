/* Inside the fanotify sensor (audit/fan*.c): marked filesystems and path lookup. */
#ifndef SANDGATE_AUDIT_FAN_INT_H
#define SANDGATE_AUDIT_FAN_INT_H

#include <limits.h>

#include "audit/audit_int.h"

#define FAN_MOUNTS_MAX 32
#define FAN_PENDING_MAX 512        /* files written and not yet closed, coalesced */
#define FAN_PENDING_KEY 160        /* handle + name bytes kept as the coalescing key */
#define FAN_WRITE_FLUSH_NS 1000000000ull
#define FAN_SYNC_MS 2000            /* longest wait for the connector thread */
#define FAN_BATCH_NS 2000000L       /* an empty queue's wait for more, once events flow */

#define FAN_DIRCACHE_SLOTS 64      /* directory paths remembered within one read */
#define FAN_DIRCACHE_HANDLE 64     /* longer handles are not cached */

/* A directory handle's path, valid while epoch is the mounts' epoch. */
struct fan_dirslot {
	uint64_t epoch, fsid;
	size_t hlen;
	uint8_t handle[FAN_DIRCACHE_HANDLE];
	char path[PATH_MAX];
};

struct fan_mounts {
	struct { uint64_t fsid; int fd; } v[FAN_MOUNTS_MAX];
	size_t n;
	uint64_t epoch;              /* fanpath_new_batch() moves it on */
	struct fan_dirslot *cache;   /* FAN_DIRCACHE_SLOTS, or NULL: no cache */
	uint64_t hits, lookups;
};

/* Opens path (a mount point) and records its fsid. 0 or -errno. */
int fanpath_mount(struct fan_mounts *m, const char *path);
void fanpath_close(struct fan_mounts *m);
/*
 * Forgets the directory paths looked up so far. Called for every read() of the queue: a
 * path is reused only for events of the same read, so what a rename changes is seen at
 * the next read as before (each directory was resolved when its event was handled).
 */
void fanpath_new_batch(struct fan_mounts *m);
/* The absolute path of d (directory handle + name). 0 or -errno. */
int fanpath_resolve(struct fan_mounts *m, const struct fan_dfid *d, char *out, size_t len);

#endif
