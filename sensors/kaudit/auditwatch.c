/*
 * The watch on the audit configuration the exec source depends on: its two rules and
 * the enabled flag. A root process can run `auditctl -D` or `auditctl -e 0`; from then on
 * the kernel writes no exec record. The kernel says so twice: an AUDIT_CONFIG_CHANGE
 * record on the multicast group (while auditing is on; it names auid and ses, and its
 * SYSCALL record the pid and program), and the state itself (AUDIT_GET, the rule list),
 * checked once a second. On a change: the connector emits process.exec at once (its
 * /proc arguments, args_source "proc"), the change is undone, audit.tamper is journaled
 * with what the kernel said about who did it. The execs between the change and its
 * discovery are not lost: the connector held each session exec until its record came
 * (sensors/process/execpend.h), and hands back now those whose record did not; those it
 * had no arguments for (the process was gone before /proc was read) are counted in
 * sensor.loss.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "sensors/kaudit/auditsrc_int.h"
#include "sensors/process/execpend.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "journal/event.h"

void aw_record(struct auditsrc *s, const char *t, size_t len)
{
	struct auditjoin_cc cc;

	if (auditjoin_config(t, len, &cc) != 0)
		return;
	/* About us: a rule of our key, or the enabled flag (our own adds are harmless). */
	if (!(strcmp(cc.op, "remove_rule") == 0 && strcmp(cc.key, s->key) == 0) &&
	    !(strcmp(cc.op, "set") == 0 && strcmp(cc.field, "audit_enabled") == 0))
		return;
	s->cc = cc;
	s->cc_who = false;
	s->check_now = true;
}

void aw_syscall(struct auditsrc *s, const struct auditjoin_ev *ev)
{
	if (!s->cc.op[0] || ev->serial != s->cc.serial || !ev->syscall)
		return;
	s->cc_who = true;
	s->cc_pid = ev->pid;
	s->cc_uid = ev->uid;
	snprintf(s->cc_comm, sizeof(s->cc_comm), "%s", ev->comm);
	snprintf(s->cc_exe, sizeof(s->cc_exe), "%s", ev->has_exe ? ev->exe : "");
}

/*
 * Every exec the connector saw and held for us is handed back to it now (the connector's
 * account, args_source proc), once what is on its way has come in: the connector's
 * queue (sync: its execs are then held, or emitted at once since exec_audit is off), and
 * records kauditd is still delivering, which claim their execs (they follow the exec by
 * a moment: wait until 20 ms pass without one, at most 100 ms). Nothing depends on how
 * long that takes: an exec the connector takes in later is emitted by it at once, one
 * whose record comes later is held until its record or EXECPEND_HOLD_NS.
 */
static void hand_over(struct auditsrc *s)
{
	struct pollfd p = { .fd = s->mc, .events = POLLIN };

	(void)audit_sync_wait(s->a, time_mono_ns(), 200);
	for (int i = 0; i < 5 && poll(&p, 1, 20) > 0; i++)
		as_drain(s);
	as_expire(s, true);
}

/*
 * The tick can see a change before kauditd has delivered its CONFIG_CHANGE record (and
 * the SYSCALL record naming who): wait for them a moment, 500 ms at most, so that the
 * audit.tamper line names the operation and the process when the kernel says them.
 */
static void await_who(struct auditsrc *s)
{
	struct pollfd p = { .fd = s->mc, .events = POLLIN };
	uint64_t end = time_mono_ns() + 500 * 1000000ull;

	while (!(s->cc.op[0] && s->cc_who) && time_mono_ns() < end)
		if (poll(&p, 1, 50) > 0)
			as_drain(s);
}

static void put_num(struct event *e, const char *k, int64_t v)
{
	if (v >= 0)
		event_int(e, k, v);
	else
		event_null(e, k);
}

void audit_emit_exec_source(const char *src, const char *why)
{
	struct event *e = event_new("audit.exec_source", NULL, EVENT_SRC_SANDGATE);

	if (!e)
		return;
	event_str(e, "exec_source", src);
	event_str(e, "why", why);
	if (event_emit(e) != 0)
		log_warnx("audit: cannot record audit.exec_source %s", src);
}

/* audit.tamper: what changed, who the kernel says did it, what was done about it;
 * gap: the execs since the last good check the connector recorded in our place. */
static void emit_tamper(struct auditsrc *s, unsigned missing, uint32_t enabled,
			const struct execpend_stats *gap, bool restored)
{
	struct event *e = event_new("audit.tamper", NULL, EVENT_SRC_KERNEL);
	bool rec = s->cc.op[0] != '\0';

	if (!e)
		return;
	event_str(e, "what", missing && enabled == 0 ? "rules_removed,audit_disabled"
			     : missing ? "rules_removed" : "audit_disabled");
	event_int(e, "rules_missing", missing);
	event_int(e, "audit_enabled", enabled);
	event_str(e, "rule_key", s->key);
	event_str(e, "op", rec ? s->cc.op : NULL);
	put_num(e, "pid", s->cc_who ? s->cc_pid : rec ? s->cc.pid : -1);
	put_num(e, "auid", rec ? s->cc.auid : -1);
	put_num(e, "ses", rec ? s->cc.ses : -1);
	put_num(e, "uid", s->cc_who ? (int64_t)s->cc_uid : -1);
	event_str(e, "comm", s->cc_who ? s->cc_comm : NULL);
	event_str(e, "exe", s->cc_who && s->cc_exe[0] ? s->cc_exe : NULL);
	event_bool(e, "restored", restored);
	event_str(e, "exec_source", restored ? "audit" : "proc_connector");
	event_int(e, "execs_missed", (int64_t)gap->noargs);
	event_int(e, "execs_fallback", (int64_t)gap->fallback);
	if (event_emit(e) != 0)
		log_warnx("audit: cannot record audit.tamper");
}

