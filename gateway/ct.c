/*
 * The conntrack thread: in the gateway's namespace it turns on flow accounting and
 * timestamps, listens for destroy events of session flows (ct mark tag) and, on a second
 * socket, for their TCP state updates to TIME_WAIT or CLOSE (a flow's close,
 * gateway/ct_close.c), dumps the table
 * periodically for interim reports and missed ends, and on a timer expires unanswered DNS
 * queries and stale name bindings and reads the queues' drop counters.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>

#include "common/log.h"
#include "gateway/ct_int.h"
#include "journal/event.h"
#include "nft/nft.h"

#define CT_SOCK_BUF (16 * 1024 * 1024)
#define CT_REAP_MS 1000   /* how often expired entries are made to end (see reap()) */

struct ct_ctx {
	struct gateway *g;
	struct nfct_handle *ev, *upd, *dump;   /* destroy events, close updates, queries */
	struct sg_thread *t;
	int err;                     /* what stopped the loop */
	int64_t next_dump_ms, next_reap_ms;
	struct gw_dump d;
	struct gw_ctev cev;
};

static int write_sysctl(const char *name)
{
	char path[128];
	int fd, ret = 0;

	/* /proc/sys/net is the opening thread's namespace: this thread's. */
	snprintf(path, sizeof(path), "/proc/sys/net/netfilter/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1\n", 2) != 2)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Only session flows wake us; host flows are filtered in the kernel. On the update
 * socket (close_only) also only TCP entries whose new state is TIME_WAIT or CLOSE: a
 * short connection makes about six updates (SYN_RECV, ESTABLISHED, FIN_WAIT, LAST_ACK,
 * TIME_WAIT, its mark), and reading the four the close does not need was as much CPU as
 * a queue worker's in the gateway bench. An update without a state (the mark's) still
 * passes the kernel's filter and is ignored here.
 */
static int session_filter(struct nfct_handle *h, bool close_only)
{
	struct nfct_filter_dump_mark m = { .val = NFT_MARK_TAG, .mask = NFT_MARK_TAG_MASK };
	struct nfct_filter_proto tw = { IPPROTO_TCP, TCP_CONNTRACK_TIME_WAIT };
	struct nfct_filter_proto cl = { IPPROTO_TCP, TCP_CONNTRACK_CLOSE };
	struct nfct_filter *f = nfct_filter_create();
	int ret;

	if (!f)
		return -ENOMEM;
	nfct_filter_add_attr(f, NFCT_FILTER_MARK, &m);
	if (close_only) {
		nfct_filter_add_attr_u32(f, NFCT_FILTER_L4PROTO, IPPROTO_TCP);
		nfct_filter_add_attr(f, NFCT_FILTER_L4PROTO_STATE, &tw);
		nfct_filter_add_attr(f, NFCT_FILTER_L4PROTO_STATE, &cl);
	}
	ret = nfct_filter_attach(nfct_fd(h), f) == 0 ? 0 : -errno;
	nfct_filter_destroy(f);
	return ret;
}

/* An event socket: a large receive buffer, non-blocking, the session filter. */
static int event_socket(struct ct_ctx *c, struct nfct_handle *h, bool close_only)
{
	uint64_t want = c->g->cfg.ct_event_buffer ? c->g->cfg.ct_event_buffer : CT_SOCK_BUF;
	int size = want > INT32_MAX / 2 ? INT32_MAX / 2 : (int)want, fd = nfct_fd(h);

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
		return -errno;
	return session_filter(h, close_only);
}

static int open_handles(struct ct_ctx *c)
{
	int ret;

	ret = gw_ctev_init(&c->cev, c->g);
	if (ret)
		return ret;
	c->ev = nfct_open(CONNTRACK, NF_NETLINK_CONNTRACK_DESTROY);
	c->upd = nfct_open(CONNTRACK, NF_NETLINK_CONNTRACK_UPDATE);
	c->dump = nfct_open(CONNTRACK, 0);
	if (!c->ev || !c->upd || !c->dump)
		return -errno ? -errno : -EIO;
	ret = event_socket(c, c->ev, false);
	if (ret == 0)
		ret = event_socket(c, c->upd, true);
	if (ret == 0)
		ret = nfct_callback_register(c->ev, NFCT_T_DESTROY, gw_ct_on_event, &c->cev);
	if (ret == 0)
		ret = nfct_callback_register(c->upd, NFCT_T_UPDATE, gw_ct_on_event, &c->cev);
	if (ret == 0)
		ret = nfct_callback_register(c->dump, NFCT_T_ALL, gw_ct_on_dump, &c->d);
	return ret < 0 ? -EIO : ret;
}

