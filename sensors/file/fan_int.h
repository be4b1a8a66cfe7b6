/* Inside the file sensor (sensors/file/): marked filesystems and path lookup. */
#ifndef SANDGATE_SENSORS_FILE_FAN_INT_H
#define SANDGATE_SENSORS_FILE_FAN_INT_H

#include <limits.h>
#include <pthread.h>

#include "sensors/file/fanparse.h"
#include "sensors/file/file.h"
#include "sensors/file/mountwatch.h"
#include "sensors/shared/procparse.h"
#include "sensors/shared/proctab.h"
#include "sensors/shared/sensor.h"

#define FAN_MOUNTS_MAX 256          /* filesystems marked (start + mounted later) */
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

/* ---- files by identity (fanid.c, pure) ---------------------------------------------- */

#define FANID_HANDLE_MAX 64        /* longer file handles are not kept */
#define FANID_FILE 1u              /* a sensitive file */
#define FANID_DIR 2u               /* a sensitive directory: what enters it is sensitive */

/* What file.attr compares: known once read (stat, xattr names and values hashed). */
struct fan_attr {
	bool known, xknown;
	uint32_t mode, uid, gid;
	uint64_t xhash;
};

struct fanid_ent {
	uint64_t fsid;
	size_t hlen;                 /* 0: free slot */
	uint8_t h[FANID_HANDLE_MAX];
	uint32_t flags;              /* FANID_* */
	char *path;                  /* malloc'd: the canonical (or last known) path */
	struct fan_attr attr;
};

struct fanid {
	struct fanid_ent *v;
	size_t cap, max, n;
};

/* A table of at most max entries. 0 or -ENOMEM. fanid_fini accepts a zeroed table. */
int fanid_init(struct fanid *t, size_t max);
void fanid_fini(struct fanid *t);
void fanid_clear(struct fanid *t);
/* The entry of (fsid, h), or NULL. */
struct fanid_ent *fanid_get(struct fanid *t, uint64_t fsid, const uint8_t *h, size_t hlen);
/* Finds or adds (fsid, h) (a new entry is zeroed but for its key). 0, -E2BIG (handle
 * too long), -ENOSPC (table full) or -ENOMEM. */
int fanid_put(struct fanid *t, uint64_t fsid, const uint8_t *h, size_t hlen,
	      struct fanid_ent **out);
/* Removes e (frees its path); other entry pointers may move. */
void fanid_del(struct fanid *t, struct fanid_ent *e);

/* ---- paths (fanpath.c) -------------------------------------------------------------- */

#define FAN_LASTDIR_MAX 8192       /* directories' last known paths kept */

struct fan_mounts {
	struct {
		uint64_t fsid;
		int fd;
		dev_t dev;           /* st_dev of the filesystem */
		char prefix[PATH_MAX];   /* prepended to what readlink gives ("": none) */
	} v[FAN_MOUNTS_MAX];
	size_t n;
	uint64_t epoch;              /* fanpath_new_batch() moves it on */
	struct fan_dirslot *cache;   /* FAN_DIRCACHE_SLOTS, or NULL: no cache */
	uint64_t hits, lookups;
	struct fanid last;           /* directory handle -> last path it resolved to */
};

/* How a path was found (the event's path_source when not "handle"). */
enum fan_how { FAN_HOW_HANDLE, FAN_HOW_LAST_KNOWN, FAN_HOW_OBJECT, FAN_HOW_CANONICAL };

/* Opens path (a mount point) and records its fsid. 0, -EEXIST (that filesystem is
 * there already) or -errno. */
int fanpath_mount(struct fan_mounts *m, const char *path);
/* Records fd (a detached clone of a mount, open_tree) for fsid; paths under it get
 * prefix. Takes fd. 0, -EEXIST or -ENOSPC (fd closed then). */
int fanpath_mount_fd(struct fan_mounts *m, int fd, uint64_t fsid, dev_t dev,
		     const char *prefix);
/* Whether fsid is marked already. */
bool fanpath_has(const struct fan_mounts *m, uint64_t fsid);
/* Closes the entry of dev (unmounted everywhere); 0 or -ENOENT. */
int fanpath_unmount(struct fan_mounts *m, dev_t dev);
void fanpath_close(struct fan_mounts *m);
/*
 * Forgets the directory paths looked up so far. Called for every read() of the queue: a
 * path is reused only for events of the same read, so what a rename changes is seen at
 * the next read as before (each directory was resolved when its event was handled).
 */
void fanpath_new_batch(struct fan_mounts *m);
/* The absolute path of d (directory handle + name). 0 or -errno: -ESTALE the
 * directory is gone, -ENODEV no marked filesystem has that fsid, -ENAMETOOLONG. */
