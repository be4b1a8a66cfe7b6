/*
 * What every sensor shares (sensors/shared/sensor.c): the state audit/audit.c composes
 * and each sensor's thread hangs off, the connector's progress the other threads wait
 * on, and sensor.loss. Below every sensor: it names their types, includes none of them.
 */
#ifndef SANDGATE_SENSORS_SHARED_SENSOR_H
#define SANDGATE_SENSORS_SHARED_SENSOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sensors/shared/settings.h"

struct ptab;
struct procconn;
struct fanmon;
struct mntwatch;
struct pkgtrack;
struct auditsrc;
struct execpend;

/*
 * State shared by the threads and audit.c. The sync fields let the fanotify thread wait
 * until the proc connector thread has taken in every fork/exec queued before a file
 * event was read: a process's fork and exec events are queued before it can touch a
 * file, so after that wait a pid missing from the table is not a session's.
 */
struct audit {
	struct ptab *tab;
	char prefix[256];
	pid_t self;
	struct procconn *pc;
	struct fanmon *fm;
	struct mntwatch *mw;         /* NULL: mounts not watched */
	struct pkgtrack *pk;         /* NULL: package installs not tracked */
	struct auditsrc *as;         /* NULL: execs from the proc connector */
	atomic_bool exec_audit;      /* process.exec from the audit source, not the connector */
	/* With the audit source: the connector's session execs held until their audit
	 * record comes, else emitted by the connector (sensors/process/execpend.h). NULL:
	 * none. */
	struct execpend *pend;
	pthread_mutex_t sync_mu;
	pthread_cond_t sync_cv;
	uint64_t done_ns;            /* connector events queued before this are processed */
	int poke_fd;                 /* eventfd: asks the connector thread to catch up */
	int proc_rcvbuf;             /* connector SO_RCVBUF (audit.proc_rcvbuf) */
	/* Set by the module (audit/audit.c) while execs are held: pid's held execs are
	 * emitted now. NULL: none held. Called through audit_exec_release. */
	void (*exec_release)(struct audit *a, pid_t pid);
};

/*
 * Fanotify thread, before it writes a line of what pid did to a file: pid's execs still
 * held for their audit record are recorded first, so that no such line comes before the
 * line of the exec (detection ties a downloader's exec to the file it wrote). The record
 * is waited for a moment (it is queued at the exec's syscall exit, before anything the
 * program does); one that does not come in time leaves the connector's account.
 */
static inline void audit_exec_release(struct audit *a, pid_t pid)
{
	if (a->exec_release)
		a->exec_release(a, pid);
}

/* Connector thread: every event queued before t (monotonic ns) has been processed. */
void audit_sync_publish(struct audit *a, uint64_t t);
/*
 * Fanotify thread: waits (at most timeout_ms) until the connector thread has processed
 * what was queued before t. True when it has (or when there is no connector sensor).
 */
bool audit_sync_wait(struct audit *a, uint64_t t, int timeout_ms);

/* Emits sensor.loss {sensor, lost (NULL-able: -1 = unknown), why}. 0 or -errno. */
int audit_emit_loss(const char *sensor, int64_t lost, const char *why);

#endif
