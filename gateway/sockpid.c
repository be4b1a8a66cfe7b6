/* Socket inode by tuple (inet_diag) and its holder among a session's pids (sockpid.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/proc.h"
#include "gateway/sockpid.h"

struct diag_req {
	struct nlmsghdr nlh;
	struct inet_diag_req_v2 r;
};

static void fill_id(struct inet_diag_sockid *id, const struct gw_pkt *p, bool swap)
{
	size_t al = p->family == AF_INET ? 4 : 16;

	memset(id, 0, sizeof(*id));
	/* TCP looks up (src = local); UDP's exact lookup has them swapped (kernel
	 * udp_dump_one: "src and dst are swapped for historical reasons"). */
	memcpy(id->idiag_src, swap ? p->dst : p->src, al);
	memcpy(id->idiag_dst, swap ? p->src : p->dst, al);
	id->idiag_sport = htons(swap ? p->dport : p->sport);
	id->idiag_dport = htons(swap ? p->sport : p->dport);
	id->idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	id->idiag_cookie[1] = INET_DIAG_NOCOOKIE;
}

/* One exact request; the answer is one inet_diag_msg or an error. */
static int ask(int fd, const struct gw_pkt *p, bool swap, uint32_t *ino)
{
	struct diag_req req = {
		.nlh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = (uint8_t)p->family, .sdiag_protocol = p->proto,
		       .idiag_states = ~0u },
	};
	long buf[1024];
	const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
	const struct inet_diag_msg *m;
	ssize_t n;

	fill_id(&req.r.id, p, swap);
	if (send(fd, &req, sizeof(req), 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(h, (size_t)n) || h->nlmsg_type == NLMSG_ERROR)
		return -ENOENT;
	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
		return -EBADMSG;
	m = NLMSG_DATA(h);
	*ino = m->idiag_inode;
	return *ino ? 0 : -ENOENT;
}

int sockpid_inode(int fd, const struct gw_pkt *p, uint32_t *ino)
{
	bool udp = p->proto == IPPROTO_UDP;
	int ret;

	if (!p->has_ports || (p->proto != IPPROTO_TCP && !udp))
		return -EINVAL;
	ret = ask(fd, p, udp, ino);
	/* An unconnected UDP socket is found by its local end only: try the other way. */
	if (ret == -ENOENT && udp)
		ret = ask(fd, p, false, ino);
	return ret;
}

/* Whether process pid holds socket:[ino] among its first SOCKPID_FDS_MAX descriptors;
 * *fd the descriptor. */
static bool holds(pid_t pid, const char *want, int *fd)
{
	char dir[64], path[PATH_MAX], link[64];
	struct dirent *de;
	bool found = false;
	ssize_t n;
	int k = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && k++ < SOCKPID_FDS_MAX && (de = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = strcmp(link, want) == 0;
		if (found)
			*fd = atoi(de->d_name);
	}
	closedir(d);
	return found;
}

/* Whether process pid holds want at descriptor fd: one readlink. */
static bool holds_at(pid_t pid, int fd, const char *want)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return strcmp(link, want) == 0;
}

/*
 * When process pid started (common/proc.h); 0 when it is gone or unreadable. With the
 * pid it names one process: a pid that came back for another process comes back with a
 * later start, since the host's pid counter has to wrap around pid_max for it (tens of
 * thousands of forks, far more than one tick).
 */
static uint64_t start_of(pid_t pid)
{
	uint64_t start;

	return proc_starttime(pid, &start) == 0 ? start : 0;
}

