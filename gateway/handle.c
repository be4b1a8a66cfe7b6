/*
 * One queued packet: whose it is (the session mark), which flow (the conntrack id), what
 * it says (DNS, or the first bytes of a new flow), and the verdict: NF_ACCEPT with the
 * session mark carrying allow (or deny) once the flow is decided, unchanged while the
 * flow's first bytes are still being read (it stays queued), NF_DROP for what cannot be
 * attributed. Tables are touched under g->lock; events are emitted after it.
 */
#include <netinet/in.h>   /* before linux/netfilter.h: glibc's in.h wins */
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/flight.h"
#include "gateway/gw_int.h"
#include "gateway/names.h"
#include "gateway/sockpid.h"
#include "journal/event.h"
#include "nft/nft.h"

void gw_lat_observe(struct gateway *g, int64_t us)
{
	static const int64_t edge[GW_LAT_BUCKETS] = { 10, 50, 100, 500, 1000, 5000, 10000,
						      100000 };
	int i = 0;

	while (i < GW_LAT_BUCKETS && us > edge[i])
		i++;
	atomic_fetch_add_explicit(&g->st.lat[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&g->st.lat_sum_us, (uint_fast64_t)(us < 0 ? 0 : us),
				  memory_order_relaxed);
}

/*
 * A DNS query: to port 53. What comes from port 53 is DNS only as the reply of such a
 * flow the session opened (to a configured resolver: others are refused); a packet
 * from port 53 matching no flow is a new flow of its own, decided by the policy.
 */
static bool is_dns(const struct gw_pkt *p)
{
	return p->has_ports && p->dport == 53;
}

static void flow_init(struct gateway *g, struct flow *f, const struct gw_meta *m,
		      const struct gw_pkt *p, const char *sid)
{
	size_t al = p->family == AF_INET ? 4 : 16;

	f->mark_id = nft_mark_id(m->mark);
	snprintf(f->sid, sizeof(f->sid), "%s", sid);
	f->family = p->family;
	f->proto = p->proto;
	memcpy(f->src, p->src, al);
	memcpy(f->dst, p->dst, al);
	f->sport = p->sport;
	f->dport = p->dport;
	f->has_ports = p->has_ports;
	f->start_ms = time_mono_ms();
	f->last_report_ms = f->start_ms;
	clock_gettime(CLOCK_REALTIME, &f->start_wall);
	f->uid = m->uid;
	f->is_dns = is_dns(p);
	if (dnsbind_lookup(g->binds, f->mark_id, p->family, p->dst, f->start_ms, f->domain,
			   sizeof(f->domain)) != 0)
		f->domain[0] = '\0';
	atomic_fetch_add_explicit(&g->st.flows_new, 1, memory_order_relaxed);
}

void gw_pkt_key(const struct gw_pkt *p, struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)p->family;
	k->proto = p->proto;
	k->sport = p->sport;
	k->dport = p->dport;
	memcpy(k->src, p->src, p->family == AF_INET ? 4 : 16);
	memcpy(k->dst, p->dst, p->family == AF_INET ? 4 : 16);
}

/*
 * The flow of this packet (*reply: it is the flow's reply direction); a new one for a
 * packet matching no flow either way: the first packet of a flow is always queued in
 * its original direction (replies of undecided flows are not queued, except DNS, whose
 * query came first). It is the SYN, or, for a flow to an address bound in the kernel
 * sets (gateway/kbind.c), whose SYN the kernel accepted, the handshake's ACK or the
 * first data: the flow starts there, its stream at its first data segment.
 */
static struct flow *flow_of(struct gateway *g, const struct gw_meta *m,
			    const struct gw_pkt *p, const char *sid, bool *reply)
{
	struct flow_key k, rk;
	struct flow *f;

	gw_pkt_key(p, &k);
	*reply = false;
	if ((f = flowtab_find(g->flows, &k)) != NULL)
		return f;
	flow_key_reverse(&k, &rk);
	if ((f = flowtab_find(g->flows, &rk)) != NULL) {
		*reply = true;
		return f;
	}
	if (flowtab_add(g->flows, &k, &f) != 0)
		return NULL;
	f->flow_id = ++g->flow_seq;
	flow_init(g, f, m, p, sid);
	return f;
}

