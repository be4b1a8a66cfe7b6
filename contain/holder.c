/*
 * The daemon's side of a session's holder: make it, find it again, check a process
 * against it, kill it. The holder's own code is in init.c.
 */
#include "contain/contain_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/proc.h"

static const char *const step_names[] = {
	[HOLDER_STEP_UNSHARE] = "unshare", [HOLDER_STEP_FORK] = "fork",
	[HOLDER_STEP_PID] = "pid", [HOLDER_STEP_PROPAGATION] = "mount propagation",
	[HOLDER_STEP_PROC] = "/proc", [HOLDER_STEP_SYS] = "/sys and the cgroup tree",
	[HOLDER_STEP_DEV] = "/dev", [HOLDER_STEP_MASKS] = "masking the daemon's files",
	[HOLDER_STEP_DUMPABLE] = "dumpable", [HOLDER_STEP_READY] = "ready",
	[HOLDER_STEP_HOSTNS] = "joining pid 1's mount namespace",
};

/* The super options of the cgroup v1 mount at path ("rw,cpu,cpuacct" -> "cpu,cpuacct"). */
static int cg1_options(const char *path, char *out, size_t len)
{
	char line[1024], mnt[512], fstype[32], opts[256], *sep, *p;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret == -ENOENT && fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
		    sscanf(sep + 3, "%31s %*s %255s", fstype, opts) != 2)
			continue;
		if (strcmp(mnt, path) != 0 || strcmp(fstype, "cgroup") != 0)
			continue;
		p = opts;
		if (strncmp(p, "rw,", 3) == 0 || strncmp(p, "ro,", 3) == 0)
			p += 3;
		snprintf(out, len, "%s", p);
		ret = 0;
	}
	fclose(f);
	return ret;
}

/* pid 1's mount namespace when the daemon runs in another one (a systemd unit with
 * ProtectSystem= has its own), else -1: sessions see the host, not the daemon's view. */
static int host_mntns(void)
{
	struct stat a, b;
	int fd = open("/proc/1/ns/mnt", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &a) < 0 || stat("/proc/self/ns/mnt", &b) < 0 || a.st_ino == b.st_ino) {
		close(fd);
		return -1;
	}
	return fd;
}

static int recv_msg(int sock, int timeout_ms, struct holder_msg *m)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	ssize_t n;
	int r = poll(&p, 1, timeout_ms);

	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	n = recv(sock, m, sizeof(*m), 0);
	if (n == 0)
		return -ECHILD;   /* the child died without a word */
	if (n != (ssize_t)sizeof(*m))
		return n < 0 ? -errno : -EPROTO;
	return 0;
}

