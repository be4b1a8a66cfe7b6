#include "daemon/statelock.h"

#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pid the holder wrote; 0 when the file is empty (it is between lock and write). */
static pid_t read_holder(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long v;
	char *end;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	v = strtol(buf, &end, 10);
	if (end == buf || v <= 0 || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

int statelock_acquire(const char *state_dir, pid_t *holder)
{
	char path[PATH_MAX], pid[32];
	int fd, len, ret;

	*holder = 0;
	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (snprintf(path, sizeof(path), "%s/%s", state_dir, STATELOCK_FILE) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ret = errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;
		if (ret == -EWOULDBLOCK)
			*holder = read_holder(fd);
		goto fail;
	}
	/* Ours now: the pid is what a refused second daemon names. */
	len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
		ret = errno ? -errno : -EIO;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return ret;
}

int daemon_lock_state(const char *state_dir)
{
	pid_t holder;
	int fd = statelock_acquire(state_dir, &holder);

	if (fd == -EWOULDBLOCK) {
		if (holder > 0)
			log_warnx("%s: in use by another sandgated (pid %ld, %s/%s); not starting",
				  state_dir, (long)holder, state_dir, STATELOCK_FILE);
		else
			log_warnx("%s: in use by another sandgated (%s/%s is locked); not starting",
				  state_dir, state_dir, STATELOCK_FILE);
		return fd;
	}
	if (fd < 0) {
		log_errno(fd, "%s: cannot lock the state directory", state_dir);
		return fd;
	}
	return 0;   /* the fd stays open (and locked) until the process exits */
}
