/*
 * The process sensor as the module (audit/audit.c, escape.c) and the kernel audit source
 * (sensors/kaudit/) use it: the proc connector thread, what /proc says about an exec,
 * and the process.exec event both exec sources emit.
 */
#ifndef SANDGATE_SENSORS_PROCESS_PROCESS_H
#define SANDGATE_SENSORS_PROCESS_PROCESS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sensors/process/cnproc.h"
#include "sensors/shared/procparse.h"
#include "sensors/shared/proctab.h"

struct audit;
struct procconn;

/* Opens the proc connector and starts its thread. 0 or -errno (nothing left running). */
int procconn_start(struct procconn **out, struct audit *a);
/* Stops the thread, reports pending losses, frees. Accepts NULL. */
void procconn_stop(struct procconn *p);

/* ---- what /proc says about an exec (sensors/process/procread.c) --------------------- */

struct exec_info {
	bool same;                   /* /proc/PID is the process that exec'd (start time) */
	bool has_stat, has_ids, has_exe, has_cwd;
	struct proc_stat_info st;
	uint32_t uid, euid;
	char exe[PATH_MAX];
	char cwd[PATH_MAX];
	char *cmdline;               /* malloc'd, NULL when unreadable */
	size_t cmdlen;
	bool argv_complete;          /* the whole cmdline was read, and it was not empty */
	bool argv_truncated;         /* longer than AUDIT_ARGV_MAX: cut by us */
	bool args_kernel;            /* from the kernel's EXECVE records (else /proc, read
				      * after the exec: the process could have rewritten them) */
	uint64_t mntns;              /* mount namespace inode; 0 unknown */
	size_t root_len;             /* chroot'ed: exe[0..root_len) is its root, else 0 */
	bool has_fd0, has_fd1;       /* /proc/PID/fd/0 and 1 could be read */
	/* /proc/PID/exe opened O_PATH at the read (EXEC_READ_PIN_EXE): the running file
	 * itself, kept so that what it is can still be told after the process is gone (a
	 * memfd or a deleted copy of curl that exits at once). Owned: moved with the
	 * struct, closed by exec_info_clear. Valid when has_exe_fd. */
	bool has_exe_fd;
	int exe_fd;
	char fd0[PATH_MAX];          /* their link text: "pipe:[N]", "/dev/pts/0", ... */
	char fd1[PATH_MAX];
};

#define EXEC_READ_ARGV 0x1           /* read the cmdline */
#define EXEC_READ_PIN_EXE 0x2        /* open exe and keep it (x->exe_fd) */
#define EXEC_PINNED_MAX 256          /* exe files pinned at once; beyond: not pinned */

/*
 * Reads /proc/PID for an exec observed at exec_ns (CLOCK_MONOTONIC): first the start
 * time (a pid reused after exec_ns is refused: x->same false, nothing else read), then
 * cmdline (EXEC_READ_ARGV), exe, cwd, status, and with EXEC_READ_PIN_EXE the exe file
 * opened (at most EXEC_PINNED_MAX held at once in the process: each is a descriptor).
 * Whatever could not be read stays unset. 0, -ESRCH (gone or not the same process) or
 * -ENOMEM.
 */
int exec_info_read(pid_t pid, uint64_t exec_ns, unsigned flags, struct exec_info *x);
/* Frees the cmdline and closes the pinned exe. */
void exec_info_clear(struct exec_info *x);
/* Gives up x's buffers after a struct copy took them (the copy owns them now). */
void exec_info_moved(struct exec_info *x);

/* The session of pid from /proc/PID/cgroup (prefix: the sessions' parent). 0 with sid
 * ("" for none) and start_ns, -ESRCH, -errno. */
int proc_session_of(pid_t pid, const char *prefix, char *sid, size_t sidlen,
		    uint64_t *start_ns);

/* Monotonic ns of a /proc start time (clock ticks since boot). */
uint64_t ticks_to_mono_ns(uint64_t ticks);

/* Reads the well-known programs once (sensors/process/exeid.c; thread-safe; also done
 * by the first lookup). */
void exeid_init(void);

/* process.exec of session process pe (sensors/process/procemit.c). 0 or -errno from
 * event_emit. */
int procemit_exec(const struct cn_event *ev, const struct ptab_ent *pe,
		  const struct exec_info *x);

#endif
