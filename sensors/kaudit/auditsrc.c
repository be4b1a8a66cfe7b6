/*
 * The audit-subsystem exec source (audit.exec_source: audit). The kernel copies an
 * exec's arguments into its EXECVE records itself, so unlike the proc connector's /proc
 * read there is no race with a process that exits at once. One thread reads the
 * read-only multicast group (AUDIT_NLGRP_READLOG: CAP_AUDIT_READ, beside any auditd),
 * joins the SYSCALL, EXECVE and CWD records of one event by serial until its EOE, and
 * emits process.exec for the session processes in the pid table the connector keeps
 * (fork tree). A second, unicast socket adds our rules at start and deletes exactly
 * them at stop (auditnl.c); the kernel's lost counter and our socket's overflows become
 * sensor.loss.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "sensors/shared/sensor.h"
#include "sensors/kaudit/auditnl.h"
#include "sensors/kaudit/auditjoin.h"
#include "sensors/kaudit/auditrec.h"
#include "sensors/kaudit/auditsrc_int.h"
#include "sensors/process/execpend.h"
#include "common/log.h"
#include "common/thread.h"
#include "common/timeutil.h"

#define AS_RCVBUF (32 << 20)
#define AS_BACKLOG 8192              /* kernel backlog limit while we run, if lower */

/* ---- an event complete: process.exec -------------------------------------------- */

/* The arguments as /proc/PID/cmdline would hold them: each followed by a NUL. */
static int join_argv(const struct auditrec_execve *e, struct exec_info *x)
{
	size_t n = 0;

	for (uint32_t i = 0; i < e->argc; i++)
		n += e->a[i].len + 1;
	if (n == 0)
		return 0;
	x->cmdline = malloc(n);
	if (!x->cmdline)
		return -ENOMEM;
	for (uint32_t i = 0; i < e->argc; i++) {
		if (e->a[i].len)
			memcpy(x->cmdline + x->cmdlen, e->a[i].b, e->a[i].len);
		x->cmdlen += e->a[i].len;
		x->cmdline[x->cmdlen++] = '\0';
	}
	return 0;
}

/* The monotonic time of an audit timestamp (wall ms). */
static uint64_t wall_ms_to_mono(uint64_t ms)
{
	struct timespec rt;
	uint64_t now_rt, now_mono = time_mono_ns(), t = ms * 1000000ull;

	clock_gettime(CLOCK_REALTIME, &rt);
	now_rt = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	if (t > now_rt || now_rt - t > now_mono)
		return now_mono;
	return now_mono - (now_rt - t);
}

/*
 * The session entry of pid, exec'd at ts_ns. A live entry is taken at once; otherwise
 * the connector is given time to take in what was queued before this record (the
 * fork, the exec, and a host fork that reused a dead entry's pid, which drops it). A
 * dead entry counts (the process may have exited before its record was read) unless
 * it died before the exec (ms precision of the record's time).
 */
static bool as_entry(struct auditsrc *s, pid_t pid, uint64_t ts_ns, struct ptab_ent *pe)
{
	if (pid == s->a->self)
		return false;
	if (ptab_get(s->a->tab, pid, false, pe))
		return true;
	if (!audit_sync_wait(s->a, time_mono_ns(), 500))
		return false;
	if (!ptab_get(s->a->tab, pid, true, pe))
		return false;
	return !pe->dead_ns || ts_ns <= pe->dead_ns + 2000000ull;
}

/*
 * stdin and stdout at exec (what pairs `curl | sh`, detect/pipeshell.c) are not in the
 * records: read from /proc when the process is still the one that exec'd (started
 * before the exec, same exe); else they stay null.
 */
static void proc_fds(struct exec_info *x, pid_t pid, uint64_t ts_ns)
{
	struct exec_info *now = malloc(sizeof(*now));

	if (!now)
		return;
	if (exec_info_read(pid, ts_ns, 0, now) == 0 && now->same && x->has_exe &&
	    now->has_exe && strcmp(now->exe, x->exe) == 0) {
		x->has_fd0 = now->has_fd0;
		x->has_fd1 = now->has_fd1;
		memcpy(x->fd0, now->fd0, sizeof(x->fd0));
		memcpy(x->fd1, now->fd1, sizeof(x->fd1));
	}
	exec_info_clear(now);
	free(now);
}

