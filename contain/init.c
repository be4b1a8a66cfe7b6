/*
 * The holder's own code, run in a child of the (multi-threaded) daemon without exec:
 * only system calls, no allocation, no stdio; every string was prepared before fork.
 * It reports each step that fails as {step, errno} on the socket it was given.
 *
 * The mount namespace it builds (bubblewrap and crun do much the same):
 * - / is a recursive slave of the host: host mounts appear, nothing goes back;
 * - /proc is the session's PID namespace's, with /proc/sys, sysrq-trigger, irq, bus and
 *   fs read-only and kcore, keys, timer_list, sched_debug, acpi and scsi masked;
 * - /sys is a fresh read-only sysfs (no debugfs, tracefs, bpffs, securityfs below it),
 *   with a read-only cgroup tree mounted from the session's cgroup namespace: the
 *   session's own cgroups and nothing above them, in v2 and in each v1 hierarchy;
 * - /dev is a read-only tmpfs with null, zero, full, random, urandom and tty bound from
 *   the host, a new devpts instance, its own /dev/shm and /dev/mqueue: no disks, no
 *   /dev/mem, no kmsg;
 * - the daemon's state directory (journal, keys, sessions) and control socket are
 *   covered (empty tmpfs, /dev/null), its binaries and config read-only.
 */
#include "contain/contain_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOSUID_NODEV_NOEXEC (MS_NOSUID | MS_NODEV | MS_NOEXEC)

static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
#define N_DEV (sizeof(dev_nodes) / sizeof(dev_nodes[0]))

/* "/proc/self/fd/N" without stdio. */
static void fd_path(char *out, size_t len, int fd)
{
	static const char pre[] = "/proc/self/fd/";
	char digits[12];
	size_t n = 0, i;

	do {
		digits[n++] = (char)('0' + fd % 10);
		fd /= 10;
	} while (fd > 0 && n < sizeof(digits));
	if (sizeof(pre) + n > len) {
		out[0] = '\0';
		return;
	}
	memcpy(out, pre, sizeof(pre) - 1);
	for (i = 0; i < n; i++)
		out[sizeof(pre) - 1 + i] = digits[n - 1 - i];
	out[sizeof(pre) - 1 + n] = '\0';
}

/* Closes every descriptor but keep. */
static void close_from(int keep)
{
	int fd;

	if (keep > 0 && syscall(SYS_close_range, 0U, (unsigned)keep - 1, 0U) < 0)
		for (fd = 0; fd < keep; fd++)
			close(fd);
	if (syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0U) < 0)
		for (fd = keep + 1; fd < 65536; fd++)
			close(fd);
}

static void report(int sock, int step, int err, pid_t pid)
{
	struct holder_msg m = { .step = step, .err = err, .pid = pid };

	if (send(sock, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		_exit(1);
}

/* A small path join without stdio: dir + "/" + name into out. */
static const char *join(char *out, size_t len, const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);

	if (a + b + 2 > len)
		return dir;   /* cannot happen with our short names; mount then fails visibly */
	memcpy(out, dir, a);
	out[a] = '/';
	memcpy(out + a + 1, name, b + 1);
	return out;
}

static int ro_bind(const char *path)
{
	if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
		  NULL) < 0)
		return -errno;
	return 0;
}

/* Covers path: a directory with an empty read-only tmpfs, anything else with /dev/null. */
static int hide(const char *path, const char *null)
{
	struct stat st;

	/* Followed: mount(2) covers what a link points to (/var/run -> /run). */
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	if (S_ISDIR(st.st_mode)) {
		if (mount("tmpfs", path, "tmpfs", MS_RDONLY | NOSUID_NODEV_NOEXEC,
			  "mode=000,size=4k") < 0)
			return -errno;
		return 0;
	}
	if (mount(null, path, NULL, MS_BIND, NULL) < 0)
		return -errno;
	return 0;
}

