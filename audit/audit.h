/*
 * The audit companion: what ran in a session and what it touched, as the kernel saw it.
 *
 * Two sensors, one thread each with its own epoll:
 *   - the proc connector (fork, exec, uid change, exit of thread-group leaders), which
 *     keeps the pid -> session table by the fork tree and emits process.exec/exit;
 *   - fanotify (filesystem marks, FID + DFID_NAME reporting), which emits file.* events
 *     for pids the table says belong to a session.
 * Losses (receive-buffer overflow, per-CPU sequence gaps, fanotify queue overflow) become
 * sensor.loss events. Nothing here logs except the two thread loops (the edge); the
 * parsers of kernel and /proc bytes are pure functions over buffers, fuzzed in
 * tests/fuzz/. Design and limits: docs/audit.md.
 */
#ifndef SANDGATE_AUDIT_AUDIT_H
#define SANDGATE_AUDIT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AUDIT_ARGV_MAX (160 * 1024)   /* cmdline bytes kept: JSON-escaped, fits a line */
#define AUDIT_COMM_MAX 64

/* ---- the sensors ----------------------------------------------------------------- */

struct audit_settings {
	const char *session_prefix;      /* sessions' v2 cgroup parent, "/sandgate" */
	bool proc;                       /* run the proc connector sensor */
	bool files;                      /* run the fanotify sensor */
	bool file_modify;                /* FAN_MODIFY: writes seen before the close */
	char *const *marks;              /* mount points to mark (filesystem marks) */
	size_t n_marks;
	char *const *sensitive;          /* read-logged prefixes; "~/x" = any home's x */
	size_t n_sensitive;
	bool packages;                   /* package.install from installer runs (proc) */
	bool package_alerts;             /* and an alert for an unapproved source: off when
					  * detection's rule raises it instead */
	bool exec_audit;                 /* process.exec from the audit subsystem (proc) */
	uint64_t proc_rcvbuf;            /* connector socket buffer, bytes; 0: 32 MiB */
	bool file_mounts;                /* mark every writable filesystem, now and mounted */
	uint64_t read_repeat_ms;         /* repeated reads summed up this often; 0: 60 s */
};

struct audit;

/*
 * Whether the audit exec source can run here, asked before the sensors start (for
 * daemon.start): a NETLINK_AUDIT socket, AUDIT_GET (CAP_AUDIT_CONTROL), the flag not
 * locked (enabled 2), the read-only multicast group (CAP_AUDIT_READ). Without want_audit
 * (audit.exec_source: proc_connector) nothing is asked. Returns the source that will run,
 * "audit" or "proc_connector", with why in why[len].
 */
const char *audit_exec_probe(bool want_audit, char *why, size_t len);

/*
 * Opens the proc connector socket and the fanotify group (privileged: root), marks the
 * filesystems, and starts the two threads. A sensor the kernel refuses is left off and
 * named in *off ("proc", "files"); the other still runs. Returns 0, or -errno when
 * nothing could start or memory ran out.
 */
int audit_start(struct audit **out, const struct audit_settings *s, char *off, size_t offlen);

/*
 * Seeds the pid table with a process already in session sid (daemon restart, adopted
 * cgroups). Thread-safe. 0, -ESRCH (gone) or -ENOSPC (table full).
 */
int audit_seed(struct audit *a, pid_t pid, const char *sid);

/*
 * Session escape (audit/escape.c): audit_escape_scan checks every live session process
 * the fork tree knows against its cgroup now; a process outside its session's cgroup
 * (moved out, or into another session's) is reported once as session.escape, and one
 * seeded into another session at a restart is given back to its ancestry's session.
 * Call from one thread (the daemon's timer). Returns the number reported.
 */
struct audit_escape;
int audit_escape_new(struct audit_escape **out);
void audit_escape_free(struct audit_escape *e);
size_t audit_escape_scan(struct audit *a, struct audit_escape *e);

/*
 * The package policy of session sid (its policy's approved_sources, and whether
 * unapproved is block): package.install's approved_source and the alert are judged
 * against it. Replaces what was set before. Thread-safe. 0 or -ENOMEM; 0 when packages
 * are not tracked.
 */
int audit_session_policy(struct audit *a, const char *sid, const char *const *approved,
			 size_t n, bool block);

/*
 * `unapproved: block` (docs/packages.md), for the gateway through the daemon's glue. All
 * thread-safe. audit_pkg_enforced: whether the gateway refuses an installer's other
 * hosts (the alert's action says block, else block_not_enforced). audit_pkg_blocking:
 * cheap, whether session sid has an installer run in progress under block.
 * audit_pkg_hosts: when pid is in such a run's process tree, the distinct hosts of the
 * session's approved sources (at most max, stride bytes each at out) and their count;
 * -ENOENT when it is not.
 */
void audit_pkg_enforced(struct audit *a, bool on);
/* What the gateway saw pid of session sid name (audit_pkg_net_seen: a net.connect's or
 * net.dns's names), for an installer's source_confirmed. Quick; thread-safe. */
void audit_pkg_net_seen(struct audit *a, const char *sid, pid_t pid,
			const char *const *names, size_t n);
bool audit_pkg_blocking(struct audit *a, const char *sid);
int audit_pkg_hosts(struct audit *a, const char *sid, pid_t pid, char *out, size_t stride,
		    size_t max);

