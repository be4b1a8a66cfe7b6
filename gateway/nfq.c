/*
 * One NFQUEUE worker: a pinned thread in the gateway's namespace, bound to one queue,
 * with its own epoll. It drains the socket, decides each packet (gateway/handle.c),
 * and sends the verdicts of a drained batch together in one sendto.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/types.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "dns/dns.h"
#include "gateway/gw_int.h"
#include "gateway/nfq.h"
#include "gateway/sockpid.h"

#define NFQ_RBUF (0xffff + 4096)     /* one GSO packet plus its attributes */
/* The receive buffer: NFQ_RBUF received, and room for the last message's padding. */
#define NFQ_RBUF_CAP (NFQ_RBUF + NLMSG_ALIGNTO)
#define NFQ_SBUF (64 * 1024)         /* a batch of verdicts */
#define NFQ_VERDICT_ROOM 320         /* one verdict message with a replaced SYN (128 B) */
#define NFQ_SOCK_BUF (16 * 1024 * 1024)

static void pin(struct gw_worker *w)
{
	cpu_set_t allowed, one;
	unsigned k = 0, want;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) == 0)
		return;
	want = w->idx % (unsigned)CPU_COUNT(&allowed);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &allowed) || k++ != want)
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		/* Best effort: a cpuset that forbids it leaves the thread floating. */
		(void)pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
		return;
	}
}

/*
 * The queue workers run at nice -worker_priority, and at nice -flood_worker_priority
 * while a session's flood limit is on (best effort: needs CAP_SYS_NICE); so does the
 * conntrack thread, whose hold of g->lock every worker may wait for (under a connect()
 * flood, workers waited up to 3 ms for it: t_gateway_flood, 2026-12-02). A worker is the
 * packet path of every session: when one session burns the CPUs (a flood of blocked
 * attempts), a worker at the sessions' own priority waits for a CPU while every other
 * session's DNS waits for it (t_gateway_flood: another session's DNS p99 93 ms at nice
 * 0, 38 ms at nice -10, on a machine at load 15). Not all the time: a worker that
 * preempts at once wakes per packet instead of per batch, which cost a third of the DNS
 * queries/s on a quiet machine (docs/bench-gateway.md).
 *
 * While a flood limit is on they also leave the fair scheduler for SCHED_RR at its lowest
 * priority (flood_worker_realtime): even at nice -10 a woken worker waited for the
 * flooders' slice to end, twice per DNS exchange (query and answer), and another
 * session's p99 under a connect() flood was 6.3-15.5 ms in the ASan build; with SCHED_RR
 * 3.1-5.3 ms (docs/gateway.md "Threads"). What a flooding session can put in the queue is
 * bounded by its limit, so it cannot keep a real-time worker busy; the kernel's RT
 * throttling and fair server keep CPU time for everything else in any case.
 */
#define FLOOD_RT_PRIORITY 1

static void set_nice(struct gw_prio *p, pid_t tid, unsigned n)
{
	if (n == p->nice_now || n > 20)
		return;
	/* 0 is the daemon's own nice, as found at start. On failure (no CAP_SYS_NICE) it
	 * is not retried until the answer changes. */
	(void)setpriority(PRIO_PROCESS, (id_t)tid, n ? -(int)n : p->nice_base);
	p->nice_now = n;
}

/* SCHED_RR at FLOOD_RT_PRIORITY, or back to SCHED_OTHER. Refused once (no CAP_SYS_NICE,
 * a cgroup without RT time): said, and the thread keeps to its nice from then on. */
static void set_realtime(struct gw_prio *p, pid_t tid, bool rt)
{
	struct sched_param sp = { .sched_priority = rt ? FLOOD_RT_PRIORITY : 0 };

	if (rt && p->rt_failed)
		return;
	if (rt == p->rt_now)
		return;
	if (sched_setscheduler(tid, rt ? SCHED_RR : SCHED_OTHER, &sp) == 0) {
		p->rt_now = rt;
		return;
	}
	if (rt) {
		p->rt_failed = true;
		log_warn("gateway: thread %d: SCHED_RR refused while a flood limit is on "
			 "(flood_worker_realtime); it runs at its nice instead", (int)tid);
	} else {
		log_warn("gateway: thread %d: cannot leave SCHED_RR (retried at the next change)",
			 (int)tid);
	}
}

struct prio_wanted {
	unsigned nice;
	bool realtime;
};