static int setup_proc(const char *null)
{
	static const char *const ro[] = { "/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
					  "/proc/bus", "/proc/fs" };
	static const char *const masked[] = { "/proc/kcore", "/proc/keys", "/proc/timer_list",
					      "/proc/sched_debug", "/proc/acpi", "/proc/scsi" };
	size_t i;
	int ret = 0;

	/* The host's /proc goes (nothing left below ours to uncover), ours comes. */
	if ((umount2("/proc", MNT_DETACH) < 0 && errno != EINVAL) ||
	    mount("proc", "/proc", "proc", NOSUID_NODEV_NOEXEC, NULL) < 0)
		return -errno;
	for (i = 0; ret == 0 && i < sizeof(ro) / sizeof(ro[0]); i++)
		ret = ro_bind(ro[i]);
	for (i = 0; ret == 0 && i < sizeof(masked) / sizeof(masked[0]); i++)
		ret = hide(masked[i], null);
	return ret;
}

/* Read-only for this mount only: the superblock may be the host's (sysfs of the same
 * network namespace), whose flags a new mount may not change. */
static int remount_ro(const char *path)
{
	if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | NOSUID_NODEV_NOEXEC,
		  NULL) < 0)
		return -errno;
	return 0;
}

static int mount_cgroups(const struct holder_args *a)
{
	const unsigned long fl = NOSUID_NODEV_NOEXEC;
	size_t i;
	int ret;

	/* A pure v2 host has its cgroup2 at /sys/fs/cgroup itself. */
	if (strcmp(a->setup->cg2_mount, "/sys/fs/cgroup") == 0) {
		if (mount("cgroup2", "/sys/fs/cgroup", "cgroup2", fl, NULL) < 0)
			return -errno;
		return remount_ro("/sys/fs/cgroup");
	}
	if (mount("tmpfs", "/sys/fs/cgroup", "tmpfs", fl, "mode=755") < 0)
		return -errno;
	if (a->setup->cg2_mount[0]) {
		if (mkdir(a->setup->cg2_mount, 0755) < 0 && errno != EEXIST)
			return -errno;
		if (mount("cgroup2", a->setup->cg2_mount, "cgroup2", fl, NULL) < 0)
			return -errno;
		if ((ret = remount_ro(a->setup->cg2_mount)) < 0)
			return ret;
	}
	for (i = 0; i < a->setup->n_cg1; i++) {
		if (mkdir(a->setup->cg1_mounts[i], 0755) < 0 && errno != EEXIST)
			return -errno;
		if (mount("cgroup", a->setup->cg1_mounts[i], "cgroup", fl, a->cg1_opts[i]) < 0)
			return -errno;
		if ((ret = remount_ro(a->setup->cg1_mounts[i])) < 0)
			return ret;
	}
	return remount_ro("/sys/fs/cgroup");
}

static int setup_sys(const struct holder_args *a)
{
	int ret;

	/* The copy goes with everything below it (debugfs, tracefs, bpffs, securityfs):
	 * the kernel refuses the same sysfs again on top of itself. */
	if (umount2("/sys", MNT_DETACH) < 0 ||
	    mount("sysfs", "/sys", "sysfs", NOSUID_NODEV_NOEXEC, NULL) < 0)
		return -errno;
	ret = remount_ro("/sys");
	if (ret == 0)
		ret = mount_cgroups(a);
	return ret;
}

static int dev_links(void)
{
	static const char *const links[][2] = {
		{ "pts/ptmx", "/dev/ptmx" }, { "/proc/self/fd", "/dev/fd" },
		{ "/proc/self/fd/0", "/dev/stdin" }, { "/proc/self/fd/1", "/dev/stdout" },
		{ "/proc/self/fd/2", "/dev/stderr" },
	};
	size_t i;

	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlink(links[i][0], links[i][1]) < 0)
			return -errno;
	return 0;
}

/* nodes: O_PATH fds of the host's device nodes, opened before /dev was covered. */
static int setup_dev(const int *nodes)
{
	char path[64], src[64];
	size_t i;
	int fd;

	/* On top of the host's /dev, not instead: the nodes are bound from it. */
	if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=755,size=64k") < 0)
		return -errno;
	for (i = 0; i < N_DEV; i++) {
		if (nodes[i] < 0)
			continue;
		join(path, sizeof(path), "/dev", dev_nodes[i]);
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
		if (fd < 0)
			return -errno;
		close(fd);
		fd_path(src, sizeof(src), nodes[i]);
		if (mount(src, path, NULL, MS_BIND, NULL) < 0)
			return -errno;
	}
	if (mkdir("/dev/pts", 0755) < 0 || mkdir("/dev/shm", 01777) < 0 ||
	    mkdir("/dev/mqueue", 0755) < 0)
		return -errno;
	if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		  "newinstance,ptmxmode=0666,mode=0620,gid=5") < 0 ||
	    mount("tmpfs", "/dev/shm", "tmpfs", NOSUID_NODEV_NOEXEC, "mode=1777") < 0)
		return -errno;
	/* Its own IPC namespace: its own POSIX message queues (best effort). */
	(void)mount("mqueue", "/dev/mqueue", "mqueue", NOSUID_NODEV_NOEXEC, NULL);
	if (dev_links() < 0)
		return -errno;
	return remount_ro("/dev");
}