/* Looks for the holder of want among dir/cgroup.procs; *budget counts processes left. */
static int find_in(const char *dir, const char *want, int *budget, pid_t *pid, int *fd)
{
	char path[PATH_MAX];
	int ret = -ENOENT;
	long v;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (ret == -ENOENT && *budget > 0 && fscanf(f, "%ld", &v) == 1) {
		(*budget)--;
		if (v > 0 && v <= INT_MAX && holds((pid_t)v, want, fd)) {
			*pid = (pid_t)v;
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

/* dir and its sub-cgroups (depth first, at most depth levels below). */
static int find_tree(const char *dir, const char *want, int depth, int *budget, pid_t *pid,
		     int *fd)
{
	char sub[PATH_MAX];
	struct dirent *de;
	int ret = find_in(dir, want, budget, pid, fd);
	DIR *d;

	if (ret != -ENOENT || depth == 0 || *budget <= 0)
		return ret;
	d = opendir(dir);
	if (!d)
		return -ENOENT;   /* the cgroup went away meanwhile: not found */
	while (ret == -ENOENT && *budget > 0 && (de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= (int)sizeof(sub))
			continue;
		ret = find_tree(sub, want, depth - 1, budget, pid, fd);
		if (ret != 0 && ret != -ENOENT)
			ret = -ENOENT;   /* a sub-cgroup removed while we looked: go on */
	}
	closedir(d);
	return ret;
}

static int find(const char *cgdir, const char *want, pid_t *pid, int *fd)
{
	int budget = SOCKPID_PROCS_MAX;

	/* A session's processes may have moved into cgroups below its own (a sandbox runtime
	 * nesting its workers): they are still the session's. */
	return find_tree(cgdir, want, SOCKPID_CG_DEPTH, &budget, pid, fd);
}

int sockpid_find(const char *cgdir, uint32_t ino, pid_t *pid)
{
	char want[64];
	int fd;

	snprintf(want, sizeof(want), "socket:[%u]", ino);
	return find(cgdir, want, pid, &fd);
}

/* ---- the cache ---------------------------------------------------------------------- */

struct holder {
	uint64_t cg_hash;         /* the session it was found in (FNV-1a of its cgroup) */
	uint32_t ino;             /* 0: empty */
	pid_t pid;
	uint64_t start;           /* start_of(pid) when found: the process, not just its pid */
	int fd;
	uint64_t at_ms;           /* when it was found among the session's processes */
};

struct recent {
	uint64_t cg_hash;         /* the session's cgroup directory (FNV-1a); 0: empty */
	pid_t pid;                /* the last holder found there */
	uint64_t start;           /* its start_of() */
	uint64_t at_ms;
};

struct sockpid_cache {
	struct holder h[SOCKPID_CACHE_SOCKETS];
	struct recent r[SOCKPID_CACHE_SESSIONS];
	unsigned next_h, next_r;
};

struct sockpid_cache *sockpid_cache_new(void)
{
	return calloc(1, sizeof(struct sockpid_cache));
}

void sockpid_cache_free(struct sockpid_cache *c)
{
	free(c);
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h ? h : 1;
}

static bool fresh(uint64_t at_ms, uint64_t now_ms)
{
	return now_ms >= at_ms && now_ms - at_ms <= SOCKPID_CACHE_MS;
}

static void remember(struct sockpid_cache *c, uint64_t cg, uint32_t ino, pid_t pid,
		     uint64_t start, int fd, uint64_t now_ms)
{
	struct recent *r = NULL;

	c->h[c->next_h] = (struct holder){ cg, ino, pid, start, fd, now_ms };
	c->next_h = (c->next_h + 1) % SOCKPID_CACHE_SOCKETS;
	for (unsigned i = 0; i < SOCKPID_CACHE_SESSIONS && !r; i++)
		if (c->r[i].cg_hash == cg)
			r = &c->r[i];
	if (!r) {
		r = &c->r[c->next_r];
		c->next_r = (c->next_r + 1) % SOCKPID_CACHE_SESSIONS;
	}
	*r = (struct recent){ cg, pid, start, now_ms };
}

int sockpid_find_cached(struct sockpid_cache *c, const char *cgdir, uint32_t ino,
			uint64_t now_ms, pid_t *pid)
{
	uint64_t cg = fnv1a(cgdir), start;
	char want[64];
	int fd, ret;

	snprintf(want, sizeof(want), "socket:[%u]", ino);
	/*
	 * An entry's pid is checked to be the same process as the walk found, after the
	 * descriptor (so the process checked is the one that held it): the holder may have
	 * exited and its pid come back for a process of another session that was passed
	 * the socket, or any of the session's sockets (t_gateway_pidattack named such an
	 * s2 process for s1's packets before this check, 2026-12-02).
	 */
	/* The same socket again (a resolver client that keeps its socket): one readlink. */
	for (unsigned i = 0; i < SOCKPID_CACHE_SOCKETS; i++) {
		struct holder *h = &c->h[i];

		if (h->ino == ino && h->cg_hash == cg && fresh(h->at_ms, now_ms) &&
		    holds_at(h->pid, h->fd, want) && start_of(h->pid) == h->start) {
			*pid = h->pid;
			return 0;
		}
	}
	/* A new socket of the session's last sender: that process's descriptors only. */
	for (unsigned i = 0; i < SOCKPID_CACHE_SESSIONS; i++) {
		struct recent *r = &c->r[i];

		if (r->cg_hash == cg && fresh(r->at_ms, now_ms) && holds(r->pid, want, &fd) &&
		    start_of(r->pid) == r->start) {
			remember(c, cg, ino, r->pid, r->start, fd, r->at_ms);
			*pid = r->pid;
			return 0;
		}
	}
	ret = find(cgdir, want, pid, &fd);
	/* Kept only with its start: a process gone already is not remembered. */
	if (ret == 0 && (start = start_of(*pid)) != 0)
		remember(c, cg, ino, *pid, start, fd, now_ms);
	return ret;
}
