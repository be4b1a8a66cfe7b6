/*
 * fanotify mount events (Linux 6.15+): a group with FAN_REPORT_MNT and a mark per mount
 * namespace reports FAN_MNT_ATTACH / FAN_MNT_DETACH with the mounting process's pid and
 * the mount's 64-bit id. The id alone does not say what was mounted (statmount() cannot
 * describe a detached mount), so an event is used as a trigger: the namespaces are read
 * again at once instead of at the next once-a-second poll (sensors/file/mountwatch.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/fanotify.h>
#include <unistd.h>

#include "sensors/file/fan_int.h"

/* Not in older headers (values from the kernel's uapi linux/fanotify.h). */
#ifndef FAN_MNT_ATTACH
#define FAN_MNT_ATTACH 0x01000000
#endif
#ifndef FAN_MNT_DETACH
#define FAN_MNT_DETACH 0x02000000
#endif
#ifndef FAN_REPORT_MNT
#define FAN_REPORT_MNT 0x00004000
#endif
#ifndef FAN_MARK_MNTNS
#define FAN_MARK_MNTNS 0x00000110
#endif

int mntfan_open(void)
{
	int fd = fanotify_init(FAN_REPORT_MNT | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY);

	return fd >= 0 ? fd : -errno;   /* EINVAL before 6.15: mountinfo polling only */
}

int mntfan_mark(int fd, pid_t pid)
{
	char path[48];
	int ns, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return -errno;
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MNTNS, FAN_MNT_ATTACH | FAN_MNT_DETACH,
			  ns, NULL) != 0)
		ret = -errno;
	close(ns);
	return ret;
}

size_t mntfan_read_all(int fd, pid_t *pids, bool *attach, size_t max, bool *overflow)
{
	union {
		struct fanotify_event_metadata m;
		char b[4096];
	} buf;
	struct fanotify_event_metadata *m;
	size_t n = 0;
	ssize_t got;

	*overflow = false;
	while ((got = read(fd, buf.b, sizeof(buf.b))) > 0) {
		for (m = &buf.m; FAN_EVENT_OK(m, got); m = FAN_EVENT_NEXT(m, got)) {
			if (m->vers != FANOTIFY_METADATA_VERSION)
				continue;
			if (m->mask & FAN_Q_OVERFLOW) {
				*overflow = true;
				continue;
			}
			if (!(m->mask & (FAN_MNT_ATTACH | FAN_MNT_DETACH)))
				continue;
			if (n < max) {
				pids[n] = m->pid;
				attach[n] = (m->mask & FAN_MNT_ATTACH) != 0;
			}
			n++;
		}
	}
	return n;
}

size_t mntfan_read(int fd, pid_t *pid, bool *attach, bool *overflow)
{
	union {
		struct fanotify_event_metadata m;
		char b[4096];
	} buf;
	struct fanotify_event_metadata *m;
	size_t n = 0;
	ssize_t got;

	*pid = 0;
	*attach = false;
	*overflow = false;
	while ((got = read(fd, buf.b, sizeof(buf.b))) > 0) {
		for (m = &buf.m; FAN_EVENT_OK(m, got); m = FAN_EVENT_NEXT(m, got)) {
			if (m->vers != FANOTIFY_METADATA_VERSION)
				continue;
			if (m->mask & FAN_Q_OVERFLOW) {
				*overflow = true;
				continue;
			}
			if (m->mask & (FAN_MNT_ATTACH | FAN_MNT_DETACH)) {
				*pid = m->pid;
				*attach = (m->mask & FAN_MNT_ATTACH) != 0;
				n++;
			}
		}
	}
	return n;
}