static int setup_masks(const struct contain_setup *s)
{
	size_t i;
	int ret = 0;

	for (i = 0; ret == 0 && i < s->n_hide; i++)
		ret = hide(s->hide[i], "/dev/null");
	for (i = 0; ret == 0 && i < s->n_ro; i++)
		ret = ro_bind(s->ro[i]);
	return ret;
}

/* Every step in order; *step names the one that failed. */
static int setup_all(const struct holder_args *a, int *step)
{
	int nodes[N_DEV], ret;
	char path[64];
	size_t i;

	*step = HOLDER_STEP_PROPAGATION;
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return -errno;
	for (i = 0; i < N_DEV; i++)
		nodes[i] = open(join(path, sizeof(path), "/dev", dev_nodes[i]),
				O_PATH | O_CLOEXEC);
	*step = HOLDER_STEP_PROC;
	ret = setup_proc("/dev/null");
	if (ret == 0) {
		*step = HOLDER_STEP_SYS;
		ret = setup_sys(a);
	}
	if (ret == 0) {
		*step = HOLDER_STEP_DEV;
		ret = setup_dev(nodes);
	}
	for (i = 0; i < N_DEV; i++)
		if (nodes[i] >= 0)
			close(nodes[i]);
	if (ret == 0) {
		*step = HOLDER_STEP_MASKS;
		ret = setup_masks(a->setup);
	}
	return ret;
}

/* pid 1 of the session: reaps orphans until the daemon's SIGKILL. */
static void __attribute__((noreturn)) init_loop(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_SETMASK, &set, NULL);
	for (;;) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		sigwaitinfo(&set, NULL);
	}
}

static void __attribute__((noreturn)) init_main(const struct holder_args *a, int sock)
{
	int step = 0, ret;

	if (chdir("/") < 0)
		_exit(1);
	/* ps shows the daemon's argv (no exec); the name at least says what this is. */
	prctl(PR_SET_NAME, "sandgate-init", 0, 0, 0);
	ret = setup_all(a, &step);
	if (ret) {
		report(sock, step, -ret, 0);
		_exit(1);
	}
	/* Not dumpable and holding capabilities the session lacks: nothing in the session
	 * may ptrace it or read its /proc files (it sits outside the session's cgroup). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		report(sock, HOLDER_STEP_DUMPABLE, errno, 0);
		_exit(1);
	}
	report(sock, HOLDER_STEP_READY, 0, 0);
	close(sock);
	init_loop();
}

void holder_child(const struct holder_args *a, int sock)
{
	sigset_t none;
	char go;
	pid_t pid;
	int sig;

	/* Nothing of the daemon's: no handlers its code would run, no fds (the listener,
	 * netlink and queue sockets, journal files), no blocked signals. */
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (a->host_mnt >= 0) {
		/* The host's view, not the daemon's own (systemd's ProtectSystem, PrivateTmp). */
		if (setns(a->host_mnt, CLONE_NEWNS) < 0) {
			report(sock, HOLDER_STEP_HOSTNS, errno, 0);
			_exit(1);
		}
	}
	close_from(sock);
	if (read(sock, &go, 1) != 1)
		_exit(1);
	if (unshare(CLONE_NEWCGROUP | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID) < 0) {
		report(sock, HOLDER_STEP_UNSHARE, errno, 0);
		_exit(1);
	}
	pid = fork();
	if (pid < 0) {
		report(sock, HOLDER_STEP_FORK, errno, 0);
		_exit(1);
	}
	if (pid == 0)
		init_main(a, sock);
	report(sock, HOLDER_STEP_PID, 0, pid);
	_exit(0);
}