static struct prio_wanted prio_wanted(const struct gateway *g)
{
	bool flood = atomic_load_explicit(&g->flood_on, memory_order_relaxed);
	struct prio_wanted w = { g->cfg.worker_priority, false };

	if (flood && g->cfg.flood_worker_priority > w.nice)
		w.nice = g->cfg.flood_worker_priority;
	w.realtime = flood && g->cfg.flood_worker_realtime;
	return w;
}

static void set_prio(struct gw_prio *p, pid_t tid, struct prio_wanted w)
{
	set_nice(p, tid, w.nice);
	set_realtime(p, tid, w.realtime);
}

/* At start, on the thread itself; from then on the flood code renices it. */
void gw_prio_start(struct gateway *g, struct gw_prio *p)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	errno = 0;
	p->nice_base = getpriority(PRIO_PROCESS, (id_t)tid);
	if (errno)
		p->nice_base = 0;
	gw_flood_lock_nft(g);   /* a limit engaged meanwhile renices this one too */
	set_prio(p, tid, prio_wanted(g));
	atomic_store_explicit(&p->tid, tid, memory_order_release);
	gw_flood_unlock_nft(g);
}

static void renice(struct gateway *g, struct gw_prio *p)
{
	pid_t tid = atomic_load_explicit(&p->tid, memory_order_acquire);

	if (tid > 0)
		set_prio(p, tid, prio_wanted(g));
}

void gw_workers_renice(struct gateway *g)
{
	for (unsigned i = 0; i < g->nw; i++)
		renice(g, &g->w[i].prio);
	renice(g, &g->ct_prio);
}

/* Sends one config message and waits for its ACK. 0 or -errno from the kernel. */
static int cfg_send(struct gw_worker *w, struct nlmsghdr *nlh)
{
	static uint32_t seq = 1;
	ssize_t n;
	int ret;

	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	if (mnl_socket_sendto(w->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(w->nl, w->rbuf, NFQ_RBUF);
	if (n < 0)
		return -errno;
	ret = mnl_cb_run(w->rbuf, (size_t)n, nlh->nlmsg_seq, w->portid, NULL, NULL);
	return ret < 0 ? -errno : 0;
}

static int bind_queue(struct gw_worker *w)
{
	const struct gw_config *c = &w->g->cfg;
	/* No NFQA_CFG_F_CONNTRACK: this kernel refuses it (no NETLINK_GLUE_CT); flows are
	 * followed by their tuple instead (gateway/flowtab.h). */
	uint32_t flags = NFQA_CFG_F_GSO | NFQA_CFG_F_UID_GID;
	struct nlmsghdr *nlh;
	int ret;

	nlh = nfq_nlmsg_put((char *)w->sbuf, NFQNL_MSG_CONFIG, w->qnum);
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
	ret = cfg_send(w, nlh);
	if (ret)
		return ret;
	/* Fail-open only by explicit option: a full queue then passes packets. */
	if (c->fail_open)
		flags |= NFQA_CFG_F_FAIL_OPEN;
	nlh = nfq_nlmsg_put((char *)w->sbuf, NFQNL_MSG_CONFIG, w->qnum);
	nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, 0xffff);
	nfq_nlmsg_cfg_put_qmaxlen(nlh, c->queue_len);
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(flags));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(flags | NFQA_CFG_F_FAIL_OPEN));
	return cfg_send(w, nlh);
}

