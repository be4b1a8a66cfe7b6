/*
 * The shell around the packet decision (gateway/packet.h): one queued packet is read
 * (gw_decide_read), its session found (the mark), its flow looked up and the session's
 * policy view made under g->lock, the pure decision called, and what it says applied:
 * the records become events (built under the lock, emitted after it), an allowed
 * answer goes into the kernel sets, a synthesised DNS answer is sent, counters are
 * added, the verdict and mark go back to the queue (gateway/nfq.c).
 */
#include <netinet/in.h>   /* before linux/netfilter.h: glibc's in.h wins */
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/gw_int.h"
#include "gateway/packet.h"
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

void gw_evlist_push(struct gw_evlist *l, struct event *e)
{
	struct event **nv;

	if (!e) {
		l->lost++;
		return;
	}
	if (l->n == l->cap) {
		nv = realloc(l->v, (l->cap ? l->cap * 2 : 4) * sizeof(*nv));
		if (!nv) {
			event_free(e);
			l->lost++;
			return;
		}
		l->v = nv;
		l->cap = l->cap ? l->cap * 2 : 4;
	}
	l->v[l->n++] = e;
}

void gw_evlist_flush(struct gateway *g, struct gw_evlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		gw_emit(g, l->v[i]);
	if (l->lost)
		gw_ev_loss(g, "gateway", (int64_t)l->lost, "event not built (out of memory)");
	free(l->v);
	memset(l, 0, sizeof(*l));
}

const struct policy *gw_policy_of(struct gateway *g, uint32_t mark)
{
	char name[MARKTAB_POLICY_MAX + 1];
	const struct policy *p = NULL;

	if (!g->pset)
		return NULL;
	if (marktab_get_policy(g->marks, nft_mark_id(mark), name, sizeof(name)) == 0)
		p = policy_find(g->pset, name[0] ? name : NULL);
	/* A session whose policy a reload removed falls back to the default one. */
	return p ? p : policy_find(g->pset, NULL);
}

/* What the decision is told of the session's policy (g->lock held while it is used). */
static void view_of(struct gateway *g, const struct policy *p, const struct gw_pkg_hosts *pk,
		    struct gw_policy_view *v)
{
	memset(v, 0, sizeof(*v));
	v->enforce = g->cfg.enforce;
	v->pol = p;
	v->res = g->res;
	v->n_res = g->n_res;
	v->ttl_min_ms = g->cfg.dns_ttl_min_ms;
	v->ttl_max_ms = g->cfg.dns_ttl_max_ms;
	v->pkg = pk;
	v->binds = g->binds;
}

bool gw_decide(struct gateway *g, struct flow *f, const struct policy *p, bool early)
{
	struct gw_policy_view v;

	view_of(g, p, NULL, &v);
	return gw_flow_decide(&v, f, early, time_mono_ms());
}

/* The hooks' side: the gateway, the worker, the packet's session and its events. */
struct shell {
	struct gw_worker *w;
	const struct policy *pol;
	const char *sid;
	uint32_t mark;
	struct gw_evlist *l;
};

/* A query's every question name, as sent (qdcount != 1: `questions`, `qdcount`). */
static struct event *with_questions(struct event *e, const struct dns_msg *d)
{
	if (!e || !d)
		return e;
	event_uint(e, "qdcount", d->qdcount);
	event_array_begin(e, "questions");
	for (size_t i = 0; i < d->n_questions; i++)
		event_str(e, NULL, d->questions[i]);
	event_array_end(e);
	return e;
}

static void dns_record(struct shell *s, const struct gw_record *r)
{
	struct gateway *g = s->w->g;

	/* Past the session's budget a blocked query is counted into its summary
	 * (gateway/blocksum.c) instead of its own line. */
	if (!strcmp(r->status, "blocked") && gw_summarised_dns(g, r->mark_id, r->q, r->tcp))
		return;
	gw_evlist_push(s->l, with_questions(gw_ev_dns(g, r->q, r->ans, r->tcp ? "tcp" : "udp",
						      r->status, r->reason, r->now_ms,
						      r->flow, r->ans_bytes),
					    r->questions));
}

static void on_record(void *ctx, const struct gw_record *r)
{
	struct shell *s = ctx;
	struct gateway *g = s->w->g;

	switch (r->kind) {
	case GW_REC_CONNECT:
		/* A re-record (keep-alive): when blocked, under the session's budget like
		 * any blocked attempt (blocksum.c). */
		if (!gw_summarised_connect(g, r->flow))
			gw_evlist_push(s->l, gw_ev_connect(g, r->flow, -1));
		break;
	case GW_REC_DNS:
		dns_record(s, r);
		break;
	case GW_REC_BLOCKED:
		gw_blocked(g, r->mark_id, r->sid, r->reason, s->l);
		break;
	case GW_REC_AGAIN:
		gw_blocked_again(g, r->flow, r->pkt);
		break;
	}
}

static int on_answer(void *ctx, const struct gw_pkt *q, const uint8_t *ans, size_t len)
{
	struct shell *s = ctx;

	return gw_inject_dns(s->w, q, ans, len);
}

static bool on_own_answer(void *ctx, const struct dnspend_key *k)
{
	struct shell *s = ctx;

	return gw_synth_own(s->w->g, k);
}

