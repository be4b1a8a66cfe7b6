/*
 * Every filesystem a session can write is marked: at start each writable local
 * filesystem of the daemon's namespace (/dev/shm, /run, /tmp on tmpfs, ...), later each
 * one mounted in the host's namespace or a session's own, as the mount watcher sees it
 * (sensors/file/mountwatch.c: at once with fanotify mount events, else within a second).
 *
 * The handle of a filesystem's paths is a detached clone of its mount (open_tree with
 * OPEN_TREE_CLONE), not an fd on the mount itself: an fd on the mount would make
 * `umount` fail with EBUSY. The clone keeps the superblock (and a tmpfs's contents)
 * alive until the watcher sees its last mount go (fanmark_unmount). Paths under a clone
 * are its root-relative path with the mount point, as seen where it was mounted, in
 * front.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sensors/file/fan_int.h"
#include "common/log.h"
#include "journal/event.h"

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

struct clone_req {
	int nsfd;
	const char *path;
	int ret;   /* the clone's fd, or -errno */
};

/*
 * open_tree refuses to clone a mount of another namespace (EINVAL): a thread of ours
 * enters that namespace (it unshares its fs attributes first, which setns requires of a
 * thread) and clones it there; the thread ends with the namespace it entered.
 */
static void *clone_in_ns(void *arg)
{
	struct clone_req *r = arg;

	if (unshare(CLONE_FS) != 0 || setns(r->nsfd, CLONE_NEWNS) != 0) {
		r->ret = -errno;
		return NULL;
	}
	r->ret = (int)syscall(SYS_open_tree, AT_FDCWD, r->path,
			      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (r->ret < 0)
		r->ret = -errno;
	return NULL;
}

/* A detached clone of the mount at target in namespace nsfd, else (-1) pid's (0: ours).
 * fd or -errno. */
static int clone_mount(pid_t pid, int nsfd, const char *target)
{
	struct clone_req r = { .path = target, .ret = -ESRCH };
	char ns[48];
	pthread_t th;
	int ret;

	if (nsfd >= 0) {
		/* Held by the mount watcher: the namespace outlives its processes. */
		r.nsfd = nsfd;
		ret = pthread_create(&th, NULL, clone_in_ns, &r);
		if (ret == 0)
			pthread_join(th, NULL);
		return ret ? -ret : r.ret;
	}
	if (pid <= 0) {
		ret = (int)syscall(SYS_open_tree, AT_FDCWD, target,
				   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		return ret >= 0 ? ret : -errno;
	}
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
	r.nsfd = open(ns, O_RDONLY | O_CLOEXEC);
	if (r.nsfd < 0)
		return -errno;
	ret = pthread_create(&th, NULL, clone_in_ns, &r);
	if (ret == 0)
		pthread_join(th, NULL);
	close(r.nsfd);
	return ret ? -ret : r.ret;
}

int fanmark_mount(struct fanmon *f, pid_t pid, int nsfd, const char *target,
		  const char *fstype)
{
	struct statfs sf;
	struct stat st;
	uint64_t fsid;
	int32_t v[2];
	int fd, ret;

	if (pseudo_fs(fstype))
		return -EEXIST;
	ret = clone_mount(pid, nsfd, target);
	if (ret < 0)
		return ret;
	/* A filesystem marked already (a bind mount of a file of it, as /dev/null over
	 * /proc/keys in a contained run, is not a directory): nothing to do. */
	if (fstatfs(ret, &sf) == 0) {
		memcpy(v, &sf.f_fsid, sizeof(v));
		if (fanpath_has(&f->mnts, (uint64_t)(uint32_t)v[0] << 32 | (uint32_t)v[1])) {
			close(ret);
			return -EEXIST;
		}
	}
	/* open_tree gives an O_PATH fd, which open_by_handle_at and fanotify_mark refuse
	 * (EBADF): a directory fd on the clone's root. */
	fd = openat(ret, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(ret);
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
		ret = fanmark_mount(f, 0, -1, m.target, m.fstype);
		if (ret && ret != -EEXIST)
			log_errno(ret, "audit: files on %s (%s) are not watched", m.target, m.fstype);
	}
	free(line);
	if (fp)
		fclose(fp);
}

/* Lists the regular files under the clone fd (depth first, bounded) as file.write. */
static void catch_up_dir(int dfd, const char *sid, const char *path, size_t *left)
{
	char sub[PATH_MAX];
	struct dirent *de;
	struct event *e;
	DIR *d = fdopendir(dfd);

	if (!d) {
		close(dfd);
		return;
	}
	while (*left > 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= sizeof(sub))
			continue;
		(*left)--;
		if (de->d_type == DT_DIR) {
			int fd = openat(dirfd(d), de->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (fd >= 0)
				catch_up_dir(fd, sid, sub, left);
			continue;
		}
		if (de->d_type != DT_REG || !(e = event_new("file.write", sid[0] ? sid : NULL,
							  EVENT_SRC_KERNEL)))
			continue;
		event_str(e, "path", sub);
		event_null(e, "pid");   /* the writer is not known: only that it was written */
		event_null(e, "uid");
		event_null(e, "euid");
		event_bool(e, "written_before_mark", true);
		if (event_emit(e) != 0)
			log_warnx("audit: file.write of %s not recorded", sub);
	}
	closedir(d);
}

void fanmark_catch_up(struct fanmon *f, const char *sid, const char *target)
{
	size_t left = FAN_DIRWALK_MAX;
	int fd = -1;

	/* The clone just recorded is the last entry: its root is the mount's root. */
	if (f->mnts.n > 0)
		fd = openat(f->mnts.v[f->mnts.n - 1].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	catch_up_dir(fd, sid, strcmp(target, "/") == 0 ? "" : target, &left);
	if (left == 0)
		f->loss[FL_DIRWALK]++;
}
