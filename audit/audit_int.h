/*
 * Inside audit/: the pid table both threads share, the /proc reads behind an exec, and
 * the two sensor threads. Not for use outside audit/.
 */
#ifndef SANDGATE_AUDIT_AUDIT_INT_H
#define SANDGATE_AUDIT_AUDIT_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#include "attribution/attribution.h"
#include "audit/audit.h"
#include "packages/pkg_int.h"

#define PTAB_CAP (1u << 15)            /* session processes alive at once (+ recent dead) */
#define PTAB_DEAD_KEEP_NS 3000000000ull  /* exited entries kept for late file events */

/* ---- pid -> session table (audit/proctab.c), shared under its own mutex ------------ */

struct ptab_ent {
	pid_t pid;                   /* 0: empty slot */
	pid_t ppid;
	uint64_t start_ns;           /* CLOCK_MONOTONIC: fork event, or /proc start time */
	uint64_t dead_ns;            /* CLOCK_MONOTONIC of the exit; 0: alive */
	uint32_t uid, euid;
	bool ids_known;              /* uid/euid read or reported; else they are null */
	char sid[SESSION_ID_MAX + 1];
};

struct ptab;

/* A table of PTAB_CAP slots. 0 or -ENOMEM. */
int ptab_new(struct ptab **out);
void ptab_free(struct ptab *t);
/* Inserts or replaces e (by pid). 0 or -ENOSPC when the table is full. */
int ptab_put(struct ptab *t, const struct ptab_ent *e);
/* Copies pid's entry into out; dead entries only with dead_ok. True when found. */
bool ptab_get(struct ptab *t, pid_t pid, bool dead_ok, struct ptab_ent *out);
/* Marks pid exited at now_ns (kept PTAB_DEAD_KEEP_NS for late file events). */
void ptab_exit(struct ptab *t, pid_t pid, uint64_t now_ns);
/* Sets pid's uids (uid change event); no-op when pid is unknown. */
void ptab_set_uids(struct ptab *t, pid_t pid, uint32_t ruid, uint32_t euid);
/* Drops pid (a dead entry whose pid the kernel reused for a host process). */
void ptab_del(struct ptab *t, pid_t pid);
/* Drops dead entries older than PTAB_DEAD_KEEP_NS. */
void ptab_sweep(struct ptab *t, uint64_t now_ns);
/* Copies up to max live entries into out (audit/escape.c); how many. */
size_t ptab_live(struct ptab *t, struct ptab_ent *out, size_t max);
/* Sets the sid of pid's live entry if it is still the one started at start_ns. */
bool ptab_set_sid(struct ptab *t, pid_t pid, uint64_t start_ns, const char *sid);

/* ---- what /proc says about an exec (audit/procread.c) --------------------------------- */

struct exec_info {
	bool same;                   /* /proc/PID is the process that exec'd (start time) */
	bool has_stat, has_ids, has_exe, has_cwd;
	struct proc_stat_info st;
	uint32_t uid, euid;
	char exe[PATH_MAX];
	char cwd[PATH_MAX];
	char *cmdline;               /* malloc'd, NULL when unreadable */
	size_t cmdlen;
	bool argv_complete;          /* the whole cmdline was read, and it was not empty */
	bool argv_truncated;         /* longer than AUDIT_ARGV_MAX: cut by us */
	bool args_kernel;            /* from the kernel's EXECVE records (else /proc, read
				      * after the exec: the process could have rewritten them) */
	uint64_t mntns;              /* mount namespace inode; 0 unknown */
	bool has_fd0, has_fd1;       /* /proc/PID/fd/0 and 1 could be read */
	char fd0[PATH_MAX];          /* their link text: "pipe:[N]", "/dev/pts/0", ... */
	char fd1[PATH_MAX];
};

/*
 * Reads /proc/PID for an exec observed at exec_ns (CLOCK_MONOTONIC): first the start
 * time (a pid reused after exec_ns is refused: x->same false, nothing else read), then
 * cmdline, exe, cwd, status. Whatever could not be read stays unset. 0, -ESRCH (gone
 * or not the same process) or -ENOMEM.
 */
int exec_info_read(pid_t pid, uint64_t exec_ns, bool want_argv, struct exec_info *x);
void exec_info_clear(struct exec_info *x);

/* The session of pid from /proc/PID/cgroup (prefix: the sessions' parent). 0 with sid
 * ("" for none) and start_ns, -ESRCH, -errno. */
