/*
 * The audit companion: what ran in a session and what it touched, as the kernel saw it.
 *
 * This module composes the sensors (audit/audit.c) around the pid table they share:
 *   - the process sensor (sensors/process/): the proc connector (fork, exec, uid change,
 *     exit of thread-group leaders), which keeps the pid -> session table by the fork
 *     tree and emits process.exec/exit;
 *   - the kernel audit exec source (sensors/kaudit/): process.exec from the audit
 *     subsystem's records, with the connector as its shadow;
 *   - the file sensor (sensors/file/): fanotify (filesystem marks, FID + DFID_NAME
 *     reporting), which emits file.* events for pids the table says belong to a
 *     session, and the mounts of sessions' namespaces;
 *   - the package tracker (packages/), fed by the connector.
 * Losses (receive-buffer overflow, per-CPU sequence gaps, fanotify queue overflow) become
 * sensor.loss events. Nothing here logs except the thread loops (the edge); the parsers
 * of kernel and /proc bytes are pure functions over buffers, fuzzed in tests/fuzz/.
 * Design and limits: docs/audit.md.
 */
#ifndef SANDGATE_AUDIT_AUDIT_H
#define SANDGATE_AUDIT_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sensors/shared/settings.h"   /* struct audit_settings */

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

#endif
