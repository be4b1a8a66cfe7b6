/*
 * Inside sensors/process/: the emitter queue behind the connector thread, the other
 * process.* events, and the program lookup. The connector thread also tells the mount
 * watch (sensors/file/mountwatch.h) and the package tracker (packages/pkgtrack.h) about
 * each exec and exit; both are below this sensor and include nothing of it.
 */
#ifndef SANDGATE_SENSORS_PROCESS_PROC_INT_H
#define SANDGATE_SENSORS_PROCESS_PROC_INT_H

#include "packages/pkgtrack.h"
#include "sensors/file/mountwatch.h"
#include "sensors/process/process.h"
#include "sensors/shared/sensor.h"

/* ---- what program an exec ran (sensors/process/exeid.c) ----------------------------- */

/* The well-known name ("curl", "dash", ...) of the program when it is one of them under
 * any name (same inode, or the same size and SHA-256), else NULL. With is_exe, the file
 * /proc/PID/exe holds while the process lives, else the file at path. *checked: false
 * when no file could be read (gone, unreadable): NULL then means "not known". */
const char *exeid_known_as(pid_t pid, const char *path, bool is_exe, bool *checked);
/* Whether exe is the dynamic loader (ld-linux*.so*, ld.so). */
bool exeid_is_loader(const char *exe);
/* exeid_known_as of pid's exe, and in *loader whether that exe is the dynamic loader: by
 * name, or the same file as one of the system's loaders under another name (a copy, a
 * hard link, a memfd), which runs `copy /usr/bin/curl` as the loader does. exe_fd >= 0:
 * the exe pinned at the exec (exec_info's), looked at instead of /proc/PID/exe, which is
 * gone with a process that exited at once. *checked as exeid_known_as's. */
const char *exeid_exe(pid_t pid, int exe_fd, const char *exe, bool *loader, bool *checked);
/* For the loader's cmdline: the program it loads (the first non-option argument after
 * argv[0]), with its length in *alen; NULL when there is none. */
const char *exeid_loaded(const char *cmdline, size_t len, size_t *alen);

/* ---- events (sensors/process/procemit.c): 0 or -errno from event_emit --------------- */

int procemit_exit(const struct cn_event *ev, const struct ptab_ent *pe);
int procemit_uid(const struct cn_event *ev, const struct ptab_ent *pe);
/*
 * The emitter queue (sensors/process/procq.c): the connector thread queues what it read,
 * one normal-priority thread builds and emits the events in order. procq_exec takes x's
 * cmdline buffer. 0 or -ENOMEM (the record is dropped; a full queue is counted and
 * reported as sensor.loss "audit_emit_queue"). procq_kick wakes the emitter (once per
 * batch); procq_stop emits what is queued, then joins.
 */
struct procq;
int procq_start(struct procq **out);
void procq_stop(struct procq *q);
int procq_exec(struct procq *q, const struct cn_event *ev, const struct ptab_ent *pe,
	       struct exec_info *x);
int procq_exit(struct procq *q, const struct cn_event *ev, const struct ptab_ent *pe);
int procq_uid(struct procq *q, const struct cn_event *ev, const struct ptab_ent *pe);
void procq_kick(struct procq *q);

#endif
