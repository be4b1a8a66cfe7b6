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

/* Whether process pid holds socket:[ino] among its first SOCKPID_FDS_MAX descriptors. */
static bool holds(pid_t pid, const char *want)
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
	}
	closedir(d);
	return found;
}

/* Looks for the holder of want among dir/cgroup.procs; *budget counts processes left. */
static int find_in(const char *dir, const char *want, int *budget, pid_t *pid)
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
		if (v > 0 && v <= INT_MAX && holds((pid_t)v, want)) {
			*pid = (pid_t)v;
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

/* dir and its sub-cgroups (depth first, at most depth levels below). */
static int find_tree(const char *dir, const char *want, int depth, int *budget, pid_t *pid)
{
	char sub[PATH_MAX];
	struct dirent *de;
	int ret = find_in(dir, want, budget, pid);
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
		ret = find_tree(sub, want, depth - 1, budget, pid);
		if (ret != 0 && ret != -ENOENT)
			ret = -ENOENT;   /* a sub-cgroup removed while we looked: go on */
	}
	closedir(d);
	return ret;
}

int sockpid_find(const char *cgdir, uint32_t ino, pid_t *pid)
{
	char want[64];
	int budget = SOCKPID_PROCS_MAX;

	snprintf(want, sizeof(want), "socket:[%u]", ino);
	/* A session's processes may have moved into cgroups below its own (a sandbox runtime
	 * nesting its workers): they are still the session's. */
	return find_tree(cgdir, want, SOCKPID_CG_DEPTH, &budget, pid);
}
