/*
 * /proc reads behind an exec. One directory fd of /proc/PID pins the process: once its
 * start time is checked, every later openat() through that fd reads that process or
 * fails (ESRCH), never a newcomer that reused the pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sensors/process/proc_int.h"

/* Reads up to len bytes of dir/file. 0 with *got, or -errno. */
static int read_at(int dir, const char *file, char *buf, size_t len, size_t *got)
{
	int fd = openat(dir, file, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len);
	if (n < 0)
		ret = -errno;
	else
		*got = (size_t)n;
	close(fd);
	return ret;
}

uint64_t ticks_to_mono_ns(uint64_t ticks)
{
	static long hz;
	struct timespec b, m;
	uint64_t boot_ns;
	int64_t off;

	if (hz <= 0)
		hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		hz = 100;
	/* Start times count from boot including suspend; the connector uses monotonic.
	 * Without suspend the two clocks agree and off may come out a few ns negative. */
	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_MONOTONIC, &m);
	off = (int64_t)(b.tv_sec - m.tv_sec) * 1000000000 + (b.tv_nsec - m.tv_nsec);
	if (off < 0)
		off = 0;
	boot_ns = ticks * (1000000000ull / (uint64_t)hz);
	return boot_ns > (uint64_t)off ? boot_ns - (uint64_t)off : 0;
}

/* The whole cmdline, at most AUDIT_ARGV_MAX bytes. 0 or -errno. */
static int read_cmdline(int dir, struct exec_info *x)
{
	int fd = openat(dir, "cmdline", O_RDONLY | O_CLOEXEC);
	size_t cap = 4096;
	ssize_t n = 0;
	char *b;

	if (fd < 0)
		return -errno;
	b = malloc(cap + 1);
	x->cmdlen = 0;
	while (b && (n = read(fd, b + x->cmdlen, cap - x->cmdlen)) > 0) {
		x->cmdlen += (size_t)n;
		if (x->cmdlen == cap && cap >= AUDIT_ARGV_MAX) {
			x->argv_truncated = true;
			break;
		}
		if (x->cmdlen == cap) {
			char *nb;

			cap = cap * 2 > AUDIT_ARGV_MAX ? AUDIT_ARGV_MAX : cap * 2;
			nb = realloc(b, cap + 1);

			if (!nb)
				break;
			b = nb;
		}
	}
	close(fd);
	if (!b || n < 0) {
		free(b);
		return b ? -ESRCH : -ENOMEM;
	}
	x->cmdline = b;
	/* An exited (zombie) process has no mm: its cmdline reads empty. */
	x->argv_complete = x->cmdlen > 0 && !x->argv_truncated && n == 0;
	return 0;
}

static void read_link(int dir, const char *name, char *out, bool *ok)
{
	ssize_t n = readlinkat(dir, name, out, PATH_MAX - 1);

	*ok = n > 0;
	out[*ok ? n : 0] = '\0';
}

static void read_status(int dir, struct exec_info *x)
{
	char buf[4096];
	size_t got = 0;

	x->has_ids = read_at(dir, "status", buf, sizeof(buf), &got) == 0 &&
		     proc_status_uids(buf, got, &x->uid, &x->euid) == 0;
}

static void read_mntns(int dir, struct exec_info *x)
{
	char link[64];
	ssize_t n = readlinkat(dir, "ns/mnt", link, sizeof(link) - 1);

	if (n <= 0)
		return;
	link[n] = '\0';
	x->mntns = mntns_of(link);
}

/* True when /proc/PID (dir) started no later than the exec it is read for. */
static bool same_process(int dir, uint64_t exec_ns, struct exec_info *x)
{
	char buf[1024];
	size_t got = 0;

	if (read_at(dir, "stat", buf, sizeof(buf), &got) != 0 ||
	    proc_stat_parse(buf, got, &x->st) != 0)
		return false;
	x->has_stat = true;
	/* Start times have clock-tick granularity (rounded down): allow one tick. */
	return ticks_to_mono_ns(x->st.start_ticks) <= exec_ns + 20000000ull;
}

static atomic_int pinned_exes;

/*
 * The exe of the process at dir, pinned for exeid, within EXEC_PINNED_MAX. O_PATH: the
 * file's own open is not called (on the connector's real-time thread, an open that a
 * FUSE daemon of the session answers when it likes would stall every exec); the emitter
 * opens it for reading through /proc/self/fd later.
 */
static void pin_exe(int dir, struct exec_info *x)
{
	if (atomic_fetch_add(&pinned_exes, 1) >= EXEC_PINNED_MAX) {
		atomic_fetch_sub(&pinned_exes, 1);
		return;
	}
	x->exe_fd = openat(dir, "exe", O_PATH | O_CLOEXEC);
	x->has_exe_fd = x->exe_fd >= 0;
	if (!x->has_exe_fd)
		atomic_fetch_sub(&pinned_exes, 1);
}

int exec_info_read(pid_t pid, uint64_t exec_ns, unsigned flags, struct exec_info *x)
{
	char path[32];
	int dir, ret = 0;

	memset(x, 0, sizeof(*x));
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -ESRCH;
	/* argv first: it is what a short-lived process takes with it. Every read goes
	 * through dir, so checking the start time afterwards covers it as well. */
	if ((flags & EXEC_READ_ARGV) && read_cmdline(dir, x) == -ENOMEM)
		ret = -ENOMEM;
	x->same = same_process(dir, exec_ns, x);
	if (!x->same) {
		exec_info_clear(x);
		memset(x, 0, sizeof(*x));
		ret = -ESRCH;
		goto out;
	}
	read_link(dir, "exe", x->exe, &x->has_exe);
	if (flags & EXEC_READ_PIN_EXE)
		pin_exe(dir, x);
	read_link(dir, "cwd", x->cwd, &x->has_cwd);
	read_status(dir, x);
	read_mntns(dir, x);
	/* stdin/stdout as the exec left them: what pairs `curl | sh` (detect/pipeshell.c) */
	read_link(dir, "fd/0", x->fd0, &x->has_fd0);
	read_link(dir, "fd/1", x->fd1, &x->has_fd1);
out:
	close(dir);
	return ret;
}

void exec_info_clear(struct exec_info *x)
{
	free(x->cmdline);
	x->cmdline = NULL;
	if (x->has_exe_fd) {
		close(x->exe_fd);
		atomic_fetch_sub(&pinned_exes, 1);
		x->has_exe_fd = false;
	}
}

void exec_info_moved(struct exec_info *x)
{
	x->cmdline = NULL;
	x->has_exe_fd = false;
}

int proc_session_of(pid_t pid, const char *prefix, char *sid, size_t sidlen,
		    uint64_t *start_ns)
{
	char path[32], buf[4096], cg[4096];
	struct proc_stat_info st;
	size_t got = 0;
	int dir, ret;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -ESRCH;
	ret = read_at(dir, "stat", buf, sizeof(buf), &got);
	if (ret == 0)
		ret = proc_stat_parse(buf, got, &st);
	if (ret == 0)
		ret = read_at(dir, "cgroup", buf, sizeof(buf) - 1, &got);
	if (ret == 0)
		ret = proc_cgroup_v2(buf, got, cg, sizeof(cg));
	close(dir);
	if (ret)
		return ret == -ENOENT || ret == -EINVAL ? -ESRCH : ret;
	*start_ns = ticks_to_mono_ns(st.start_ticks);
	if (session_of_cgpath(cg, prefix, sid, sidlen) < 0)
		sid[0] = '\0';
	return 0;
}
