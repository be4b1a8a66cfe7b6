/*
 * One daemon per state directory: an exclusive flock(2) on STATE_DIR/sandgated.lock,
 * taken before anything in the directory is touched and held until the process exits.
 * A second daemon on the same directory would write into the same journal and make
 * `sandgate verify` report `rewritten` for good (issue 18.3).
 */
#ifndef SANDGATE_DAEMON_STATELOCK_H
#define SANDGATE_DAEMON_STATELOCK_H

#include <sys/types.h>

#define STATELOCK_FILE "sandgated.lock"

/*
 * Creates state_dir (0700) when missing, opens its lock file and takes the lock without
 * waiting; on success writes our pid into the file and returns the fd (close-on-exec,
 * keep it open for the life of the process). Returns -EWOULDBLOCK when another process
 * holds it, with *holder set to the pid it wrote (0 when unknown), or another -errno.
 */
int statelock_acquire(const char *state_dir, pid_t *holder);

/*
 * statelock_acquire() for daemon_main(): logs why it failed (naming the holder's pid).
 * Returns 0 (the lock is held until exit) or -errno.
 */
int daemon_lock_state(const char *state_dir);

#endif
