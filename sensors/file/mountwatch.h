/*
 * Mounts in sessions' own mount namespaces (sensors/file/mountwatch.c): the connector
 * thread notes each namespace a session process execs in, the fanotify thread polls
 * and emits file.mount / file.unmount. Also the mountinfo line parser (mountinfo.c;
 * pure, fuzzed in tests/fuzz/fuzz_proc_audit.c).
 */
#ifndef SANDGATE_SENSORS_FILE_MOUNTWATCH_H
#define SANDGATE_SENSORS_FILE_MOUNTWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of /proc/PID/mountinfo: what file.mount / file.unmount report. */
struct mount_entry {
	char target[512];
	char fstype[64];
	char source[256];
	unsigned dev_major, dev_minor;   /* the filesystem's st_dev */
	bool ro;                     /* mounted read-only */
};

/* Parses one mountinfo line (no newline), decoding \ooo escapes. 0 or -EINVAL. */
int mountinfo_line(const char *line, size_t len, struct mount_entry *m);

struct mntwatch;

/* Reads the daemon's own namespace and mounts (the baseline). 0 or -errno. */
int mntwatch_new(struct mntwatch **out);
void mntwatch_free(struct mntwatch *w);
/* Connector thread: a process of session sid runs in namespace ns (thread-safe). */
void mntwatch_note(struct mntwatch *w, uint64_t ns, pid_t pid, const char *sid);
/* Fanotify thread, once a second: emits file.mount / file.unmount for what changed. */
void mntwatch_poll(struct mntwatch *w);
/* The count of session mount namespaces not watched (more than 64 at once) since the
 * last call, reset (mntwatch_poll reports it as sensor.loss "mountwatch"). */
uint64_t mntwatch_take_turned_away(struct mntwatch *w);
/* The inode in an "mnt:[INODE]" namespace link; 0 when malformed. */
uint64_t mntns_of(const char *nslink);
/* The fanotify mount-event group the fanotify thread polls; -1 when the kernel has none. */
int mntwatch_fd(const struct mntwatch *w);
/* The group for the daemon's own namespace (readable: call mntwatch_on_event); -1. */
int mntwatch_host_fd(const struct mntwatch *w);
/* Fanotify thread, when mntwatch_fd is readable: reads the namespaces again at once. */
void mntwatch_on_event(struct mntwatch *w);

/* Called by the watcher on the fanotify thread: a mount seen in the namespace of pid (0:
 * the daemon's own; sid: its session, "" for the host's), a filesystem no longer mounted in any namespace read, the session
 * of a pid (false: none). */
struct mntwatch_hooks {
	void *ctx;
	/* nsfd: the mount namespace (an open nsfs fd, which keeps it and its mounts alive
	 * after its last process), else -1 and nspid lives in it (0: the daemon's own). */
	void (*mounted)(void *ctx, pid_t nspid, int nsfd, const char *sid,
			const struct mount_entry *m);
	void (*unmounted)(void *ctx, const struct mount_entry *m);
	bool (*session_of)(void *ctx, pid_t pid, char *sid, size_t len);
};
void mntwatch_set_hooks(struct mntwatch *w, const struct mntwatch_hooks *h);

#endif
