/*
 * The package tracker (packages/pkg_track.c) as its users see it: the module
 * (audit/audit.c) makes it and hands it the sessions' policies and the gateway's
 * names, the proc connector thread (sensors/process/procconn.c) feeds it installers'
 * execs and exits. It looks pids up in the sensors' pid table (sensors/shared/proctab.h).
 */
#ifndef SANDGATE_PACKAGES_PKGTRACK_H
#define SANDGATE_PACKAGES_PKGTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pkgtrack;
struct ptab;

/* Starts the worker thread; alerts: the tracker emits its own alert for an unapproved
 * source (docs/packages.md). 0 or -errno. */
int pkgtrack_new(struct pkgtrack **out, struct ptab *tab, bool alerts);
/* Finishes the runs already queued, stops the worker, frees. Accepts NULL. */
void pkgtrack_free(struct pkgtrack *t);
/* Connector thread: an exec of pid in session sid with argv (cmdline), cwd, uid. */
void pkgtrack_exec(struct pkgtrack *t, pid_t pid, pid_t ppid, const char *sid,
		   uint64_t exec_ns, const char *cmdline, size_t cmdlen, const char *cwd,
		   bool uid_known, uint32_t uid);
/* Connector thread: pid exited. */
void pkgtrack_exit(struct pkgtrack *t, pid_t pid);
/*
 * Packet threads, through the gateway's hooks: a net.dns / net.connect of session sid by
 * pid named these (qname, domain, sni, http_host, dst address); kept when pid is in a
 * run's tree (source_confirmed).
 */
void pkgtrack_net_seen(struct pkgtrack *t, const char *sid, pid_t pid,
		       const char *const *names, size_t n);
/* Connector thread, once a second: runs whose root is gone without an exit event. */
void pkgtrack_tick(struct pkgtrack *t);
/* Any thread: sets (replaces) the approved sources of session sid. 0 or -ENOMEM. */
int pkgtrack_policy(struct pkgtrack *t, const char *sid, const char *const *approved,
		    size_t n, bool block);
/* Any thread: whether the gateway enforces `unapproved: block` (the alert's action). */
void pkgtrack_enforced(struct pkgtrack *t, bool on);
/* Any thread, cheap: whether session sid has a run in progress under `unapproved: block`. */
bool pkgtrack_blocking(struct pkgtrack *t, const char *sid);
/*
 * Any thread: when pid is in the process tree of a run of session sid in progress under
 * `unapproved: block`, the distinct hosts of the session's approved sources (at most max,
 * each stride bytes at out) and their count; -ENOENT when it is not.
 */
int pkgtrack_hosts(struct pkgtrack *t, const char *sid, pid_t pid, char *out, size_t stride,
		   size_t max);

#endif