void as_emit_items(struct execpend_item *l)
{
	struct execpend_item *next;
	int ret;

	for (l = execpend_items_order(l); l; l = next) {
		next = l->next;
		ret = procemit_exec(&l->ev, &l->pe, &l->x);
		if (ret)
			log_errno(ret, "audit: process.exec of pid %d", (int)l->ev.pid);
		exec_info_clear(&l->x);
		free(l);
	}
}

/*
 * The connector's held account of this exec: dropped (the record is emitted instead),
 * or already emitted (DUP: the record is dropped). Not there yet: the connector may not
 * have taken in the exec event, queued before the record was built: wait until it has
 * processed what was queued until now, and ask again.
 */
static enum execpend_claim as_claim(struct auditsrc *s, pid_t pid, uint64_t ts_ns,
				    struct execpend_item **held)
{
	struct execpend_item *l = NULL;
	enum execpend_claim c = execpend_claim(s->a->pend, pid, ts_ns, &l, held);

	if (c == EXECPEND_NONE && audit_sync_wait(s->a, time_mono_ns(), 500))
		c = execpend_claim(s->a->pend, pid, ts_ns, &l, held);
	as_emit_items(l);   /* execs of pid before this one whose record never came */
	return c;
}

static void as_emit(struct auditsrc *s, struct auditjoin_ev *p)
{
	struct cn_event ev = { .kind = CN_EXEC, .pid = p->pid, .tgid = p->pid };
	struct execpend_item *held = NULL;
	struct ptab_ent pe;
	struct exec_info *x;
	int ret;

	if (!p->syscall || !p->execve || !p->success || p->bad)
		return;
	ev.ts_ns = wall_ms_to_mono(p->ms);
	if (!as_entry(s, p->pid, ev.ts_ns, &pe) ||
	    as_claim(s, p->pid, ev.ts_ns, &held) == EXECPEND_DUP)
		return;
	x = calloc(1, sizeof(*x));
	if (!x || join_argv(&p->args, x) != 0) {
		free(x);
		execpend_items_free(held);
		log_errno(-ENOMEM, "audit: process.exec of pid %d", (int)p->pid);
		return;
	}
	x->same = true;
	x->has_stat = true;
	x->st.ppid = p->ppid;
	snprintf(x->st.comm, sizeof(x->st.comm), "%s", p->comm);
	x->has_ids = p->has_ids;
	x->uid = p->uid;
	x->euid = p->euid;
	x->has_exe = p->has_exe;
	memcpy(x->exe, p->exe, sizeof(x->exe));
	x->has_cwd = p->has_cwd;
	memcpy(x->cwd, p->cwd, sizeof(x->cwd));
	/*
	 * The kernel writes exe and cwd as seen from the process's root: after a chroot
	 * (CAP_SYS_CHROOT is kept in a default session) a copy of curl at /jail/usr/bin/ls
	 * was recorded as exe and program "/usr/bin/ls", exe_known_as null. The connector
	 * read both from the daemon's root: when its exe is the record's under a prefix,
	 * its exe and cwd are the ones reported.
	 */
	if (held && x->has_exe && held->x.has_exe && execpend_reroot(held->x.exe, x->exe)) {
		x->root_len = strlen(held->x.exe) - strlen(p->exe);
		x->has_cwd = held->x.has_cwd;
		memcpy(x->cwd, held->x.cwd, sizeof(x->cwd));
	}
	/* The exe the connector pinned at the exec: what it is can be told after the
	 * process is gone (a memfd of curl that exits at once). */
	if (held && held->x.has_exe_fd) {
		x->exe_fd = held->x.exe_fd;
		x->has_exe_fd = true;
		held->x.has_exe_fd = false;
	}
	execpend_items_free(held);
	/* Complete unless the kernel (or our AUDIT_ARGV_MAX) cut them. */
	x->argv_truncated = p->args.truncated;
	x->args_kernel = true;
	x->argv_complete = auditrec_execve_complete(&p->args) && !p->args.truncated &&
			   x->cmdlen > 0;
	proc_fds(x, p->pid, ev.ts_ns);
	ret = procemit_exec(&ev, &pe, x);
	if (ret)
		log_errno(ret, "audit: process.exec of pid %d", (int)p->pid);
	exec_info_clear(x);
	free(x);
}

/* ---- the thread ---------------------------------------------------------------- */