static int open_socket(struct gw_worker *w)
{
	int fd, one = 1, size = NFQ_SOCK_BUF;

	w->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!w->nl)
		return -errno;
	if (mnl_socket_bind(w->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	w->portid = mnl_socket_get_portid(w->nl);
	fd = mnl_socket_get_fd(w->nl);
	/* A deep buffer rides out bursts; NO_ENOBUFS keeps an overrun from killing reads
	 * (the kernel counts what it drops: gateway/qstats.c reports it). */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	return 0;
}

static int worker_setup(struct gw_worker *w)
{
	int ret;

	w->diagfd = -1;
	w->rbuf = malloc(NFQ_RBUF_CAP);
	w->sbuf = malloc(NFQ_SBUF);
	w->msg = malloc(sizeof(*w->msg));
	w->holders = sockpid_cache_new();
	if (!w->rbuf || !w->sbuf || !w->msg || !w->holders)
		return -ENOMEM;
	pin(w);
	gw_prio_start(w->g, &w->prio);
	ret = gw_enter_netns(w->g);
	if (ret == 0)
		ret = open_socket(w);
	if (ret == 0)
		ret = bind_queue(w);
	/* Best effort: without it pids are null, the rest works. */
	if (ret == 0)
		w->diagfd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	return ret;
}

static void worker_teardown(struct gw_worker *w)
{
	if (w->nl)
		mnl_socket_close(w->nl);
	w->nl = NULL;
	if (w->diagfd >= 0)
		close(w->diagfd);
	w->diagfd = -1;
	if (w->raw4 >= 0)
		close(w->raw4);
	if (w->raw6 >= 0)
		close(w->raw6);
	w->raw4 = w->raw6 = -1;
	free(w->rbuf);
	free(w->sbuf);
	free(w->msg);
	sockpid_cache_free(w->holders);
	w->rbuf = w->sbuf = NULL;
	w->msg = NULL;
	w->holders = NULL;
}

static int flush(struct gw_worker *w)
{
	size_t len = w->slen;

	if (len == 0)
		return 0;
	w->slen = 0;
	atomic_fetch_add_explicit(&w->g->st.batches, 1, memory_order_relaxed);
	if (mnl_socket_sendto(w->nl, w->sbuf, len) < 0)
		return -errno;
	return 0;
}

static int add_verdict(struct gw_worker *w, uint32_t id, int verdict, uint32_t mark,
		       bool set_mark)
{
	struct nlmsghdr *nlh;
	int ret = 0;

	if (w->slen + NFQ_VERDICT_ROOM > NFQ_SBUF)
		ret = flush(w);
	nlh = nfq_nlmsg_put((char *)w->sbuf + w->slen, NFQNL_MSG_VERDICT, w->qnum);
	nfq_nlmsg_verdict_put(nlh, (int)id, verdict);
	if (set_mark)
		nfq_nlmsg_verdict_put_mark(nlh, mark);
	/* The packet as it leaves, when the worker changed it (a stripped SYN). */
	if (w->mangle_len && verdict == NF_ACCEPT)
		nfq_nlmsg_verdict_put_pkt(nlh, w->mangle, (uint32_t)w->mangle_len);
	w->slen += NLMSG_ALIGN(nlh->nlmsg_len);
	atomic_fetch_add_explicit(verdict == NF_ACCEPT ? &w->g->st.verdicts_accept
						       : &w->g->st.verdicts_drop,
				  1, memory_order_relaxed);
	return ret;
}

static bool attr_u32(struct nlattr *a, uint32_t *v)
{
	if (!a || mnl_attr_get_payload_len(a) < sizeof(uint32_t))
		return false;
	*v = ntohl(mnl_attr_get_u32(a));
	return true;
}

static void fill_meta(struct nlattr **attr, struct gw_meta *m)
{
	uint32_t v;

	m->uid = attr_u32(attr[NFQA_UID], &v) ? (int64_t)v : -1;
	/* Checksums the kernel fills in later (local, GSO) cannot be checked here. */
	m->csum_unready = attr_u32(attr[NFQA_SKB_INFO], &v) &&
			  (v & (NFQA_SKB_CSUMNOTREADY | NFQA_SKB_GSO));
	if (!attr_u32(attr[NFQA_MARK], &m->mark))
		m->mark = 0;
	if (attr[NFQA_PAYLOAD]) {
		m->pay = mnl_attr_get_payload(attr[NFQA_PAYLOAD]);
		m->len = mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
	}
	/* A GSO/GRO packet over the copy range (0xffff: BIG TCP, gro_max_size raised) comes
	 * cut, its full length here: its tail was not read. */
	m->truncated = attr_u32(attr[NFQA_CAP_LEN], &v) && v > m->len;
}

int nfq_packet_parse(const struct nlmsghdr *nlh, struct gw_meta *m)
{
	struct nlattr *attr[NFQA_MAX + 1] = { 0 };
	struct nfqnl_msg_packet_hdr *ph;

	/* libmnl's walk would stop at once on a shorter one (its lengths are signed);
	 * said here, as nft/nft_watch.c's one_msg() says it. */
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct nfgenmsg)))
		return -EBADMSG;
	if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR] ||
	    mnl_attr_get_payload_len(attr[NFQA_PACKET_HDR]) < sizeof(*ph))
		return -EBADMSG;
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	m->id = ntohl(ph->packet_id);
	fill_meta(attr, m);
	return 0;
}