/* What a decision leaves for after the lock: the flow as decided. */
struct decided {
	bool now;
	struct flow f;           /* a copy without its buffers */
};

/* Frees what reading f's first bytes needed. */
static void flow_unread(struct flow *f)
{
	free(f->buf);
	f->buf = NULL;
	f->len = 0;
	http_follow_free(f->hf);
	f->hf = NULL;
}

/* f was decided by this packet: keep a copy for its event, count a block. */
static void on_decided(struct gateway *g, struct flow *f, struct decided *dc,
		       struct gw_evlist *l)
{
	f->decided = true;
	dc->now = true;
	dc->f = *f;
	dc->f.dtcp[0] = dc->f.dtcp[1] = NULL;
	dc->f.buf = NULL;
	dc->f.hf = NULL;
	if (f->verdict == NFT_MARK_DENY)
		atomic_fetch_add_explicit(&g->st.blocked_flows, 1, memory_order_relaxed);
	if (f->vstr && !strcmp(f->vstr, "would_block"))
		atomic_fetch_add_explicit(&g->st.would_block_flows, 1, memory_order_relaxed);
	if (f->verdict == NFT_MARK_DENY || (f->vstr && !strcmp(f->vstr, "would_block")))
		gw_blocked(g, f->mark_id, f->sid, f->reason, l);
}

/* The judge of what the first-flight reader read (gateway/flight.h). */
struct judge_ctx {
	struct gateway *g;
	const struct policy *pol;
	const struct gw_pkg_hosts *pk;
	struct gw_evlist *l;
	struct decided *dc;
};

static bool judge(void *ctx, struct flow *f)
{
	struct judge_ctx *c = ctx;
	bool first = !f->decided;

	(void)gw_decide_pkg(c->g, f, c->pol, false, c->pk);
	if (first) {
		on_decided(c->g, f, c->dc, c->l);
	} else if (f->rerecord) {
		/* A later request head (another Host), or what broke the reading: on record
		 * as a net.connect of the same flow_id. */
		f->rerecord = false;
		if (f->verdict == NFT_MARK_DENY)
			atomic_fetch_add_explicit(&c->g->st.blocked_flows, 1, memory_order_relaxed);
		if (f->verdict == NFT_MARK_DENY || !strcmp(f->vstr, "would_block"))
			gw_blocked(c->g, f->mark_id, f->sid, f->reason, c->l);
		/* Blocked: under the session's budget like any blocked attempt (blocksum.c). */
		if (!gw_summarised_connect(c->g, f))
			gw_evlist_push(c->l, gw_ev_connect(c->g, f, -1));
	}
	return f->verdict == NFT_MARK_ALLOW;
}

/*
 * A client TCP segment of a flow the policy decides (enforcing): no payload byte leaves
 * before its first flight is read and allowed (gateway/flight.c). *verdict NF_DROP for
 * what is held back; returns the mark.
 */
static uint32_t tcp_flight(struct gateway *g, const struct gw_meta *m, const struct gw_pkt *p,
			   struct flow *f, struct judge_ctx *jc, int *verdict)
{
	struct flight_judge j = { judge, jc };
	enum flight_act act;