static void add(atomic_uint_fast64_t *c, unsigned n)
{
	if (n)
		atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static void add_counts(struct gateway *g, const struct gw_counts *n)
{
	add(&g->st.flows_new, n->flows_new);
	add(&g->st.flows_untracked, n->flows_untracked);
	add(&g->st.syn_tuple_reused, n->syn_tuple_reused);
	add(&g->st.unparsable, n->unparsable);
	add(&g->st.truncated, n->truncated);
	add(&g->st.dns_queries, n->dns_queries);
	add(&g->st.dns_answers, n->dns_answers);
	add(&g->st.dns_malformed, n->dns_malformed);
	add(&g->st.dns_unanswered, n->dns_unanswered);
	add(&g->st.dns_synth, n->dns_synth);
	add(&g->st.blocked_dns, n->blocked_dns);
	add(&g->st.blocked_flows, n->blocked_flows);
	add(&g->st.would_block_flows, n->would_block_flows);
}

/* Runs under g->lock: the flow, the policy view, the decision. */
static void locked_part(struct gw_worker *w, struct gw_packet_in *in, struct gw_evlist *l,
			const struct gw_pkg_hosts *pk, struct gw_decision *out)
{
	struct gateway *g = w->g;
	struct shell s = { w, gw_policy_of(g, in->mark), in->sid, in->mark, l };
	struct gw_decide_hooks h = { &s, on_record, on_answer, on_own_answer };
	struct gw_flow_state fs = { .pend = g->pend, .msg = w->msg };
	struct gw_policy_view v;
	bool fresh;

	view_of(g, s.pol, pk, &v);
	in->now_ms = time_mono_ms();
	clock_gettime(CLOCK_REALTIME, &in->now_wall);
	fs.f = gw_flow_lookup(g->flows, &in->p, &fs.reply, &fresh);
	if (fresh) {
		fs.f->flow_id = ++g->flow_seq;
		gw_flow_start(fs.f, in, &v, out);
	}
	gw_decide_packet(in, &fs, &v, &h, out);
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
	    sockpid_inode(w->diagfd, p, &ino) != 0)
		return -1;
	/* w->holders is there: worker_setup fails without it, and only its worker calls. */
	if (sockpid_find_cached(w->holders, cg, ino, time_mono_ms(), &pid) != 0)
		return -1;
	return pid;
}

/* After the lock: net.connect of a flow decided by this packet, with its pid. */
static void connect_event(struct gw_worker *w, const struct gw_meta *m,
			  const struct gw_pkt *p, struct gw_decision *dc)
{
	int64_t pid = m->pid;

	if (!dc->decided)
		return;
	/* An exchange with a configured resolver: its net.dns lines carry the flow. */
	if (dc->flow.dns_resolver && dc->flow.verdict == NFT_MARK_ALLOW) {
		atomic_fetch_add_explicit(&w->g->st.dns_flows_folded, 1, memory_order_relaxed);
		return;
	}
	/* Past the session's budget a blocked attempt is counted into a summary
	 * (gateway/blocksum.c), without its own line (nor its pid lookup). */
	if (gw_summarised_connect(w->g, &dc->flow))
		return;
	/*
	 * Looked up before the verdict, while the flow waits for it: the socket is still
	 * there. After the verdict a short connection could be over first (tried on
	 * 2026-12-02: curl's 100 KiB download ended before the lookup, pid null), and a
	 * blocked one's process is the pid worth having. The per-worker cache keeps the
	 * walk off most lookups.
	 */
	if (pid < 0)
		pid = pid_of(w, m, p);
	gw_emit(w->g, gw_ev_connect(w->g, &dc->flow, pid));
	gw_lat_observe(w->g, time_mono_us() - m->t0_us);
}

void gw_handle(struct gw_worker *w, const struct gw_meta *m0, int *verdict, uint32_t *mark)
{
	struct gateway *g = w->g;
	struct gw_evlist l = { 0 };
	struct gw_meta mm = *m0, *m = &mm;
	struct gw_decision dec, *out = &dec;
	char sid[MARKTAB_ID_MAX + 1];
	struct gw_packet_in in = { .bytes = m->pay, .len = m->len, .mark = m->mark,
				   .sid = sid, .uid = m->uid, .csum_unready = m->csum_unready,
				   .truncated = m->truncated };
	struct gw_pkg_hosts pk;
	const struct gw_pkg_hosts *pkp = NULL;
	bool go;

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
	go = gw_decide_read(&in, g->cfg.enforce, out);
	if (go) {
		/* A query's sender, looked up before the lock (it reads /proc). */
		mm.pid = in.p.has_ports && in.p.dport == 53 ? pid_of(w, m, &in.p) : -1;
		/* An installer under `unapproved: block` runs in the session: whose flow. */
		if (!(in.p.has_ports && in.p.dport == 53) && g->cfg.enforce && gw_pkg_active(g, sid)) {
			mm.pid = pid_of(w, m, &in.p);
			if (gw_pkg_hosts_of(g, sid, mm.pid, &pk))
				pkp = &pk;
		}
		in.pid = mm.pid;
		pthread_mutex_lock(&g->lock);
		locked_part(w, &in, &l, pkp, out);
		pthread_mutex_unlock(&g->lock);
	}
	add_counts(g, &out->n);
	if (out->mangle_len && out->mangle_len <= sizeof(w->mangle)) {
		memcpy(w->mangle, out->mangle, out->mangle_len);
		w->mangle_len = out->mangle_len;
	}
	*verdict = out->verdict;
	*mark = out->mark;
	if (go)
		connect_event(w, m, &in.p, out);
	gw_evlist_flush(g, &l);
}
