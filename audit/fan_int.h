/* Inside the fanotify sensor (audit/fan*.c): marked filesystems and path lookup. */
#ifndef SANDGATE_AUDIT_FAN_INT_H
#define SANDGATE_AUDIT_FAN_INT_H

#include "audit/audit_int.h"

#define FAN_MOUNTS_MAX 32
#define FAN_PENDING_MAX 512        /* files written and not yet closed, coalesced */
#define FAN_PENDING_KEY 160        /* handle + name bytes kept as the coalescing key */
#define FAN_WRITE_FLUSH_NS 1000000000ull
#define FAN_SYNC_MS 2000            /* longest wait for the connector thread */

struct fan_mounts {
	struct { uint64_t fsid; int fd; } v[FAN_MOUNTS_MAX];
	size_t n;
};

/* Opens path (a mount point) and records its fsid. 0 or -errno. */
int fanpath_mount(struct fan_mounts *m, const char *path);
void fanpath_close(struct fan_mounts *m);
/* The absolute path of d (directory handle + name). 0 or -errno. */
int fanpath_resolve(const struct fan_mounts *m, const struct fan_dfid *d, char *out,
		    size_t len);

#endif
