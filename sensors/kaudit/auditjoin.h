/*
 * Joining the audit records of one exec event (sensors/kaudit/auditjoin.c): SYSCALL
 * opens it (pid, ppid, uids, comm, exe, success), EXECVE records carry the arguments,
 * CWD the directory, EOE closes it. Records of one event share the serial of
 * "audit(SEC.MSEC:SERIAL)"; events of several CPUs interleave. Pure code over record
 * text a sandboxed process partly chose (its arguments, paths): nothing is trusted.
 * Not for use outside sensors/kaudit/.
 */
#ifndef SANDGATE_SENSORS_KAUDIT_AUDITJOIN_H
#define SANDGATE_SENSORS_KAUDIT_AUDITJOIN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "sensors/shared/procparse.h"
#include "sensors/kaudit/auditrec.h"

#define AUDITJOIN_PEND 32            /* events being joined at once (one per CPU + slack) */

struct auditjoin_ev {
	bool used, syscall, execve, success, has_exe, has_cwd, bad;
	uint64_t serial, ms, born;
	int32_t pid, ppid;
	uint32_t uid, euid;
	bool has_ids;
	char comm[AUDIT_COMM_MAX];
	char exe[PATH_MAX];
	char cwd[PATH_MAX];
	struct auditrec_execve args;
};

struct auditjoin {
	struct auditjoin_ev pend[AUDITJOIN_PEND];
	uint64_t born;
	uint64_t evicted;            /* events dropped before their EOE (slots full) */
	uint64_t bad;                /* records whose head did not parse */
};

void auditjoin_init(struct auditjoin *j);
/* Frees what open events hold. */
void auditjoin_free(struct auditjoin *j);
/*
 * One record (type from the netlink header, text after it; an auditd log line's
 * "type=T msg=" prefix is accepted too). Returns the event its EOE closed, to be handed
 * back with auditjoin_done, or NULL. Types other than SYSCALL, EXECVE, CWD, EOE are
 * ignored. The event is an exec to report when syscall, execve and success are set and
 * bad is not.
 */
struct auditjoin_ev *auditjoin_feed(struct auditjoin *j, uint16_t type, const char *t,
				    size_t len);
void auditjoin_done(struct auditjoin_ev *e);

/*
 * One AUDIT_CONFIG_CHANGE record ("op=remove_rule key=\"K\" ..." or "op=set
 * audit_enabled=0 old=1 ..."): who changed what. Numbers not in the record are -1.
 */
struct auditjoin_cc {
	uint64_t serial;
	char op[32];                 /* "add_rule", "remove_rule", "set", ... */
	char key[64];                /* the rule's key ("" when none or too long) */
	char field[32];              /* op=set: what was set ("audit_enabled", ...) */
	int64_t value, old;          /* op=set: new and old value */
	int64_t pid, auid, ses, res;
};
/* Parses record text t[0..len). 0, or -EINVAL (no head or no op). */
int auditjoin_config(const char *t, size_t len, struct auditjoin_cc *cc);

#endif