static void on_tick(void *ctx);
static void on_ct_events(struct loop *l, int fd, uint32_t events, void *ctx);

static int ct_setup(struct ct_ctx *c)
{
	int ret = gw_enter_netns(c->g);

	if (ret == 0)
		ret = open_handles(c);   /* loads nf_conntrack if needed: sysctls exist after */
	if (ret == 0 && (write_sysctl("nf_conntrack_acct") || write_sysctl("nf_conntrack_timestamp")))
		log_warn("gateway: cannot enable conntrack accounting: net.flow counts are null");
	if (ret == 0)
		ret = sg_thread_tick(c->t, GW_CT_TICK_MS, on_tick, c);
	if (ret == 0)
		ret = loop_add(sg_thread_loop(c->t), nfct_fd(c->ev), EPOLLIN, on_ct_events, c);
	if (ret == 0)
		ret = loop_add(sg_thread_loop(c->t), nfct_fd(c->upd), EPOLLIN, on_ct_events, c);
	return ret;
}

static void ct_teardown(struct ct_ctx *c)
{
	if (c->ev)
		nfct_close(c->ev);
	if (c->upd)
		nfct_close(c->upd);
	if (c->dump)
		nfct_close(c->dump);
	free(c->d.ev);
	gw_ctev_fini(&c->cev);
}

static int on_events(struct ct_ctx *c);

static void do_dump(struct ct_ctx *c)
{
	struct nfct_filter_dump_mark m = { .val = NFT_MARK_TAG, .mask = NFT_MARK_TAG_MASK };
	struct nfct_filter_dump *fd = nfct_filter_dump_create();

	if (!fd)
		return;
	nfct_filter_dump_set_attr(fd, NFCT_FILTER_DUMP_MARK, &m);
	c->d.gen++;
	if (c->d.gen == 0)
		c->d.gen = 1;   /* 0 means "never seen in a dump" */
	/* A failed dump must not make every flow look gone: sweep only after success. The
	 * destroy events of flows that ended before or during the dump are read first, so
	 * only a flow whose event was really lost (overrun) is taken for a missed end. */
	if (nfct_query(c->dump, NFCT_Q_DUMP_FILTER, fd) == 0 && on_events(c) == 0)
		gw_ct_sweep(&c->d);
	nfct_filter_dump_destroy(fd);
}

/*
 * Conntrack removes an expired entry (and sends its destroy event) only when something
 * looks at it: a lookup of the same tuple, the garbage collector (which, with few
 * entries, wakes up to a minute apart), or a dump, which evicts every expired entry it
 * walks past. A closed TCP flow's net.flow would wait for one of those. So every
 * CT_REAP_MS the thread asks for a dump with a filter no entry matches (mark & 0 == 1):
 * the kernel walks the table, evicts what expired, and sends nothing back.
 */
static void reap(struct ct_ctx *c)
{
	struct nfct_filter_dump_mark none = { .val = 1, .mask = 0 };
	struct nfct_filter_dump *fd = nfct_filter_dump_create();

	if (!fd)
		return;
	nfct_filter_dump_set_attr(fd, NFCT_FILTER_DUMP_MARK, &none);
	(void)nfct_query(c->dump, NFCT_Q_DUMP_FILTER, fd);   /* best effort: the dump retries */
	nfct_filter_dump_destroy(fd);
}

