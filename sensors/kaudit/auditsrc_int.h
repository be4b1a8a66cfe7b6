/*
 * The audit exec source's state, shared by its thread (auditsrc.c) and the watch on the
 * audit configuration (auditwatch.c). Not for use outside sensors/kaudit/.
 */
#ifndef SANDGATE_SENSORS_KAUDIT_AUDITSRC_INT_H
#define SANDGATE_SENSORS_KAUDIT_AUDITSRC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "sensors/kaudit/auditjoin.h"
#include "sensors/kaudit/auditnl.h"
#include "sensors/kaudit/kaudit.h"
#include "sensors/process/process.h"
#include "sensors/shared/proctab.h"
#include "sensors/shared/sensor.h"

struct sg_thread;

#define AS_MSG 16384                 /* > MAX_AUDIT_MESSAGE_LENGTH (8970) */

struct auditsrc {
	struct audit *a;
	int mc, ctl;
	struct sg_thread *t;         /* common/thread.h */
	char key[32];                /* our rules' key: "sandgate-PID" */
	bool added[AUDITNL_RULES];
	unsigned reaped;             /* keys of killed daemons whose rules we deleted */
	bool set_enabled, set_backlog;
	uint32_t old_enabled, old_backlog, lost_seen;
	uint64_t enobufs;
	struct auditjoin j;
	/* the watch (auditwatch.c) */
	bool healthy;                /* rules there and auditing on: execs from here */
	bool check_now;              /* a CONFIG_CHANGE record came: check at once */
	bool told_locked;            /* "enabled 2" said once */
	uint64_t base_fallback;      /* execpend stats when last healthy: the gap's start */
	uint64_t base_noargs;
	uint64_t noargs_told;        /* held execs emitted without arguments, in sensor.loss */
	struct auditjoin_cc cc;      /* the last CONFIG_CHANGE about us; op "" when none */
	bool cc_who;                 /* its SYSCALL record came: pid, comm, exe below */
	int32_t cc_pid;
	uint32_t cc_uid;
	char cc_comm[AUDIT_COMM_MAX];
	char cc_exe[256];
	char buf[AS_MSG];
};

/* Reads and handles every record waiting on the multicast socket (auditsrc.c). */
void as_drain(struct auditsrc *s);
/* Held execs past their time (all of them with all) emitted as the connector saw them;
 * those without arguments counted in sensor.loss. */
void as_expire(struct auditsrc *s, bool all);
struct execpend_item;
/* Emits a list of held execs handed back (oldest first) and frees it. */
void as_emit_items(struct execpend_item *l);

/* A CONFIG_CHANGE record (text t[0..len)): kept when it is about our rules or the
 * enabled flag, and a check asked for. */
void aw_record(struct auditsrc *s, const char *t, size_t len);
/* An event closed by its EOE: the SYSCALL of the kept CONFIG_CHANGE says who did it. */
void aw_syscall(struct auditsrc *s, const struct auditjoin_ev *ev);
/* Compares the kernel's state (st: AUDIT_GET) with ours: a change is restored, journaled
 * (audit.tamper, sensor.loss), and the connector emits execs until it is restored. */
void aw_check(struct auditsrc *s, const struct audit_status *st);
/* aw_check when a record asked for it (reads the status itself). */
void aw_check_now(struct auditsrc *s);

#endif
