/*
 * The pid behind a session's packet: the local socket of the packet's tuple (sock_diag,
 * in the gateway's namespace), then the process among the session's own (cgroup.procs
 * of its cgroup and of its sub-cgroups) that holds that socket. Never a process outside
 * the session: a pid is reported only when it is found there.
 */
#ifndef SANDGATE_GATEWAY_SOCKPID_H
#define SANDGATE_GATEWAY_SOCKPID_H

#include <stdint.h>
#include <sys/types.h>

#include "gateway/pkt.h"

#define SOCKPID_PROCS_MAX 512      /* processes of a session examined */
#define SOCKPID_FDS_MAX 4096       /* descriptors of one process examined */
#define SOCKPID_CG_DEPTH 8         /* levels of sub-cgroups below the session's examined */

/*
 * The inode of the local TCP/UDP socket that sent p (p's source is the local end), asked
 * on sock_diag socket fd. 0 and *ino, -ENOENT (none: routed traffic, or already closed),
 * -EINVAL (not TCP/UDP), -errno.
 */
int sockpid_inode(int fd, const struct gw_pkt *p, uint32_t *ino);

/*
 * The pid holding socket ino among the processes of cgroup cgdir and of its sub-cgroups
 * (SOCKPID_CG_DEPTH levels, SOCKPID_PROCS_MAX processes in all). 0 and *pid, -ENOENT,
 * -errno (cgdir itself unreadable).
 */
int sockpid_find(const char *cgdir, uint32_t ino, pid_t *pid);

/*
 * Recent holders, one cache per queue worker (no lock), so that a session's DNS queries
 * do not cost a walk of its processes' descriptors each: under a flood of another
 * session that walk took 1-5 ms of the worker's time per query (2026-12-02). An entry is
 * checked before it is used, never trusted: the process must still hold the socket at
 * the same descriptor (/proc/PID/fd/FD, one readlink) and be the same process, not a
 * later one with its pid (its start time, /proc/PID/stat). It is used only within
 * SOCKPID_CACHE_MS of the walk that found the process among the session's own (a
 * session's process cannot leave its cgroup, see contain/), and a miss walks as
 * sockpid_find does. Kept: the socket last found for a socket inode
 * (SOCKPID_CACHE_SOCKETS of them) and each session's last holder
 * (SOCKPID_CACHE_SESSIONS sessions, by cgroup directory), tried first for a new socket.
 */
#define SOCKPID_CACHE_MS 5000
#define SOCKPID_CACHE_SOCKETS 32
#define SOCKPID_CACHE_SESSIONS 8

struct sockpid_cache;

struct sockpid_cache *sockpid_cache_new(void);   /* NULL: out of memory */
void sockpid_cache_free(struct sockpid_cache *c);

/* sockpid_find through cache c (now_ms: a monotonic clock); the same results. */
int sockpid_find_cached(struct sockpid_cache *c, const char *cgdir, uint32_t ino,
			uint64_t now_ms, pid_t *pid);

#endif
