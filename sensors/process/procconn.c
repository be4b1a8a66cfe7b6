/*
 * The proc connector sensor: one thread (common/thread.h: socket, poke, 1 s tick).
 * Events are taken from the socket in batches so an exec can be checked against a later
 * exec of the same pid already queued: its /proc state would be the later program's,
 * so it is reported with argv_complete false rather than with borrowed arguments.
 * The events are built and emitted by the emitter thread (audit/procq.c): this one only
 * reads the socket and /proc and keeps the pid table.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "sensors/process/proc_int.h"
#include "sensors/process/execpend.h"
#include "common/log.h"
#include "common/thread.h"
#include "common/timeutil.h"

#define PC_BATCH 1024
#define PC_PREFETCH 32       /* execs of one batch whose /proc is read before any emit */
#define PC_SKIP (-2)         /* slot[]: not a session exec */
#define PC_INLINE (-1)       /* slot[]: read when its turn comes */

struct procconn {
	struct audit *a;
	int sock;
	struct sg_thread *t;
	struct cn_seq *seq;
	struct procq *q;
	uint64_t gap_lost, enobufs, table_full;
	uint64_t tried_ns;           /* when the last recv() was started */
	size_t bad;
	uint8_t buf[65536];
	struct cn_event batch[PC_BATCH];
	int slot[PC_BATCH];          /* exec i: its prefetched pre[] slot, or PC_SKIP/INLINE */
	struct exec_info pre[PC_PREFETCH];
	size_t n;
};