static int await_step(int sock, int timeout_ms, int want, struct holder_msg *m, char *err,
		      size_t errlen)
{
	int ret = recv_msg(sock, timeout_ms, m);

	if (ret) {
		snprintf(err, errlen, "session holder: %s", strerror(-ret));
		return ret;
	}
	if (m->step == want)
		return 0;
	snprintf(err, errlen, "session holder: %s failed: %s",
		 m->step > 0 && m->step <= HOLDER_STEP_HOSTNS ? step_names[m->step] : "a step",
		 strerror(m->err));
	return m->err > 0 ? -m->err : -EPROTO;
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static int run_child(const struct holder_args *a, int (*attach_fn)(void *, pid_t),
		     void *ctx, int timeout_ms, pid_t *init, char *err, size_t errlen)
{
	struct holder_msg m;
	int sp[2], ret;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	pid = fork();
	if (pid == 0)
		holder_child(a, sp[1]);
	close(sp[1]);
	if (pid < 0) {
		ret = -errno;
		close(sp[0]);
		return ret;
	}
	/* In the session's cgroups before it unshares: its cgroup namespace is rooted there. */
	ret = attach_fn(ctx, pid);
	if (ret)
		snprintf(err, errlen, "session holder: cannot enter the session's cgroups: %s",
			 strerror(-ret));
	if (ret == 0 && send(sp[0], "g", 1, MSG_NOSIGNAL) != 1)
		ret = -errno;
	if (ret == 0)
		ret = await_step(sp[0], timeout_ms, HOLDER_STEP_PID, &m, err, errlen);
	if (ret == 0) {
		*init = m.pid;
		ret = await_step(sp[0], timeout_ms, HOLDER_STEP_READY, &m, err, errlen);
		if (ret)
			kill(*init, SIGKILL);
	}
	if (ret)
		kill(pid, SIGKILL);
	reap(pid);
	close(sp[0]);
	return ret;
}

int contain_holder_spawn(const struct contain_setup *setup,
			 int (*attach_fn)(void *ctx, pid_t pid), void *ctx, int timeout_ms,
			 struct contain_holder *out, char *err, size_t errlen)
{
	struct holder_args *a = calloc(1, sizeof(*a));
	pid_t init = 0;
	size_t i;
	int ret = a ? 0 : -ENOMEM;

	for (i = 0; ret == 0 && i < setup->n_cg1 && i < 8; i++) {
		ret = cg1_options(setup->cg1_mounts[i], a->cg1_opts[i], sizeof(a->cg1_opts[i]));
		if (ret)
			snprintf(err, errlen, "%s: not a cgroup v1 mount", setup->cg1_mounts[i]);
	}
	if (ret == 0) {
		a->setup = setup;
		a->host_mnt = host_mntns();
		ret = run_child(a, attach_fn, ctx, timeout_ms, &init, err, errlen);
		if (a->host_mnt >= 0)
			close(a->host_mnt);
	}
	if (ret == 0 && (ret = contain_holder_read(init, out)) < 0) {
		snprintf(err, errlen, "session holder %d: %s", (int)init, strerror(-ret));
		kill(init, SIGKILL);
	}
	free(a);
	return ret;
}

static int ns_ino(pid_t pid, const char *ns, uint64_t *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	if (stat(path, &st) < 0)
		return -errno;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

int contain_holder_read(pid_t pid, struct contain_holder *out)
{
	struct contain_holder h = { .pid = pid };
	int ret = proc_starttime(pid, &h.start);

	if (ret == 0)
		ret = ns_ino(pid, "pid", &h.pidns);
	if (ret == 0)
		ret = ns_ino(pid, "mnt", &h.mntns);
	if (ret == 0)
		*out = h;
	return ret;
}

bool contain_holder_alive(const struct contain_holder *h)
{
	uint64_t start = 0;

	return h->pid > 0 && proc_starttime(h->pid, &start) == 0 && start == h->start;
}

int contain_holder_kill(const struct contain_holder *h, int timeout_ms)
{
	struct pollfd p = { .events = POLLIN };
	uint64_t start = 0;
	int ret = 0;

	if (h->pid <= 0)
		return 0;
	p.fd = (int)syscall(SYS_pidfd_open, h->pid, 0);
	if (p.fd < 0)
		return errno == ESRCH ? 0 : -errno;
	/* Through the pidfd: the pid we check is the pid we kill. */
	if (proc_starttime(h->pid, &start) < 0 || start != h->start)
		goto out;
	if (syscall(SYS_pidfd_send_signal, p.fd, SIGKILL, NULL, 0) < 0) {
		ret = errno == ESRCH ? 0 : -errno;
		goto out;
	}
	if (poll(&p, 1, timeout_ms) == 0)
		ret = -ETIMEDOUT;
out:
	close(p.fd);
	return ret;
}

static int same_ns(pid_t pid, const char *ns, pid_t holder, const char *hns, char *why,
		   size_t len)
{
	uint64_t a = 0, b = 0;
	int ret = ns_ino(pid, ns, &a);

	if (ret == 0)
		ret = ns_ino(holder, hns, &b);
	if (ret)
		return ret;
	if (a != b) {
		snprintf(why, len, "not in the session's %s namespace", hns);
		return -EPERM;
	}
	return 0;
}

static int read_status(pid_t pid, struct contain_status *st)
{
	char path[64], buf[8192];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -errno;
	return contain_parse_status(buf, (size_t)n, st);
}

int contain_verify(pid_t pid, const struct contain_holder *h, uint64_t keep, char *why,
		   size_t len)
{
	struct contain_status st;
	struct rlimit rl;
	int ret = same_ns(pid, "mnt", h->pid, "mnt", why, len);

	if (ret == 0)
		ret = same_ns(pid, "cgroup", h->pid, "cgroup", why, len);
	if (ret == 0)
		ret = same_ns(pid, "ipc", h->pid, "ipc", why, len);
	if (ret == 0)
		ret = same_ns(pid, "pid_for_children", h->pid, "pid", why, len);
	if (ret == 0 && (ret = read_status(pid, &st)) == 0)
		ret = contain_status_check(&st, keep, contain_cap_last(), why, len);
	if (ret == 0 && prlimit(pid, RLIMIT_RTPRIO, NULL, &rl) < 0)
		ret = -errno;
	if (ret == 0 && (rl.rlim_cur != 0 || rl.rlim_max != 0)) {
		snprintf(why, len, "RLIMIT_RTPRIO is not 0");
		ret = -EPERM;
	}
	if (ret < 0 && ret != -EPERM)
		snprintf(why, len, "cannot read pid %d: %s", (int)pid, strerror(-ret));
	return ret;
}

int contain_pidns_chain(pid_t pid, uint64_t *inos, size_t max)
{
	char path[64];
	struct stat st;
	size_t n = 0;
	int fd, parent;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (n < max && fstat(fd, &st) == 0) {
		inos[n++] = (uint64_t)st.st_ino;
		/* EPERM at our own namespace: nothing above it is ours to see. */
		parent = ioctl(fd, NS_GET_PARENT);
		close(fd);
		fd = parent;
		if (fd < 0)
			break;
	}
	if (fd >= 0)
		close(fd);
	return (int)n;
}