int proc_session_of(pid_t pid, const char *prefix, char *sid, size_t sidlen,
		    uint64_t *start_ns);

/* Monotonic ns of a /proc start time (clock ticks since boot). */
uint64_t ticks_to_mono_ns(uint64_t ticks);

/* ---- what program an exec ran (audit/exeid.c) -------------------------------------- */

/* Reads the well-known programs once (thread-safe; also done by the first lookup). */
void exeid_init(void);
/* The well-known name ("curl", "dash", ...) of the program when it is one of them under
 * any name (same inode, or the same size and SHA-256), else NULL. With is_exe, the file
 * /proc/PID/exe holds while the process lives, else the file at path. */
const char *exeid_known_as(pid_t pid, const char *path, bool is_exe);
/* Whether exe is the dynamic loader (ld-linux*.so*, ld.so). */
bool exeid_is_loader(const char *exe);
/* For the loader's cmdline: the program it loads (the first non-option argument after
 * argv[0]), with its length in *alen; NULL when there is none. */
const char *exeid_loaded(const char *cmdline, size_t len, size_t *alen);

/* ---- mounts in sessions' own mount namespaces (audit/mountwatch.c) ---------------- */

struct mntwatch;

/* Reads the daemon's own namespace and mounts (the baseline). 0 or -errno. */
int mntwatch_new(struct mntwatch **out);
void mntwatch_free(struct mntwatch *w);
/* Connector thread: a process of session sid runs in namespace ns (thread-safe). */
void mntwatch_note(struct mntwatch *w, uint64_t ns, pid_t pid, const char *sid);
/* Fanotify thread, once a second: emits file.mount / file.unmount for what changed. */
void mntwatch_poll(struct mntwatch *w);
/* The count of session mount namespaces not watched (more than 64 at once) since the
 * last call, reset (mntwatch_poll reports it as sensor.loss "mountwatch"). */
uint64_t mntwatch_take_turned_away(struct mntwatch *w);
/* The inode in an "mnt:[INODE]" namespace link; 0 when malformed. */
uint64_t mntns_of(const char *nslink);
/* The fanotify mount-event group the fanotify thread polls; -1 when the kernel has none. */
int mntwatch_fd(const struct mntwatch *w);
/* The group for the daemon's own namespace (readable: call mntwatch_on_event); -1. */
int mntwatch_host_fd(const struct mntwatch *w);
/* Fanotify thread, when mntwatch_fd is readable: reads the namespaces again at once. */
void mntwatch_on_event(struct mntwatch *w);

/* Called by the watcher on the fanotify thread: a mount seen in the namespace of pid (0:
 * the daemon's own; sid: its session, "" for the host's), a filesystem no longer mounted in any namespace read, the session
 * of a pid (false: none). */
struct mntwatch_hooks {
	void *ctx;
	/* nsfd: the mount namespace (an open nsfs fd, which keeps it and its mounts alive
	 * after its last process), else -1 and nspid lives in it (0: the daemon's own). */
	void (*mounted)(void *ctx, pid_t nspid, int nsfd, const char *sid,
			const struct mount_entry *m);
	void (*unmounted)(void *ctx, const struct mount_entry *m);
	bool (*session_of)(void *ctx, pid_t pid, char *sid, size_t len);
};
void mntwatch_set_hooks(struct mntwatch *w, const struct mntwatch_hooks *h);

/* fanotify mount events (audit/mntfan.c). mntfan_open: a FAN_REPORT_MNT group, or -errno
 * (-EINVAL before Linux 6.15). mntfan_mark: marks pid's mount namespace, 0 or -errno.
 * mntfan_read: drains the group; the number of attach/detach events, the pid of the last
 * and whether it was an attach, and whether the queue overflowed. */
int mntfan_open(void);
int mntfan_mark(int fd, pid_t pid);
size_t mntfan_read(int fd, pid_t *pid, bool *attach, bool *overflow);
/* mntfan_read_all: drains the group; the first max events' pids and kinds, the count. */
size_t mntfan_read_all(int fd, pid_t *pids, bool *attach, size_t max, bool *overflow);

/* ---- sensors ----------------------------------------------------------------------- */

/*
 * State shared by the threads and audit.c. The sync fields let the fanotify thread wait
 * until the proc connector thread has taken in every fork/exec queued before a file
 * event was read: a process's fork and exec events are queued before it can touch a
 * file, so after that wait a pid missing from the table is not a session's.
 */