	if (f->decided && (f->committed || f->verdict == NFT_MARK_DENY))
		return nft_mark_with_verdict(m->mark, f->verdict);
	if (!f->decided && ++f->npkts == 1 && (p->tcp_flags & PKT_TCP_SYN) &&
	    gw_decide_pkg(g, f, jc->pol, true, m->pkg)) {
		/* At the SYN, a flow no name could allow: nothing of it leaves (report mode:
		 * would_block, and the flow is not read). */
		on_decided(g, f, jc->dc, jc->l);
		f->committed = true;
		return nft_mark_with_verdict(m->mark, f->verdict);
	}
	/* A segment the server would throw away (bad checksum) is not read either. */
	if (p->payload_len && !m->csum_unready && !gw_pkt_tcp_csum_ok(p)) {
		*verdict = NF_DROP;
		return m->mark;
	}
	act = gw_flight_segment(f, p, &j);
	if (act == FLIGHT_PASS && !f->decided && (p->tcp_flags & (PKT_TCP_FIN | PKT_TCP_RST))) {
		/* The client gave up before its first flight was complete. A flow whose SYN
		 * was not seen (its entry lost or made mid-stream) showed nothing that could
		 * be read: it is not allowed on its FIN (its held bytes would follow). */
		f->parse = gw_flight_unfinished(f);
		act = judge(jc, f) ? FLIGHT_PASS : FLIGHT_BLOCK;
		f->committed = act == FLIGHT_PASS;
	}
	if (act == FLIGHT_HOLD) {
		*verdict = NF_DROP;
		return m->mark;
	}
	if (act == FLIGHT_BLOCK || f->verdict == NFT_MARK_DENY) {
		flow_unread(f);
		return nft_mark_with_verdict(m->mark, NFT_MARK_DENY);
	}
	if (!f->committed)
		return m->mark;    /* out, and the flow's next segments still come here */
	flow_unread(f);
	return nft_mark_with_verdict(m->mark, f->verdict);
}

/* Runs under g->lock: the flow's state, its names, its DNS; returns the new mark. */
static uint32_t locked_part(struct gw_worker *w, const struct gw_meta *m,
			    const struct gw_pkt *p, const char *sid, struct gw_evlist *l,
			    struct decided *dc, int *verdict)
{
	struct gateway *g = w->g;
	const struct policy *pol = gw_policy_of(g, m->mark);
	bool reply;
	struct flow *f = flow_of(g, m, p, sid, &reply);

	struct judge_ctx jc = { g, pol, m->pkg, l, dc };

	if (!f) {
		/* No flow to follow (table full): decide on the spot, without names: a
		 * query is read (and goes only to a configured resolver), anything else is
		 * allowed only when the gateway just observes. */
		atomic_fetch_add_explicit(&g->st.flows_untracked, 1, memory_order_relaxed);
		if (is_dns(p) && gw_dns_packet(w, m, p, NULL, sid, pol, l) == GW_DNS_DROP)
			*verdict = NF_DROP;
		if (g->cfg.enforce &&
		    (!is_dns(p) || !gw_resolver_ok(g, p->family, p->dst, p->dport)))
			return nft_mark_with_verdict(m->mark, NFT_MARK_DENY);
		return nft_mark_with_verdict(m->mark, NFT_MARK_ALLOW);
	}
	/* A blocked flow's new SYN or datagram is another attempt: counted (blocksum.c). */
	if (f->decided && !reply)
		gw_blocked_again(g, f, p);
	if (g->cfg.enforce && pol && p->proto == IPPROTO_TCP && !f->is_dns && !reply)
		return tcp_flight(g, m, p, f, &jc, verdict);
	if (!f->decided) {
		f->npkts++;
		/* At the SYN (or the first queued packet of a kernel-accepted SYN): a flow no
		 * name could allow is decided at once, so nothing of it reaches the
		 * destination. (UDP's names come with its first packet.) */
		if (f->npkts == 1 && !reply && p->proto == IPPROTO_TCP &&
		    gw_decide_pkg(g, f, pol, true, m->pkg))
			on_decided(g, f, dc, l);
		else if (gw_names_feed(f, p, reply) && gw_decide_pkg(g, f, pol, false, m->pkg))
			on_decided(g, f, dc, l);
		if (f->decided)    /* the first flight is read: its bytes are not needed */
			flow_unread(f);
	}
	/* A reply of a TCP flow whose verdict is still being read: let it in unchanged. */
	if (reply && p->proto == IPPROTO_TCP && !f->is_dns && !f->committed && g->cfg.enforce)
		return m->mark;
	if (f->is_dns && gw_dns_packet(w, m, p, f, sid, pol, l) == GW_DNS_DROP)
		*verdict = NF_DROP;
	return f->decided ? nft_mark_with_verdict(m->mark, f->verdict) : m->mark;
}

/*
 * The pid of the session process that sent p: its local socket (sock_diag), then the
 * holder among the session's own processes. -1 when there is none to find (routed
 * traffic has no local socket and no uid) or it is not found.
 */
