/*
 * The command's side of containment: join the holder's namespaces, then give up what a
 * contained command may not keep. Order matters: setns needs CAP_SYS_ADMIN, so the
 * capabilities go after it; no_new_privs last, so nothing exec'd can win them back.
 */
#include "contain/contain.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/proc.h"

#define NS_FLAGS (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWIPC | CLONE_NEWPID)

int contain_enter(pid_t holder, uint64_t start)
{
	uint64_t now = 0;
	int fd, ret;

	fd = (int)syscall(SYS_pidfd_open, holder, 0);
	if (fd < 0)
		return errno == EINVAL ? -ESRCH : -errno;
	/* The pidfd names one process for good: if it is still the holder now, it is the
	 * holder we join (a reused pid would show another start time). */
	ret = proc_starttime(holder, &now);
	if (ret == 0 && now != start)
		ret = -ESRCH;
	if (ret == 0 && setns(fd, NS_FLAGS) < 0)
		ret = -errno;
	close(fd);
	if (ret == 0 && chdir("/") < 0)
		ret = -errno;
	return ret;
}

/* The name under /run/netns of the network namespace with inode ino, into name. */
static int netns_name(ino_t ino, dev_t dev, char *name, size_t len)
{
	DIR *d = opendir("/run/netns");
	struct dirent *e;
	struct stat st;
	char path[300];
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while (ret == -ENOENT && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", e->d_name);
		if (stat(path, &st) == 0 && st.st_ino == ino && st.st_dev == dev) {
			snprintf(name, len, "%s", e->d_name);
			ret = 0;
		}
	}
	closedir(d);
	return ret;
}

int contain_netns_etc(ino_t ino, dev_t dev)
{
	char name[256], dir[300], src[600], dst[600];
	struct stat a, b;
	struct dirent *e;
	DIR *d;
	int ret = netns_name(ino, dev, name, sizeof(name));

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	snprintf(dir, sizeof(dir), "/etc/netns/%s", name);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (ret == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(src, sizeof(src), "%s/%s", dir, e->d_name);
		snprintf(dst, sizeof(dst), "/etc/%s", e->d_name);
		/* Already there (an earlier run of the session): not stacked again. */
		if (stat(src, &a) < 0 || stat(dst, &b) < 0 ||
		    (a.st_ino == b.st_ino && a.st_dev == b.st_dev))
			continue;
		if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
			ret = -errno;
	}
	closedir(d);
	return ret;
}

static int caps_set(uint64_t keep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	int i;

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	for (i = 0; i < 2; i++) {
		uint32_t k = (uint32_t)(keep >> (32 * i));

		data[i].effective &= k;
		data[i].permitted &= k;
		data[i].inheritable = 0;
	}
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

int contain_drop_self(uint64_t keep)
{
	static const struct rlimit zero = { 0, 0 };
	int cap, last = contain_cap_last(), ret;

	if (setrlimit(RLIMIT_RTPRIO, &zero) < 0 || setrlimit(RLIMIT_NICE, &zero) < 0)
		return -errno;
	/* The bounding set first: it needs CAP_SETPCAP, which may itself be dropped. */
	for (cap = 0; cap <= last; cap++) {
		if (keep & (1ULL << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	ret = caps_set(keep);
	if (ret)
		return ret;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return contain_userns_block();
}