int fanpath_resolve(struct fan_mounts *m, const struct fan_dfid *d, char *out, size_t len);
/*
 * The best path of an event's object: d (directory + name), else the last path d's
 * directory had when it is gone, else the object's own handle (open by handle; a
 * placeholder name of an O_TMPFILE file, "#INO", is resolved this way to the name it
 * was linked under). *how says which. 0 or -errno as fanpath_resolve, -ENOENT: no path.
 */
int fanpath_best(struct fan_mounts *m, const struct fan_dfid *d, const struct fan_dfid *fid,
		 char *out, size_t len, enum fan_how *how);
/* The path the object fid has now (open by handle). 0 or -errno (-ENOENT: unlinked or
 * not connected to a path). */
int fanpath_object(struct fan_mounts *m, const struct fan_dfid *fid, char *out, size_t len);
/* An O_PATH descriptor of the object fid. fd or -errno. */
int fanpath_open(struct fan_mounts *m, const struct fan_dfid *fid);
/* Remembers path as the directory fid's last known path (a directory just created or
 * renamed). */
void fanpath_note_dir(struct fan_mounts *m, const struct fan_dfid *fid, const char *path);

/* ---- the sensor (fanmon.c, fanemit.c, fansens.c, fanread.c, fanmark.c) -------------- */

/* Why an event could not be reported as it should: each a sensor.loss reason. */
enum fan_loss {
	FL_DIR_GONE,        /* directory gone before the event was read, path never seen */
	FL_NO_MOUNT,        /* the object's filesystem is not marked by us (no handle fd) */
	FL_TOO_LONG,        /* path longer than PATH_MAX */
	FL_NO_PATH,         /* no directory reported and the object has no path */
	FL_KCLOSE,          /* the last close was the kernel's (fd in flight), writer unknown */
	FL_DIRWALK,         /* a moved directory held more entries than are listed */
	FL_READ_UNKNOWN,    /* a read whose path is unknown: sensitive or not cannot be said */
	FL_SENS_FULL,       /* a sensitive file not kept by identity (table full, long handle) */
	FL_OTHER,
	FL_N
};

struct pending {
	pid_t pid;                   /* 0: free */
	struct ptab_ent pe;
	struct fan_dfid d, fid;      /* point into dbuf and key */
	uint8_t key[FAN_PENDING_KEY];    /* the identity (FID handle), else handle + name */
	size_t klen;
	uint8_t dbuf[FAN_PENDING_KEY];
	uint64_t first_ns;
};

#define FAN_WORKDIRS_MAX 256
#define FAN_SENS_MAX 16384         /* sensitive files and directories known by identity */
#define FAN_ATTRS_MAX 16384        /* files whose attributes are remembered */
#define FAN_DIRWALK_MAX 4096       /* entries listed under a moved directory */

struct fanreads;
struct fansens_walk;
struct sg_thread;

struct fanmon {
	struct audit *a;
	int fan;
	struct sg_thread *t;         /* common/thread.h */
	struct fan_mounts mnts;
	char **sensitive;            /* own copy: a SIGHUP frees the config's */
	size_t n_sensitive;
	bool modify;                 /* FAN_MODIFY marked: a close alone is not a write */
	bool reads;                  /* FAN_CLOSE_NOWRITE marked */
	uint64_t mask;               /* what each filesystem mark asks for */
	uint64_t overflows, sync_timeouts;
	uint64_t loss[FL_N];
	struct fanid sens;           /* sensitive files and directories, by identity */
	struct fanid attrs;          /* last attributes seen, by identity */
	size_t sens_skipped;         /* sensitive entries not kept by identity, in all */
	struct fanreads *rd;         /* read aggregation */
	struct fansens_walk *walk;   /* the start-up walk under way, or NULL */
	pthread_mutex_t wd_mu;       /* guards wd[] (the main thread sets workdirs) */
	struct {
		char sid[SESSION_ID_MAX + 1];
		char path[PATH_MAX];
	} wd[FAN_WORKDIRS_MAX];
	struct {
		pid_t pid;
		bool kthread;
	} kt[64];                    /* recent answers of "is pid a kernel thread" */
	struct pending pend[FAN_PENDING_MAX];
	uint8_t buf[1 << 16];
};

/* fanemit.c: one record of a session pid (pe) into events. */
void fanemit_rec(struct fanmon *f, const struct ptab_ent *pe, const struct fan_rec *r);
/* fanemit.c: a close by a process of no session (a kernel thread's last close of a
 * descriptor in flight): flushes the writes pending on that file, or counts a loss. */
