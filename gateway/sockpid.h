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

#endif