struct audit {
	struct ptab *tab;
	char prefix[256];
	pid_t self;
	struct procconn *pc;
	struct fanmon *fm;
	struct mntwatch *mw;         /* NULL: mounts not watched */
	struct pkgtrack *pk;         /* NULL: package installs not tracked */
	struct auditsrc *as;         /* NULL: execs from the proc connector */
	atomic_bool exec_audit;      /* process.exec from the audit source, not the connector */
	/* With the audit source: the connector's session execs held until their audit
	 * record comes, else emitted by the connector (audit/execpend.h). NULL: none. */
	struct execpend *pend;
	pthread_mutex_t sync_mu;
	pthread_cond_t sync_cv;
	uint64_t done_ns;            /* connector events queued before this are processed */
	int poke_fd;                 /* eventfd: asks the connector thread to catch up */
	int proc_rcvbuf;             /* connector SO_RCVBUF (audit.proc_rcvbuf) */
};

/* Connector thread: every event queued before t (monotonic ns) has been processed. */
void audit_sync_publish(struct audit *a, uint64_t t);
/*
 * Fanotify thread: waits (at most timeout_ms) until the connector thread has processed
 * what was queued before t. True when it has (or when there is no connector sensor).
 */
bool audit_sync_wait(struct audit *a, uint64_t t, int timeout_ms);

struct procconn;
struct fanmon;

/* Opens the proc connector and starts its thread. 0 or -errno (nothing left running). */
int procconn_start(struct procconn **out, struct audit *a);
/* Stops the thread, reports pending losses, frees. Accepts NULL. */
void procconn_stop(struct procconn *p);

/*
 * The audit-subsystem exec source (audit/auditsrc.c): subscribes to the read-only
 * multicast group, adds the execve rules (and enables auditing, raises the backlog
 * limit) remembering what to put back, starts its thread. 0 or -errno (nothing changed
 * in the kernel then). auditsrc_stop: joins, deletes exactly our rules, restores the
 * enabled flag and backlog limit. Accepts NULL.
 */
struct auditsrc;
int auditsrc_start(struct auditsrc **out, struct audit *a);
void auditsrc_stop(struct auditsrc *s);
/* audit_exec_probe (audit/audit.h), asked of the audit subsystem (audit/auditwatch.c). */
const char *auditsrc_probe(bool want_audit, char *why, size_t len);

/* Opens fanotify, marks the filesystems, starts its thread. 0 or -errno. */
int fanmon_start(struct fanmon **out, struct audit *a, const struct audit_settings *s);
/* Session sid's workdir (its reads are logged like a sensitive prefix's); NULL or ""
 * forgets it. Thread-safe. */
void fanmon_workdir(struct fanmon *f, const char *sid, const char *path);
void fanmon_stop(struct fanmon *f);

/* ---- events (audit/procemit.c): 0 or -errno from event_emit ---------------------- */

int procemit_exec(const struct cn_event *ev, const struct ptab_ent *pe,
		  const struct exec_info *x);
int procemit_exit(const struct cn_event *ev, const struct ptab_ent *pe);
int procemit_uid(const struct cn_event *ev, const struct ptab_ent *pe);
/*
 * The emitter queue (audit/procq.c): the connector thread queues what it read, one
 * normal-priority thread builds and emits the events in order. procq_exec takes x's
 * cmdline buffer. 0 or -ENOMEM (the record is dropped; a full queue is counted and
 * reported as sensor.loss "audit_emit_queue"). procq_kick wakes the emitter (once per
 * batch); procq_stop emits what is queued, then joins.
 */
struct procq;
int procq_start(struct procq **out);
void procq_stop(struct procq *q);
int procq_exec(struct procq *q, const struct cn_event *ev, const struct ptab_ent *pe,
	       struct exec_info *x);
int procq_exit(struct procq *q, const struct cn_event *ev, const struct ptab_ent *pe);
int procq_uid(struct procq *q, const struct cn_event *ev, const struct ptab_ent *pe);
void procq_kick(struct procq *q);
/* Journals audit.exec_source {exec_source, why}: where process.exec comes from now
 * (audit/auditwatch.c). */
void audit_emit_exec_source(const char *src, const char *why);
/* Emits sensor.loss {sensor, lost (NULL-able: -1 = unknown), why}. 0 or -errno. */
int audit_emit_loss(const char *sensor, int64_t lost, const char *why);

#endif