static void expire_dns(struct gateway *g, int64_t now)
{
	struct dnspend_entry q;
	struct event *e;
	int r;

	for (;;) {
		pthread_mutex_lock(&g->lock);
		r = dnspend_pop_expired(g->pend, now - (int64_t)g->cfg.dns_timeout_ms, &q);
		if (r != 0)
			dnsbind_expire(g->binds, now);
		pthread_mutex_unlock(&g->lock);
		if (r != 0)
			return;
		atomic_fetch_add_explicit(&g->st.dns_unanswered, 1, memory_order_relaxed);
		e = gw_ev_dns(g, &q, NULL, q.key.tcp ? "tcp" : "udp", "no_answer", "no_policy", now,
			      NULL, 0);
		if (e)
			event_set_time(e, &q.sent_wall);
		gw_emit(g, e);
	}
}

static void on_tick(void *ctx)
{
	struct ct_ctx *c = ctx;
	int64_t now = time_mono_ms(), period;

	expire_dns(c->g, now);
	gw_qstats_poll(c->g);
	gw_blocksum_flush(c->g, false);
	gw_ctev_expire(&c->cev);
	if (now < c->next_dump_ms) {
		if (now >= c->next_reap_ms) {
			c->next_reap_ms = now + CT_REAP_MS;
			reap(c);
			gw_ct_sweep_denied(c->g);
		}
		return;
	}
	c->next_reap_ms = now + CT_REAP_MS;
	gw_ct_sweep_denied(c->g);
	period = (int64_t)c->g->cfg.flow_interim_ms / 2;
	period = period < 1000 ? 1000 : period > 10000 ? 10000 : period;
	c->next_dump_ms = now + period;
	do_dump(c);
}

/*
 * Reads one socket's events until it is empty; *overrun when the kernel dropped some.
 * An overrun is noted once and the reading goes on: the events queued after it are
 * still there, and a sweep before they are read would take their flows for missed ends
 * (a second net.flow). 0, or -errno.
 */
static int drain(struct nfct_handle *h, bool *overrun)
{
	for (;;) {
		while (nfct_catch(h) >= 0)
			;
		if (errno != ENOBUFS || *overrun)
			break;
		*overrun = true;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENOBUFS)
		return 0;
	return -errno;
}

/*
 * Close updates first (a flow recorded at its close swallows its destroy event; read
 * the other way round each is recorded once too), then destroy events. Only the destroy
 * socket's overrun loses flow ends: an update lost leaves its flow recorded at its
 * destroy, later; it is counted, not reported as a loss.
 */
static int on_events(struct ct_ctx *c)
{
	bool upd_overrun = false, overrun = false;
	int ret = drain(c->upd, &upd_overrun), r = drain(c->ev, &overrun);

	if (ret == 0)
		ret = r;
	if (upd_overrun)
		atomic_fetch_add_explicit(&c->g->st.ct_update_overruns, 1, memory_order_relaxed);
	if (overrun) {
		/* Events were dropped: the next dump finds the flows whose end we missed. */
		atomic_fetch_add_explicit(&c->g->st.ct_overruns, 1, memory_order_relaxed);
		gw_ev_loss(c->g, "conntrack", -1, "conntrack event socket overrun (ENOBUFS)");
		c->next_dump_ms = 0;
	}
	return ret;
}

static void on_ct_events(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct ct_ctx *c = ctx;

	(void)fd;
	(void)events;
	c->err = on_events(c);
	if (c->err)
		loop_stop(l);
}

int gw_ct_main(struct sg_thread *t, void *arg)
{
	struct ct_ctx c = { .g = arg, .t = t };
	int ret;

	c.d.g = c.g;
	c.d.cev = &c.cev;
	gw_prio_start(c.g, &c.g->ct_prio);   /* the workers' priority: they wait for its lock */
	ret = ct_setup(&c);
	if (ret)
		log_errno(ret, "gateway: conntrack");
	gw_started(c.g, &c.g->ct_start_err, ret);
	if (ret == 0) {
		c.next_dump_ms = time_mono_ms() + 1000;
		ret = sg_thread_run(t);
		if (ret == 0)
			ret = c.err;
		if (ret)
			log_errno(ret, "gateway: conntrack thread stopped (net.flow lost)");
	}
	ct_teardown(&c);
	return ret;
}