static int on_packet(struct gw_worker *w, const struct nlmsghdr *nlh)
{
	struct gw_meta m = { .uid = -1, .pid = -1, .t0_us = time_mono_us() };
	uint32_t mark;
	int verdict;

	if (nfq_packet_parse(nlh, &m) != 0)
		return 0;   /* no id: nothing to answer; the kernel's timeout is not ours */
	atomic_fetch_add_explicit(&w->g->st.packets, 1, memory_order_relaxed);
	w->mangle_len = 0;
	gw_handle(w, &m, &verdict, &mark);
	return add_verdict(w, m.id, verdict, mark, mark != m.mark);
}

int nfq_split(uint8_t *buf, size_t n, size_t cap, nfq_msg_fn fn, void *ctx,
	      uint64_t *unread)
{
	size_t off = 0;
	int ret = 0;

	if (cap < n)
		cap = n;   /* no room past what was received */
	while (ret == 0 && n - off >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(buf + off);
		size_t len = nlh->nlmsg_len, end = NLMSG_ALIGN(len);

		if (len < sizeof(*nlh) || len > n - off)
			break;
		/*
		 * libmnl walks a message's attributes up to its *aligned* end, and the kernel
		 * sends a queued packet unpadded (nlmsg_len is the skb's length, the payload
		 * last): the last message's padding is not in the buffer, and an attribute
		 * running into it (forged) was read past what was received (fuzz_nfq,
		 * payload_into_padding). The buffer has room for it (cap), zeroed here; a
		 * buffer without that room has the message counted, not read.
		 */
		if (end > n - off) {
			if (end > cap - off)
				break;
			memset(buf + n, 0, off + end - n);
		}
		ret = fn(ctx, nlh);
		off += end < n - off ? end : n - off;
	}
	/* A message cut short (or framing that is not one) ends the buffer: the rest is
	 * counted, as the queue's own drops are. */
	if (ret == 0 && off < n)
		(*unread)++;
	return ret;
}

/* One message of a recv: packets, and errors the kernel returned for verdicts. */
static int on_msg(void *ctx, const struct nlmsghdr *nlh)
{
	struct gw_worker *w = ctx;

	if (nlh->nlmsg_type == NLMSG_ERROR || nlh->nlmsg_type == NLMSG_DONE)
		return 0;   /* a verdict for a packet the kernel dropped already */
	if ((nlh->nlmsg_type & 0xff) == NFQNL_MSG_PACKET)
		return on_packet(w, nlh);
	return 0;
}

/* Every message of one recv (n at most NFQ_RBUF). */
static int on_batch(struct gw_worker *w, size_t n)
{
	uint64_t unread = 0;
	int ret = nfq_split(w->rbuf, n, NFQ_RBUF_CAP, on_msg, w, &unread);

	/* Not expected from the kernel: its packet went without a verdict (the queue
	 * holds it until its socket closes, or fails open or closed when full). */
	if (unread)
		gw_ev_loss(w->g, "nfqueue", (int64_t)unread, "queue message not readable");
	return ret;
}

/* Reads until the socket is empty, then sends the batch of verdicts. */
static int drain(struct gw_worker *w)
{
	int fd = mnl_socket_get_fd(w->nl), ret = 0;
	ssize_t n;

	while (ret == 0 && (n = recv(fd, w->rbuf, NFQ_RBUF, MSG_DONTWAIT)) > 0)
		ret = on_batch(w, (size_t)n);
	if (ret == 0 && n < 0 && errno == ENOBUFS)
		gw_ev_loss(w->g, "nfqueue", -1, "netlink socket overrun (ENOBUFS)");
	else if (ret == 0 && n < 0 && errno != EAGAIN && errno != EINTR)
		ret = -errno;
	if (ret == 0)
		ret = flush(w);
	return ret;
}

/* The queue's socket is readable: all of it, then one batch of verdicts. */
static void on_queue(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct gw_worker *w = ctx;

	(void)fd;
	(void)events;
	w->err = drain(w);
	if (w->err)
		loop_stop(l);
}

int gw_worker_main(struct sg_thread *t, void *arg)
{
	struct gw_worker *w = arg;
	int ret = worker_setup(w);

	if (ret == 0)
		ret = loop_add(sg_thread_loop(t), mnl_socket_get_fd(w->nl), EPOLLIN, on_queue, w);
	if (ret)
		log_errno(ret, "gateway: queue %u: cannot bind", w->qnum);
	gw_started(w->g, &w->start_err, ret);
	if (ret == 0) {
		ret = sg_thread_run(t);
		if (ret == 0)
			ret = w->err;
		if (ret)
			log_errno(ret, "gateway: queue %u: worker stopped (queue fails closed)",
				  w->qnum);
	}
	worker_teardown(w);
	return ret;
}