void as_drain(struct auditsrc *s)
{
	struct auditjoin_ev *ev;
	struct nlmsghdr nh;
	ssize_t got;
	size_t len;

	for (;;) {
		got = recv(s->mc, s->buf, sizeof(s->buf), MSG_TRUNC);
		if (got < 0 && errno == ENOBUFS) {
			s->enobufs++;
			continue;
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			if (errno != EAGAIN)
				log_errno(-errno, "audit: audit socket recv");
			return;
		}
		if ((size_t)got > sizeof(s->buf) || (size_t)got < NLMSG_HDRLEN) {
			s->j.bad++;
			continue;
		}
		/* One record a datagram; its nlmsg_len is not trusted (the kernel's audit
		 * records have long set it to the payload length alone). */
		memcpy(&nh, s->buf, sizeof(nh));
		len = (size_t)got - NLMSG_HDRLEN;
		while (len && s->buf[NLMSG_HDRLEN + len - 1] == '\0')
			len--;
		if (nh.nlmsg_type == AUDITREC_CONFIG_CHANGE)
			aw_record(s, s->buf + NLMSG_HDRLEN, len);
		ev = auditjoin_feed(&s->j, nh.nlmsg_type, s->buf + NLMSG_HDRLEN, len);
		if (ev) {
			aw_syscall(s, ev);
			as_emit(s, ev);
			auditjoin_done(ev);
		}
	}
}

/* Once a second: the kernel's lost counter, our overflows and evictions. */
static void as_tick(void *ctx)
{
	struct auditsrc *s = ctx;
	struct audit_status st;

	as_drain(s);   /* the records already here count for the tamper check */
	if (auditnl_status(s->ctl, &st) == 0) {
		if (st.lost != s->lost_seen)
			(void)audit_emit_loss("audit", (int64_t)(uint32_t)(st.lost - s->lost_seen),
					      "kernel audit records lost (backlog or rate limit)");
		s->lost_seen = st.lost;
		aw_check(s, &st);
	}
	if (s->enobufs)
		(void)audit_emit_loss("audit", -1, "receive buffer overflow (ENOBUFS)");
	if (s->j.evicted)
		(void)audit_emit_loss("audit", (int64_t)s->j.evicted,
				      "exec records never completed (no EOE)");
	s->enobufs = s->j.evicted = 0;
	as_expire(s, false);
}

/* Held execs whose record did not come in time: the connector's account is emitted. */
void as_expire(struct auditsrc *s, bool all)
{
	struct execpend_item *l = NULL;
	struct execpend_stats st;

	execpend_expire(s->a->pend, time_mono_ns(), all, &l);
	as_emit_items(l);
	execpend_stats(s->a->pend, &st);
	if (st.noargs != s->noargs_told)
		(void)audit_emit_loss("audit", (int64_t)(st.noargs - s->noargs_told),
				      "execs the kernel did not record (audit rules removed, "
				      "auditing off, or records lost), recorded by the proc "
				      "connector without their arguments (the process was gone)");
	s->noargs_told = st.noargs;
}

static void on_mc(struct loop *l, int fd, uint32_t events, void *ctx)
{
	(void)l;
	(void)fd;
	(void)events;
	as_drain(ctx);
	aw_check_now(ctx);   /* a CONFIG_CHANGE record asked for it */
}

static int as_main(struct sg_thread *t, void *arg)
{
	int ret = sg_thread_run(t);

	if (ret)
		log_errno(ret, "audit: audit source epoll_wait");
	as_drain(arg);
	return ret;
}

/* ---- start and stop ------------------------------------------------------------- */

static int mc_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1) };
	int sz = AS_RCVBUF, ret;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_AUDIT);

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		ret = -errno;   /* -EPERM without CAP_AUDIT_READ */
		close(fd);
		return ret;
	}
	return fd;
}

static int as_fds(struct auditsrc *s)
{
	int ret = sg_thread_new(&s->t, "sg-auditsrc");

	if (ret == 0)
		ret = sg_thread_tick(s->t, 1000, as_tick, s);
	if (ret == 0)
		ret = loop_add(sg_thread_loop(s->t), s->mc, EPOLLIN, on_mc, s);
	return ret;
}