static int64_t pid_of(struct gw_worker *w, const struct gw_meta *m, const struct gw_pkt *p)
{
	char cg[MARKTAB_CG_MAX + 1];
	uint32_t ino;
	pid_t pid;

	if (m->uid < 0 || w->diagfd < 0 || !p->has_ports)
		return -1;
	if (marktab_get_cgroup(w->g->marks, nft_mark_id(m->mark), cg, sizeof(cg)) != 0 ||
	    sockpid_inode(w->diagfd, p, &ino) != 0 || sockpid_find(cg, ino, &pid) != 0)
		return -1;
	return pid;
}

/* After the lock: net.connect of a flow decided by this packet, with its pid. */
static void connect_event(struct gw_worker *w, const struct gw_meta *m,
			  const struct gw_pkt *p, struct decided *dc)
{
	int64_t pid = m->pid;

	if (!dc->now)
		return;
	/* Past the session's budget a blocked attempt is counted into a summary
	 * (gateway/blocksum.c), without its own line (nor its pid lookup). */
	if (gw_summarised_connect(w->g, &dc->f))
		return;
	if (pid < 0)
		pid = pid_of(w, m, p);
	gw_emit(w->g, gw_ev_connect(w->g, &dc->f, pid));
	gw_lat_observe(w->g, time_mono_us() - m->t0_us);
}

void gw_handle(struct gw_worker *w, const struct gw_meta *m0, int *verdict, uint32_t *mark)
{
	struct gateway *g = w->g;
	struct gw_evlist l = { 0 };
	struct gw_pkt p = { 0 };
	struct gw_meta mm = *m0, *m = &mm;
	struct decided dc = { 0 };
	char sid[MARKTAB_ID_MAX + 1];
	struct gw_pkg_hosts pk;

	*verdict = NF_ACCEPT;
	*mark = m->mark;
	/* Only session packets are queued; anything else passes as the ruleset would. */
	if (!nft_mark_is_session(m->mark))
		return;
	if (marktab_get(g->marks, nft_mark_id(m->mark), sid, sizeof(sid)) != 0) {
		/* A flow of a session that is gone: drop what cannot be attributed. */
		atomic_fetch_add_explicit(&g->st.unknown_session, 1, memory_order_relaxed);
		*verdict = NF_DROP;
		return;
	}
	if (!m->pay || gw_pkt_parse(m->pay, m->len, &p) != 0 || p.later_fragment ||
	    (p.first_fragment && g->cfg.enforce)) {
		atomic_fetch_add_explicit(&g->st.unparsable, 1, memory_order_relaxed);
		/* Fragments reach the queue only when conntrack could not reassemble them:
		 * what cannot be read is not let through when enforcing. */
		*verdict = p.later_fragment && !g->cfg.enforce ? NF_ACCEPT : NF_DROP;
		return;
	}
	/* Fast Open: data on a SYN would reach the server before anything is read. It is
	 * taken off (the client's TCP sends it again after the handshake, where it is
	 * read as the first flight). */
	if (g->cfg.enforce && p.proto == IPPROTO_TCP && p.payload_len &&
	    (p.tcp_flags & (PKT_TCP_SYN | PKT_TCP_ACK)) == PKT_TCP_SYN) {
		if (gw_pkt_strip_payload(m->pay, m->len, &p, w->mangle, sizeof(w->mangle),
					 &w->mangle_len) != 0) {
			*verdict = NF_DROP;
			return;
		}
		p.payload_len = 0;
	}
	/* A query's sender, looked up before the lock (it reads /proc). */
	mm.pid = is_dns(&p) && p.dport == 53 ? pid_of(w, m, &p) : -1;
	/* An installer under `unapproved: block` is running in the session: whose flow. */
	if (!is_dns(&p) && g->cfg.enforce && gw_pkg_active(sid)) {
		mm.pid = pid_of(w, m, &p);
		if (gw_pkg_hosts_of(sid, mm.pid, &pk))
			mm.pkg = &pk;
	}
	pthread_mutex_lock(&g->lock);
	*mark = locked_part(w, m, &p, sid, &l, &dc, verdict);
	pthread_mutex_unlock(&g->lock);
	connect_event(w, m, &p, &dc);
	gw_evlist_flush(g, &l);
}