/* PROC_CN_MCAST_LISTEN or _IGNORE to the kernel. 0 or -errno. */
static int pc_mcast(int sock, uint32_t op)
{
	uint8_t msg[NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(op)] = { 0 };
	struct nlmsghdr nh = { .nlmsg_len = sizeof(msg), .nlmsg_type = NLMSG_DONE,
			       .nlmsg_pid = 0 };
	/* The kernel broadcasts its ACK to every listener, echoing seq: ours is our pid. */
	struct cn_msg cn = { .id = { CN_IDX_PROC, CN_VAL_PROC }, .len = sizeof(op),
			     .seq = (uint32_t)getpid() };

	memcpy(msg, &nh, sizeof(nh));
	memcpy(msg + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(msg + NLMSG_HDRLEN + sizeof(cn), &op, sizeof(op));
	return send(sock, msg, sizeof(msg), 0) == (ssize_t)sizeof(msg) ? 0 : -errno;
}

static int pc_socket(int *out, int sz)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	int fd, ret = 0;

	fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (fd < 0)
		return -errno;
	/* A storm of short processes outruns any reader for a moment: buffer deep. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		ret = -errno;
	if (ret == 0)
		ret = pc_mcast(fd, PROC_CN_MCAST_LISTEN);
	if (ret) {
		close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

/* Whether a later event of the batch is another exec of pid. */
static bool exec_superseded(const struct procconn *p, size_t i, pid_t pid)
{
	for (size_t j = i + 1; j < p->n; j++)
		if (p->batch[j].kind == CN_EXEC && p->batch[j].pid == pid)
			return true;
	return false;
}

/* The table entry for an exec'ing pid: the fork tree, else its cgroup. */
static bool exec_entry(struct procconn *p, const struct cn_event *ev, struct ptab_ent *pe)
{
	uint64_t start;

	if (ptab_get(p->a->tab, ev->pid, false, pe))
		return true;
	memset(pe, 0, sizeof(*pe));
	if (proc_session_of(ev->pid, p->a->prefix, pe->sid, sizeof(pe->sid), &start) != 0 ||
	    pe->sid[0] == '\0')
		return false;
	pe->pid = ev->pid;
	pe->start_ns = start;
	if (ptab_put(p->a->tab, pe) != 0)
		p->table_full++;
	return true;
}

/* Pass 1 for an exec: attribute it and read /proc into slot k (x zeroed if skipped). */
static bool exec_read(struct procconn *p, size_t i, struct exec_info *x)
{
	const struct cn_event *ev = &p->batch[i];
	struct ptab_ent pe;

	memset(x, 0, sizeof(*x));
	if (ev->pid != ev->tgid || ev->pid == p->a->self || !exec_entry(p, ev, &pe))
		return false;
	if (!exec_superseded(p, i, ev->pid))
		(void)exec_info_read(ev->pid, ev->ts_ns, EXEC_READ_ARGV | EXEC_READ_PIN_EXE, x);
	return true;
}

/* Execs handed back by the held table: the connector's account of them. */
static void pc_emit_items(struct procconn *p, struct execpend_item *l)
{
	struct execpend_item *next;
	int ret;

	for (l = execpend_items_order(l); l; l = next) {
		next = l->next;
		ret = procq_exec(p->q, &l->ev, &l->pe, &l->x);
		if (ret)
			log_errno(ret, "audit: process.exec of pid %d", (int)l->ev.pid);
		free(l);
	}
}

/* Pass 2 for an exec: update the table from what was read, emit. Frees x's buffer. */
static void exec_emit(struct procconn *p, size_t i, struct exec_info *x)
{
	const struct cn_event *ev = &p->batch[i];
	struct ptab_ent pe;
	int ret;

	if (!ptab_get(p->a->tab, ev->pid, false, &pe)) {
		exec_info_clear(x);
		return;
	}
	if (x->has_ids) {
		pe.uid = x->uid;
		pe.euid = x->euid;
		pe.ids_known = true;
	}
	if (x->has_stat && x->st.ppid > 0)
		pe.ppid = x->st.ppid;
	(void)ptab_put(p->a->tab, &pe);   /* replaces: the pid is there */
	mntwatch_note(p->a->mw, x->mntns, ev->pid, pe.sid);
	if (p->a->pk)
		pkgtrack_exec(p->a->pk, ev->pid, pe.ppid, pe.sid, ev->ts_ns, x->cmdline,
			      x->cmdlen, x->has_cwd ? x->cwd : NULL,
			      x->has_ids || pe.ids_known, x->has_ids ? x->uid : pe.uid);
	/* With the audit source: held until its record comes (then it emits the kernel's
	 * account), or handed back to be emitted here (audit/execpend.h). */
	if (p->a->pend) {
		struct execpend_item *l = NULL;

		ret = execpend_put(p->a->pend, ev, &pe, x, atomic_load(&p->a->exec_audit),
				   time_mono_ns(), &l);
		pc_emit_items(p, l);
		if (ret != -EAGAIN) {
			if (ret)
				log_errno(ret, "audit: process.exec of pid %d", (int)ev->pid);
			return;
		}
	}
	ret = procq_exec(p->q, ev, &pe, x);   /* takes x's cmdline: the tracker read it first */
	if (ret)
		log_errno(ret, "audit: process.exec of pid %d", (int)ev->pid);
}

static void on_exec(struct procconn *p, size_t i)
{
	struct exec_info x;

	if (p->slot[i] == PC_SKIP)
		return;
	if (p->slot[i] >= 0) {
		exec_emit(p, i, &p->pre[p->slot[i]]);
		return;
	}
	if (exec_read(p, i, &x))
		exec_emit(p, i, &x);
}

static void on_fork(struct procconn *p, const struct cn_event *ev)
{
	struct ptab_ent pe, old;

	if (ev->pid != ev->tgid)
		return;   /* a new thread, not a process */
	if (!ptab_get(p->a->tab, ev->ptgid, false, &pe)) {
		/* A host process took a pid a session process had: forget the dead one. */
		if (ptab_get(p->a->tab, ev->pid, true, &old))
			ptab_del(p->a->tab, ev->pid);
		return;
	}
	pe.pid = ev->pid;
	pe.ppid = ev->ptgid;
	pe.start_ns = ev->ts_ns;
	pe.dead_ns = 0;
	if (ptab_put(p->a->tab, &pe) != 0)
		p->table_full++;
}

static void on_event(struct procconn *p, size_t i)
{
	const struct cn_event *ev = &p->batch[i];
	struct ptab_ent pe;
	int ret = 0;

	/*
	 * Every message counts, the ACKs too: since Linux 5.x send_msg() stamps an ACK (to
	 * anyone's LISTEN or IGNORE: it is broadcast to every listener) with the per-CPU
	 * counter and the CPU like any event, so skipping it made each other listener's
	 * start or stop a false "lost: 1". Older kernels send it with cpu -1 and the
	 * requester's seq: beyond ncpu, cn_seq_feed ignores it.
	 */
	p->gap_lost += cn_seq_feed(p->seq, ev->cpu, ev->seq);
	switch (ev->kind) {
	case CN_FORK:
		break;   /* taken in prefetch(), in order, before any exec of the batch */
	case CN_EXEC:
		on_exec(p, i);
		break;
	case CN_UID:
		if (ev->pid == ev->tgid && ptab_get(p->a->tab, ev->pid, false, &pe)) {
			ptab_set_uids(p->a->tab, ev->pid, ev->ruid, ev->euid);
			ret = procq_uid(p->q, ev, &pe);
		}
		break;
	case CN_EXIT:
		if (ev->pid == ev->tgid && ptab_get(p->a->tab, ev->pid, false, &pe)) {
			ret = procq_exit(p->q, ev, &pe);
			ptab_exit(p->a->tab, ev->pid, ev->ts_ns);
			if (p->a->pk)
				pkgtrack_exit(p->a->pk, ev->pid);
		}
		break;
	case CN_ACK:
		/* A listen refused (no CAP_NET_ADMIN, not the initial namespace) is silent
		 * otherwise: no event would ever come. */
		if (ev->exit_code != 0 && ev->seq == (uint32_t)p->a->self)
			log_errno(-(int)ev->exit_code, "audit: the proc connector refused to listen");
		break;
	default:
		break;
	}
	if (ret)
		log_errno(ret, "audit: proc event of pid %d", (int)ev->pid);
}

/* Reads datagrams into the batch until it is full or the socket is empty. */
static int pc_fill(struct procconn *p)
{
	ssize_t got;
	size_t n;

	while (p->n < PC_BATCH) {
		p->tried_ns = time_mono_ns();
		got = recv(p->sock, p->buf, sizeof(p->buf), 0);
		if (got < 0 && errno == ENOBUFS) {
			p->enobufs++;   /* what was dropped shows up as sequence gaps */
			continue;
		}
		if (got < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (got == 0)
			return 0;
		n = 0;
		/* A datagram whose framing is broken: its events are past reading, counted */
		if (cn_decode(p->buf, (size_t)got, &p->batch[p->n], PC_BATCH - p->n, &n,
			      &p->bad) != 0)
			p->bad++;
		p->n += n;
	}
	return 1;   /* full: more may wait */
}

/*
 * Pass 1 over a batch: the fork tree first (so a child's exec in the same batch is
 * attributed), and the /proc reads of up to PC_PREFETCH execs before any event is
 * built: under a storm the later execs of a batch would otherwise wait for the emits
 * of the earlier ones while their processes exit.
 */
static void prefetch(struct procconn *p)
{
	int used = 0;

	for (size_t i = 0; i < p->n; i++) {
		p->slot[i] = PC_INLINE;
		if (p->batch[i].kind == CN_FORK)
			on_fork(p, &p->batch[i]);
		if (p->batch[i].kind != CN_EXEC || used == PC_PREFETCH)
			continue;
		if (exec_read(p, i, &p->pre[used]))
			p->slot[i] = used++;
		else
			p->slot[i] = PC_SKIP;
	}
}

static void pc_drain(struct procconn *p)
{
	int more;

	do {
		p->n = 0;
		more = pc_fill(p);
		if (more < 0) {
			log_errno(more, "audit: proc connector recv");
			return;
		}
		prefetch(p);
		for (size_t i = 0; i < p->n; i++)
			on_event(p, i);
		procq_kick(p->q);
	} while (more > 0);
	/* The socket was empty at tried_ns and all before it is handled. */
	audit_sync_publish(p->a, p->tried_ns);
}

/* Once a second: losses counted since the last tick, and old exited entries. */
static void pc_tick(void *ctx)
{
	struct procconn *p = ctx;

	if (p->gap_lost) {
		int ret = audit_emit_loss("proc_connector", (int64_t)p->gap_lost,
					  p->enobufs ? "receive buffer overflow (ENOBUFS)"
						     : "per-CPU sequence gap");
		if (ret)
			log_errno(ret, "audit: sensor.loss");
		p->gap_lost = 0;
		p->enobufs = 0;
	}
	if (p->table_full) {
		(void)audit_emit_loss("audit_pid_table", (int64_t)p->table_full,
				      "pid table full: session processes not tracked");
		p->table_full = 0;
	}
	if (p->bad) {
		/* Not expected from the kernel; said, never skipped silently. The events
		 * such a message held cannot be counted: lost null. */
		(void)audit_emit_loss("proc_connector", -1,
				      "connector messages not understood (malformed)");
		p->bad = 0;
	}
	ptab_sweep(p->a->tab, time_mono_ns());
	if (p->a->pk)
		pkgtrack_tick(p->a->pk);
}

static void on_sock(struct loop *l, int fd, uint32_t events, void *ctx)
{
	(void)l;
	(void)fd;
	(void)events;
	pc_drain(ctx);
}

static void on_poke(struct loop *l, int fd, uint32_t events, void *ctx)
{
	uint64_t n;

	(void)l;
	(void)events;
	(void)!read(fd, &n, sizeof(n));
	pc_drain(ctx);
}

/*
 * The race with a short-lived process is won or lost in the scheduler: a /bin/true
 * lives a few hundred microseconds. Run this thread as real-time (lowest FIFO
 * priority) so an exec event is read while the process still has its argv; it sleeps
 * otherwise and its work per event is bounded. Falls back to the highest nice.
 */
static void pc_priority(void)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
		(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -20);
}

static int pc_main(struct sg_thread *t, void *arg)
{
	struct procconn *p = arg;
	int ret;

	pc_priority();
	ret = sg_thread_run(t);
	if (ret)
		log_errno(ret, "audit: proc connector epoll_wait");
	pc_drain(p);
	return ret;
}

static int pc_fds(struct procconn *p)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int ret = sg_thread_new(&p->t, "sg-proc");

	if (ret == 0)
		ret = cn_seq_new(&p->seq, ncpu > 0 ? (uint32_t)ncpu : 1);
	if (ret == 0)
		ret = sg_thread_tick(p->t, 1000, pc_tick, p);
	if (ret == 0)
		ret = loop_add(sg_thread_loop(p->t), p->sock, EPOLLIN, on_sock, p);
	if (ret == 0)
		ret = loop_add(sg_thread_loop(p->t), p->a->poke_fd, EPOLLIN, on_poke, p);
	return ret;
}

