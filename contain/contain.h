/*
 * Containment of the commands `sandgate run` starts in a session (docs/threat-model.md).
 *
 * Each session gets one holder process: pid 1 of the session's own PID namespace, also
 * owning its mount, cgroup and IPC namespaces. The daemon makes it (contain_holder_spawn)
 * at the session's first run. A contained command joins those namespaces through the
 * holder's pidfd (contain_enter), gives up every capability outside the keep set, sets
 * no_new_privs, RLIMIT_RTPRIO/RLIMIT_NICE 0 and a seccomp filter refusing new user
 * namespaces (contain_drop_self), and only then asks
 * the daemon to move it into the session's cgroups; the daemon checks all of it from
 * /proc (contain_verify) before it does, so a client that skips a step is refused.
 *
 * Every function returns 0 or -errno and never logs. The parsers take bytes and do no
 * I/O (fuzzed: tests/fuzz/fuzz_contain_status.c).
 */
#ifndef SANDGATE_CONTAIN_CONTAIN_H
#define SANDGATE_CONTAIN_CONTAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONTAIN_CAP_MAX 63            /* capability numbers 0..63 fit a u64 mask */
#define CONTAIN_MASKS_MAX 16

/*
 * The capabilities a contained command keeps (docs/threat-model.md says why each):
 * CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP, NET_BIND_SERVICE,
 * IPC_LOCK, IPC_OWNER, SYS_CHROOT, LEASE, SETFCAP. Everything else is dropped, also
 * capabilities newer kernels add: the list is an allowlist.
 */
uint64_t contain_keep_default(void);

/* "CAP_NET_RAW", "cap_net_raw" or "net_raw" -> 13. 0 or -EINVAL. */
int contain_cap_parse(const char *name, int *cap);
/* "CAP_NET_RAW" for 13; NULL for an unknown number. */
const char *contain_cap_name(int cap);
/*
 * A comma-separated list of capability names into a mask ("ALL" is refused: that is
 * --privileged). 0 or -EINVAL with the offending name copied into bad.
 */
int contain_cap_list(const char *list, uint64_t *mask, char *bad, size_t badlen);

/* What /proc/PID/status says about a process's privileges. */
struct contain_status {
	uint64_t inh, prm, eff, bnd, amb;
	bool no_new_privs;
	int seccomp;                 /* the Seccomp: line (2: filter); -1 when there is none */
};

/*
 * Parses the Cap* and NoNewPrivs lines of /proc/PID/status bytes. 0, -ENOENT when a
 * line is missing, -EINVAL when a value is malformed.
 */
int contain_parse_status(const char *buf, size_t len, struct contain_status *st);

/*
 * Checks st against keep: no capability outside keep (limited to cap_last) in any of
 * the five sets, no_new_privs set, and a seccomp filter (contain_userns_block). 0, or
 * -EPERM with the first offence in why.
 */
int contain_status_check(const struct contain_status *st, uint64_t keep, int cap_last,
			 char *why, size_t len);

/* The parent pid (field 4) from /proc/PID/stat bytes ("PID (COMM) S PPID ..."). 0 or
 * -EINVAL. */
int contain_stat_ppid(const char *buf, size_t len, pid_t *ppid);

/* /proc/sys/kernel/cap_last_cap, or 40 when unreadable. */
int contain_cap_last(void);

/* ---- the command's side (cli/cmd_run.c) ------------------------------------------ */

/*
 * Joins the mount, cgroup, IPC and PID (for children) namespaces of holder, which must
 * still be the process that started at start (clock ticks, /proc/PID/stat). Needs
 * CAP_SYS_ADMIN. Afterwards the caller's root and cwd are the namespace's "/". 0,
 * -ESRCH (holder gone or replaced), -errno.
 */
int contain_enter(pid_t holder, uint64_t start);
/*
 * `ip netns exec NAME` bind-mounts the files of /etc/netns/NAME over /etc for what it runs; joining
 * the session's mount namespace loses that. Called after contain_enter, with the inode
 * and device of the caller's network namespace (read before): when it has a name under
 * /run/netns, binds the same files in the session's mount namespace (once: a file
 * already bound is left alone). 0 (also when there is nothing to bind) or -errno.
 */
int contain_netns_etc(ino_t ino, dev_t dev);
/*
 * Drops every capability outside keep from the bounding, ambient, inheritable,
 * permitted and effective sets, sets RLIMIT_RTPRIO and RLIMIT_NICE to 0 (hard too),
 * no_new_privs, and installs contain_userns_block's filter. 0 or -errno.
 */
int contain_drop_self(uint64_t keep);
/*
 * A seccomp filter for the caller and all it starts: no new user namespace (unshare and
 * clone with CLONE_NEWUSER, setns to one: EPERM; clone3: ENOSYS, the C library falls back
 * to clone). Needs no_new_privs (or CAP_SYS_ADMIN). 0, -errno, -EOPNOTSUPP on an
 * architecture whose call numbers it does not know (contain/seccomp.c).
 */
int contain_userns_block(void);

/* ---- the daemon's side (sessions/session_run.c) ------------------------------------ */

/* Where the holder finds what it mounts and what it hides. Strings are borrowed. */
struct contain_setup {
	const char *cg2_mount;                 /* the host's cgroup2 mount */
	const char *cg1_mounts[8];             /* v1 hierarchies the session is in */
	size_t n_cg1;
	const char *hide[CONTAIN_MASKS_MAX];   /* state dir, control socket, config... */
	size_t n_hide;
	const char *ro[CONTAIN_MASKS_MAX];     /* the daemon's binaries: read-only */
	size_t n_ro;
};

/* A running holder. */
struct contain_holder {
	pid_t pid;                 /* in the daemon's PID namespace */
	uint64_t start;            /* clock ticks since boot */
	uint64_t pidns, mntns;     /* namespace inode numbers */
};

/*
 * Makes the holder of a session: forks, lets attach_fn move the child into the session's
 * cgroups (so the new cgroup namespace is rooted there), unshares the namespaces, forks
 * pid 1, which mounts /proc, /sys (read-only, with a cgroup tree of the session alone),
 * a minimal /dev and the masks of setup, then waits for the daemon's SIGKILL. Waits at
 * most timeout_ms. 0 with *out, or -errno (the children are killed) with the step that
 * failed in err.
 */
int contain_holder_spawn(const struct contain_setup *setup,
			 int (*attach_fn)(void *ctx, pid_t pid), void *ctx, int timeout_ms,
			 struct contain_holder *out, char *err, size_t errlen);
/* Reads pid's start time and namespaces into *out (adoption after a restart). 0 or -errno. */
int contain_holder_read(pid_t pid, struct contain_holder *out);
/* True while h->pid is still the holder that started at h->start. */
bool contain_holder_alive(const struct contain_holder *h);
/* Kills h (SIGKILL through a pidfd, so never a reused pid) and waits up to timeout_ms. */
int contain_holder_kill(const struct contain_holder *h, int timeout_ms);

/*
 * Checks that pid is a contained member of h: same mount, cgroup and IPC namespaces,
 * its children's PID namespace h's, every capability outside keep gone, no_new_privs,
 * a seccomp filter, RLIMIT_RTPRIO 0. 0, or -EPERM with the first thing amiss in why, or -errno.
 */
int contain_verify(pid_t pid, const struct contain_holder *h, uint64_t keep, char *why,
		   size_t len);

/*
 * The PID namespace inodes of pid and each of its ancestors (NS_GET_PARENT), innermost
 * first, at most max. The number written, or -errno.
 */
int contain_pidns_chain(pid_t pid, uint64_t *inos, size_t max);

#endif