/* The kernel's shared state put back as we found it: our rules, backlog, enabled. */
static void as_restore(struct auditsrc *s)
{
	struct auditnl_scan sc;
	int ret;

	if (s->ctl < 0)
		return;
	ret = auditnl_rules_del(s->ctl, s->key, s->added, AUDITNL_RULES);
	if (ret)
		log_errno(ret, "audit: deleting the audit rules keyed %s", s->key);
	/* Another sandgated's rules: it relies on the flag and the limit as they are. */
	if (auditnl_rules_scan(s->ctl, s->key, &sc) == 0 && sc.others)
		return;
	if (s->set_enabled && (ret = auditnl_set(s->ctl, AUDIT_STATUS_ENABLED,
						  s->old_enabled, 0)) != 0)
		log_errno(ret, "audit: restoring audit enabled=%u", s->old_enabled);
	if (s->set_backlog && (ret = auditnl_set(s->ctl, AUDIT_STATUS_BACKLOG_LIMIT, 0,
						  s->old_backlog)) != 0)
		log_errno(ret, "audit: restoring the audit backlog limit %u", s->old_backlog);
}

static void as_close(struct auditsrc *s)
{
	int fds[] = { s->mc, s->ctl };
	struct execpend_item *l = NULL;

	/* What is still held is the connector's to emit from now on. */
	execpend_activate(s->a->pend, false, &l);
	as_emit_items(l);
	as_restore(s);
	auditjoin_free(&s->j);
	sg_thread_free(s->t);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(s);
}

/* Rules, backlog and enabled flag, remembering what to put back. 0 or -errno. */
static int as_setup_kernel(struct auditsrc *s)
{
	struct audit_status st;
	int ret = auditnl_status(s->ctl, &st);

	if (ret)
		return ret;
	if (st.enabled == 2)
		return -EPERM;   /* locked (auditctl -e 2): rules cannot change until reboot */
	s->lost_seen = st.lost;
	if (st.backlog_limit && st.backlog_limit < AS_BACKLOG) {
		ret = auditnl_set(s->ctl, AUDIT_STATUS_BACKLOG_LIMIT, 0, AS_BACKLOG);
		if (ret)
			return ret;
		s->set_backlog = true;
		s->old_backlog = st.backlog_limit;
	}
	/* Rules of daemons killed before they could delete them would log every exec of
	 * the host for nobody, and read as another daemon's (whose flag we leave alone). */
	ret = auditnl_rules_reap(s->ctl, s->key, &s->reaped);
	if (ret)
		return ret;
	ret = auditnl_rules_add(s->ctl, s->key, s->added, AUDITNL_RULES);
	if (ret)
		return ret;
	if (st.enabled == 0) {
		ret = auditnl_set(s->ctl, AUDIT_STATUS_ENABLED, 1, 0);
		if (ret)
			return ret;
		s->set_enabled = true;
		s->old_enabled = 0;
	}
	return 0;
}

int auditsrc_start(struct auditsrc **out, struct audit *a)
{
	struct auditsrc *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->a = a;
	s->healthy = true;
	if (!a->pend) {
		free(s);
		return -ENOMEM;   /* the held table could not be made (audit.c) */
	}
	/* A key of our own: another sandgated deleting its rules at stop leaves ours. */
	snprintf(s->key, sizeof(s->key), "%s-%d", AUDITNL_KEY, (int)getpid());
	auditjoin_init(&s->j);
	s->ctl = auditnl_open();
	s->mc = s->ctl < 0 ? -1 : mc_socket();
	ret = s->ctl < 0 ? s->ctl : s->mc < 0 ? s->mc : 0;
	if (ret) {
		s->ctl = s->ctl < 0 ? -1 : s->ctl;
		s->mc = -1;
		goto fail;
	}
	/* Subscribed before the rules exist: no exec after them is missed. The connector
	 * holds execs for us from here on (their records may already be on the way). */
	execpend_activate(a->pend, true, NULL);
	ret = as_setup_kernel(s);
	if (ret == 0)
		ret = as_fds(s);
	if (ret == 0)
		ret = sg_thread_start(s->t, as_main, s);
	if (ret)
		goto fail;
	if (s->reaped)
		log_info("audit: deleted the exec rules of %u sandgated(s) no longer running",
			 s->reaped);
	*out = s;
	return 0;
fail:
	as_close(s);
	return ret;
}

void auditsrc_stop(struct auditsrc *s)
{
	if (!s)
		return;
	(void)sg_thread_stop(s->t);
	(void)sg_thread_join(s->t);
	as_close(s);
}