/* Session sid's workdir: reads under it are logged like a sensitive path's. NULL
 * forgets it. Thread-safe; a no-op without the file sensor. */
void audit_session_workdir(struct audit *a, const char *sid, const char *path);

/* Stops both threads, flushes pending writes and loss counts, frees. Accepts NULL. */
void audit_stop(struct audit *a);

/* ---- proc connector messages (pure, fuzzed) -------------------------------------- */

/* CN_ACK: the reply to our listen request; it carries no per-CPU sequence number. */
enum cn_kind { CN_OTHER, CN_ACK, CN_FORK, CN_EXEC, CN_UID, CN_EXIT };

/* One proc connector event, decoded; fields not carried by the kind are 0. */
struct cn_event {
	enum cn_kind kind;
	uint32_t seq;                /* the per-CPU sequence number (cn_msg.seq) */
	uint32_t cpu;
	uint64_t ts_ns;              /* CLOCK_MONOTONIC */
	int32_t pid, tgid;           /* fork: the child; others: the process */
	int32_t ppid, ptgid;         /* fork: the parent; exit: the parent */
	uint32_t ruid, euid;         /* uid change */
	uint32_t exit_code, exit_signal;   /* exit: raw wait status, signal sent to parent;
					    * ack: exit_code holds the request's errno */
};

/*
 * Decodes the netlink datagram buf[0..len) into at most max events (*n set). Messages
 * that are not proc connector events, or too short for their kind, are skipped and
 * counted in *bad. Returns 0, or -EINVAL when the datagram's framing is broken (events
 * decoded before the break are kept in out).
 */
int cn_decode(const void *buf, size_t len, struct cn_event *out, size_t max, size_t *n,
	      size_t *bad);

/* Per-CPU sequence tracking: events missed between two seen on the same CPU. */
struct cn_seq;
int cn_seq_new(struct cn_seq **out, uint32_t ncpu);
void cn_seq_free(struct cn_seq *s);
/* Feeds one event's (cpu, seq); returns how many sequence numbers were skipped. */
uint64_t cn_seq_feed(struct cn_seq *s, uint32_t cpu, uint32_t seq);

/* Splits a raw wait status into exit code (or -1) and signal (or 0). */
void cn_exit_decode(uint32_t status, int *code, int *sig);

/* ---- /proc bytes (pure, fuzzed) ---------------------------------------------------- */

struct proc_stat_info {
	char comm[AUDIT_COMM_MAX];   /* printable copy of the comm field */
	int32_t ppid;
	uint64_t start_ticks;        /* field 22: clock ticks since boot */
};

/* Parses /proc/PID/stat bytes (comm may hold ')' and spaces). 0 or -EINVAL. */
int proc_stat_parse(const char *buf, size_t len, struct proc_stat_info *st);

/* Real and effective uid from /proc/PID/status bytes ("Uid:" line). 0 or -EINVAL. */
int proc_status_uids(const char *buf, size_t len, uint32_t *ruid, uint32_t *euid);

/*
 * Steps through NUL-separated /proc/PID/cmdline bytes: from *off, sets *arg and *alen to the
 * next argument (a last one without its NUL included) and advances *off. Returns true
 * while there is an argument.
 */
bool cmdline_next(const char *buf, size_t len, size_t *off, const char **arg, size_t *alen);

/* One line of /proc/PID/mountinfo: what file.mount / file.unmount report. */
struct mount_entry {
	char target[512];
	char fstype[64];
	char source[256];
	unsigned dev_major, dev_minor;   /* the filesystem's st_dev */
	bool ro;                     /* mounted read-only */
};

/* Parses one mountinfo line (no newline), decoding \ooo escapes. 0 or -EINVAL. */
int mountinfo_line(const char *line, size_t len, struct mount_entry *m);

/* ---- fanotify event records (pure, fuzzed) ------------------------------------------ */

/* A directory file handle plus entry name, as FAN_REPORT_DFID_NAME reports them. */
struct fan_dfid {
	bool set;
	uint64_t fsid;               /* the two fsid words as one value */
	const uint8_t *handle;       /* struct file_handle bytes (header included) */
	size_t handle_len;
	const char *name;            /* NUL-terminated inside the buffer; NULL: none */
};

struct fan_rec {
	uint64_t mask;
	int32_t pid;
	int32_t fd;
	struct fan_dfid dfid;        /* DFID_NAME (or DFID): the object's parent + name */
	struct fan_dfid old, new;    /* FAN_RENAME: where from, where to */
	struct fan_dfid fid;         /* FID: the object itself (name NULL), its identity */
	uint64_t mnt_id;             /* mount events */
	bool has_mnt;
};

/*
 * Reads the event at *off of a fanotify read() buffer and advances *off. Returns 1 with
 * r filled, 0 at the end, -EINVAL on a malformed record (stop reading this buffer) or
 * -EPROTO on a metadata version this code does not know.
 */
int fan_next(const uint8_t *buf, size_t len, size_t *off, struct fan_rec *r);

/*
 * Whether path (absolute) lies under one of the sensitive prefixes: "/etc" covers
 * "/etc" and "/etc/x"; "~/.ssh" covers ".ssh" in /root and in any /home/USER.
 */
bool audit_path_sensitive(const char *path, char *const *prefixes, size_t n);

#endif