static void pc_close(struct procconn *p)
{
	if (p->sock >= 0) {
		/* The kernel counts listeners: leave so it stops building events for us. */
		(void)pc_mcast(p->sock, PROC_CN_MCAST_IGNORE);
		close(p->sock);
	}
	sg_thread_free(p->t);
	cn_seq_free(p->seq);
	procq_stop(p->q);   /* emits what the thread queued */
	free(p);
}

int procconn_start(struct procconn **out, struct audit *a)
{
	struct procconn *p = calloc(1, sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	p->a = a;
	ret = pc_socket(&p->sock, a->proc_rcvbuf);
	if (ret) {
		p->sock = -1;
		goto fail;
	}
	ret = pc_fds(p);
	if (ret == 0)
		ret = procq_start(&p->q);
	if (ret == 0)
		ret = sg_thread_start(p->t, pc_main, p);
	if (ret)
		goto fail;
	*out = p;
	return 0;
fail:
	pc_close(p);
	return ret;
}

void procconn_stop(struct procconn *p)
{
	if (!p)
		return;
	(void)sg_thread_stop(p->t);
	(void)sg_thread_join(p->t);
	if (p->gap_lost)
		(void)audit_emit_loss("proc_connector", (int64_t)p->gap_lost,
				      p->enobufs ? "receive buffer overflow (ENOBUFS)"
						 : "per-CPU sequence gap");
	pc_close(p);
}