/* Puts back what is missing. 0 or -errno (-EPERM when the configuration is locked). */
static int aw_restore(struct auditsrc *s, unsigned missing, uint32_t enabled)
{
	bool added[AUDITNL_RULES];
	int ret = 0;

	if (enabled == 2 && missing)
		return -EPERM;   /* locked (auditctl -e 2): rules cannot change until reboot */
	if (missing) {
		ret = auditnl_rules_add(s->ctl, s->key, added, AUDITNL_RULES);
		for (size_t i = 0; i < AUDITNL_RULES; i++)
			s->added[i] = s->added[i] || added[i];
	}
	if (ret == 0 && enabled == 0)
		ret = auditnl_set(s->ctl, AUDIT_STATUS_ENABLED, 1, 0);
	return ret;
}

static void aw_locked_once(struct auditsrc *s, uint32_t enabled)
{
	if (enabled != 2 || s->told_locked)
		return;
	s->told_locked = true;
	log_warnx("audit: the audit configuration is locked (enabled 2): our rules cannot be "
		  "removed until reboot, nor put back if they were");
	audit_emit_exec_source(s->healthy ? "audit" : "proc_connector",
		    "the audit configuration is locked (auditctl -e 2)");
}

void aw_check(struct auditsrc *s, const struct audit_status *st)
{
	struct execpend_stats now, gap = { 0 };
	struct auditnl_scan sc;
	unsigned missing = 0;
	int ret;

	s->check_now = false;
	if (auditnl_rules_scan(s->ctl, s->key, &sc) != 0)
		return;   /* cannot tell: the next tick asks again */
	for (size_t i = 0; i < auditnl_rules_count() && i < AUDITNL_RULES; i++)
		missing += !sc.present[i];
	aw_locked_once(s, st->enabled);
	if (!missing && st->enabled != 0) {
		if (!s->healthy) {
			s->healthy = true;
			atomic_store(&s->a->exec_audit, true);
			audit_emit_exec_source("audit", "the audit rules and the enabled flag are back");
		}
		execpend_stats(s->a->pend, &now);
		s->base_fallback = now.fallback;
		s->base_noargs = now.noargs;
		s->cc.op[0] = '\0';
		return;
	}
	if (!s->healthy) {
		/* Already journaled and on the connector: try again, quietly. */
		if (aw_restore(s, missing, st->enabled) == 0)
			log_info("audit: audit rules and flag restored");
		return;
	}
	/* From now on the connector emits at once; what it held for us it emits now. */
	atomic_store(&s->a->exec_audit, false);
	hand_over(s);
	execpend_stats(s->a->pend, &now);
	gap.fallback = now.fallback - s->base_fallback;
	gap.noargs = now.noargs - s->base_noargs;
	await_who(s);
	ret = aw_restore(s, missing, st->enabled);
	s->healthy = false;   /* back to audit at the next check that finds all in place */
	emit_tamper(s, missing, st->enabled, &gap, ret == 0);
	if (ret)
		log_errno(ret, "audit: cannot restore the audit rules or flag (execs from the "
			  "proc connector)");
	else
		s->check_now = true;   /* restored: the check that finds it so switches back */
	aw_check_now(s);
	s->cc.op[0] = '\0';
}

void aw_check_now(struct auditsrc *s)
{
	struct audit_status st;

	if (!s->check_now)
		return;
	s->check_now = false;
	if (auditnl_status(s->ctl, &st) == 0)
		aw_check(s, &st);
}

const char *auditsrc_probe(bool want_audit, char *why, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1) };
	struct audit_status st;
	int fd, mc, ret;

	if (!want_audit) {
		snprintf(why, len, "audit.exec_source: proc_connector");
		return "proc_connector";
	}
	fd = auditnl_open();
	ret = fd < 0 ? fd : auditnl_status(fd, &st);
	if (fd >= 0)
		close(fd);
	if (ret == 0 && st.enabled == 2)
		ret = -EPERM;
	if (ret) {
		snprintf(why, len, "the audit subsystem is not usable (%s%s): the proc connector "
			 "instead", ret == 0 ? "" : strerror(-ret),
			 ret == -EPERM ? ", or locked with enabled 2" : "");
		return "proc_connector";
	}
	mc = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	ret = mc < 0 ? -errno : bind(mc, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	if (mc >= 0)
		close(mc);
	if (ret) {
		snprintf(why, len, "the audit read-only group is refused (%s): the proc "
			 "connector instead", strerror(-ret));
		return "proc_connector";
	}
	snprintf(why, len, "the audit subsystem is available: arguments from the kernel");
	return "audit";
}
