/*
 * Every filesystem a session can write is marked: at start each writable local
 * filesystem of the daemon's namespace (/dev/shm, /run, /tmp on tmpfs, ...), later each
 * one mounted in the host's namespace or a session's own, as the mount watcher sees it
 * (audit/mountwatch.c: at once with fanotify mount events, else within a second).
 *
 * The handle of a filesystem's paths is a detached clone of its mount (open_tree with
 * OPEN_TREE_CLONE), not an fd on the mount itself: an fd on the mount would make
 * `umount` fail with EBUSY. The clone keeps the superblock (and a tmpfs's contents)
 * alive until the watcher sees its last mount go (fanmark_unmount). Paths under a clone
 * are its root-relative path with the mount point, as seen where it was mounted, in
 * front.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit/fan_int.h"
#include "common/log.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif

/* Kernel filesystems whose files are not a session's data (or cannot be marked). */
static bool pseudo_fs(const char *t)
{
	static const char *const v[] = {
		"proc", "sysfs", "cgroup", "cgroup2", "devpts", "nsfs", "mqueue", "debugfs",
		"tracefs", "securityfs", "pstore", "bpf", "configfs", "fusectl", "binfmt_misc",
		"autofs", "efivarfs", "hugetlbfs", "rpc_pipefs", "selinuxfs", "ramfs", NULL,
	};

	for (size_t i = 0; v[i]; i++)
		if (strcmp(t, v[i]) == 0)
			return true;
	return false;
}

int fanmark_mount(struct fanmon *f, pid_t pid, const char *target, const char *fstype)
{
	char path[PATH_MAX + 32];
	struct statfs sf;
	struct stat st;
	uint64_t fsid;
	int32_t v[2];
	int fd, ret;

	if (pseudo_fs(fstype))
		return -EEXIST;
	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, target);
	else
		snprintf(path, sizeof(path), "%s", target);
	fd = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &sf) != 0 || fstat(fd, &st) != 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	memcpy(v, &sf.f_fsid, sizeof(v));
	fsid = (uint64_t)(uint32_t)v[0] << 32 | (uint32_t)v[1];
	if (fanpath_has(&f->mnts, fsid)) {
		close(fd);
		return -EEXIST;
	}
	if (fanotify_mark(f->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, f->mask, fd, NULL) != 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fanpath_mount_fd(&f->mnts, fd, fsid, st.st_dev, target);
}

void fanmark_unmount(struct fanmon *f, dev_t dev)
{
	(void)fanpath_unmount(&f->mnts, dev);   /* not ours: nothing to do */
}

void fanmark_all(struct fanmon *f)
{
	struct mount_entry m;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	int ret;

	while (fp && (n = getline(&line, &cap, fp)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (mountinfo_line(line, (size_t)n, &m) != 0 || m.ro)
			continue;
		ret = fanmark_mount(f, 0, m.target, m.fstype);
		if (ret && ret != -EEXIST)
			log_errno(ret, "audit: files on %s (%s) are not watched", m.target, m.fstype);
	}
	free(line);
	if (fp)
		fclose(fp);
}