void fanemit_foreign_close(struct fanmon *f, const struct fan_rec *r);
/* fanemit.c: emits the coalesced writes older than the flush interval (all: every one). */
void fanemit_flush(struct fanmon *f, bool all);
/* fanattr.c: a FAN_ATTRIB of a session process: file.attr with old and new values. */
void fanemit_attr(struct fanmon *f, const struct ptab_ent *pe, const struct fan_rec *r);
/* fanattr.c: a directory moved from -> to by pe: one file.rename per entry under it. */
void fanemit_dir_moved(struct fanmon *f, const struct ptab_ent *pe, const char *from,
		       const char *to);
/* fanattr.c: an event with path and the actor's ids (fanemit.c's helpers). */
struct event *fanemit_begin(const char *type, const struct ptab_ent *pe, const char *path,
			    enum fan_how how);
void fanemit_end(struct event *e, const char *type);
/* fanemit.c: a path's resolution error as a loss reason. */
enum fan_loss fan_loss_of(int err);
/* fanemit.c: emits one sensor.loss per reason counted, and resets the counts. */
void fanemit_losses(struct fanmon *f);

/* fansens.c: the walk of the sensitive prefixes into f->sens (bounded, breadth first),
 * done a slice at a time between reads of the queue: start seeds it (0 or -ENOMEM),
 * step lists up to budget entries and says whether more remain, stop frees it. */
int fansens_walk_start(struct fanmon *f);
bool fansens_walk_step(struct fanmon *f, size_t budget);
void fansens_walk_stop(struct fanmon *f);
/* fansens.c: the host or a session made name in directory d (its object fid): when d is a
 * sensitive directory the new object joins the set. */
void fansens_entered(struct fanmon *f, const struct fan_dfid *d, const struct fan_dfid *fid,
		     bool is_dir);
/* fansens.c: the sensitive-set entry of fid (a file), or NULL. */
struct fanid_ent *fansens_file(struct fanmon *f, const struct fan_dfid *fid);
/* fansens.c: adds fid (file or directory) at path to the set (a sensitive path seen). */
void fansens_add(struct fanmon *f, const struct fan_dfid *fid, const char *path, bool is_dir);
/* fansens.c: whether path lies under session sid's workdir. */
bool fansens_workdir(struct fanmon *f, const char *sid, const char *path);
/* fansens.c: the attributes of fid now (stat and xattrs through its handle). 0 or -errno. */
int fansens_attr(struct fanmon *f, const struct fan_dfid *fid, struct fan_attr *out);

/* fanread.c: read aggregation. fanreads_hit: true when this (session, file) read is the
 * session's first (emit it in full); else it is counted for the next summary line. */
int fanreads_new(struct fanreads **out, uint64_t interval_ns);
void fanreads_free(struct fanreads *r);
bool fanreads_hit(struct fanreads *r, const struct ptab_ent *pe, const struct fan_dfid *fid,
		  const char *path, const char *canonical);
/* Emits the summary lines due (all: every one, at stop). */
void fanreads_flush(struct fanreads *r, bool all);

/* fanmark.c: marks the filesystem mounted at target as seen from namespace nsfd (an open
 * nsfs fd), else (-1) from pid's (pid 0: the daemon's own), if not marked yet. 0, -EEXIST
 * or -errno. */
int fanmark_mount(struct fanmon *f, pid_t pid, int nsfd, const char *target,
		  const char *fstype);
/* fanmark.c: the files a just-marked new filesystem (mounted at target, by session sid
 * or "" the host) already holds: each a file.write with written_before_mark. */
void fanmark_catch_up(struct fanmon *f, const char *sid, const char *target);
/* fanmark.c: a filesystem of st_dev dev was unmounted everywhere we look. */
void fanmark_unmount(struct fanmon *f, dev_t dev);
/* fanmark.c: marks every writable local filesystem of the daemon's namespace (start). */
void fanmark_all(struct fanmon *f);

/* ---- fanotify mount events (mntfan.c), for the mount watch -------------------------- */

/* mntfan_open: a FAN_REPORT_MNT group, or -errno (-EINVAL before Linux 6.15).
 * mntfan_mark: marks pid's mount namespace, 0 or -errno. mntfan_read: drains the group;
 * the number of attach/detach events, the pid of the last and whether it was an attach,
 * and whether the queue overflowed. */
int mntfan_open(void);
int mntfan_mark(int fd, pid_t pid);
size_t mntfan_read(int fd, pid_t *pid, bool *attach, bool *overflow);
/* mntfan_read_all: drains the group; the first max events' pids and kinds, the count. */
size_t mntfan_read_all(int fd, pid_t *pids, bool *attach, size_t max, bool *overflow);

#endif
