/*
 * DNS on the packet path: every port-53 packet of a session, both directions, UDP and
 * TCP (reassembled per direction). A query is remembered until its answer; the answer
 * gives one net.dns event with the query's name, the rcode, the answers and the
 * latency, and binds the answer's addresses to the name for the session (TTL clamped to
 * gateway.dns_ttl_min..max). Runs with g->lock held; events are emitted after it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/gw_int.h"
#include "journal/event.h"
#include "nft/nft.h"

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

/* The query's key as the client sees it; from an answer, the addresses are swapped. */
static void key_of(const struct gw_pkt *p, bool query, bool tcp, uint16_t id,
		   struct dnspend_key *k)
{
	size_t al = p->family == AF_INET ? 4 : 16;

	memset(k, 0, sizeof(*k));
	k->family = p->family;
	k->tcp = tcp;
	k->dns_id = id;
	memcpy(k->client, query ? p->src : p->dst, al);
	memcpy(k->server, query ? p->dst : p->src, al);
	k->cport = query ? p->sport : p->dport;
	k->sport = query ? p->dport : p->sport;
}

static void entry_base(struct dnspend_entry *q, const struct gw_meta *m, const char *sid)
{
	memset(q, 0, sizeof(*q));
	snprintf(q->sid, sizeof(q->sid), "%s", sid);
	q->uid = m->uid;
	q->pid = m->pid;
	q->sent_ms = time_mono_ms();
	clock_gettime(CLOCK_REALTIME, &q->sent_wall);
}

/*
 * Binds the answer's addresses to the name asked, for the session: under g->lock and
 * before the answer's verdict, so the connection that follows finds them (no race).
 */
static void bind_answer(struct gateway *g, uint32_t mark, const struct dns_msg *d)
{
	char name[DNSBIND_NAME_MAX];
	int64_t now = time_mono_ms(), ttl;

	if (d->rcode != DNS_RCODE_NOERROR || d->n_addrs == 0 ||
	    dns_name_normalize(d->qname, name, sizeof(name)) != 0)
		return;
	for (size_t i = 0; i < d->n_addrs; i++) {
		ttl = (int64_t)d->addrs[i].ttl * 1000;
		if (ttl < (int64_t)g->cfg.dns_ttl_min_ms)
			ttl = (int64_t)g->cfg.dns_ttl_min_ms;
		if (ttl > (int64_t)g->cfg.dns_ttl_max_ms)
			ttl = (int64_t)g->cfg.dns_ttl_max_ms;
		(void)dnsbind_add(g->binds, nft_mark_id(mark), d->addrs[i].family,
				  d->addrs[i].addr, name, now + ttl);
	}
}

/* What the policy says of query d; fills q's verdict fields. True: blocked now. */
static bool judge_query(struct gateway *g, const struct gw_pkt *p, const struct dns_msg *d,
			const struct policy *pol, struct dnspend_entry *q)
{
	struct policy_decision dec = { .verdict = POLICY_BLOCK, .reason = "invalid_name" };
	char name[POLICY_NAME_MAX];
	bool report = policy_settings(pol)->mode == SG_MODE_REPORT;

	q->mode = report ? "report" : "enforce";
	if (!gw_resolver_ok(g, p->family, p->dst, p->dport)) {
		dec.reason = "resolver_not_allowed";
	} else if (d->qdcount != 1) {
		/* Each name would need its own verdict, and resolvers answer only one: refuse
		 * (REFUSED, as most resolvers do) and record every name. */
		dec.reason = "multiple_questions";
	} else if (dns_name_normalize(d->qname, name, sizeof(name)) == 0) {
		policy_decide_query(pol, name, &dec);
		snprintf(q->rule, sizeof(q->rule), "%s", dec.rule);
	}
	q->reason = dec.reason;
	if (dec.verdict == POLICY_ALLOW) {
		q->verdict = "allowed";
		return false;
	}
	q->verdict = report ? "would_block" : "blocked";
	return !report;
}

/* The answer the gateway gives itself to a blocked query; "" when none is sent. */
static uint8_t blocked_rcode(const struct policy *pol, const char *reason)
{
	if (!strcmp(reason, "canary_domain"))
		return DNS_RCODE_NXDOMAIN;
	if (!strcmp(reason, "multiple_questions"))
		return DNS_RCODE_REFUSED;
	return policy_settings(pol)->dns_blocked_answer == SG_DNS_NXDOMAIN ? DNS_RCODE_NXDOMAIN
									    : DNS_RCODE_REFUSED;
}

/*
 * A blocked query is answered at once by the gateway (UDP: a synthesised answer sent to
 * the client, the query dropped; TCP: the connection is reset, as injecting into a TCP
 * stream is not done). A query to a resolver not configured is not answered: its flow is
 * rejected by the kernel (ICMP or reset).
 */
static enum gw_dns_act refuse(struct gw_worker *w, const struct gw_pkt *p, bool tcp,
			      struct flow *f, const uint8_t *msg, size_t len,
			      const struct policy *pol, struct dnspend_entry *q)
{
	uint8_t ans[512];
	size_t alen = 0;
	uint8_t rc;
	int r;

	if (!strcmp(q->reason, "resolver_not_allowed"))
		return GW_DNS_PASS;
	rc = blocked_rcode(pol, q->reason);
	snprintf(q->rcode, sizeof(q->rcode), "%s", dns_rcode_str(rc));
	if (tcp) {
		if (f)
			f->verdict = NFT_MARK_DENY;
		snprintf(q->rcode, sizeof(q->rcode), "%s", "");
		return GW_DNS_PASS;
	}
	r = dns_synth_answer(msg, len, rc, ans, sizeof(ans), &alen);
	if (r == 0)
		r = gw_inject_dns(w, p, ans, alen);
	if (r == 0)
		atomic_fetch_add_explicit(&w->g->st.dns_synth, 1, memory_order_relaxed);
	else
		snprintf(q->rcode, sizeof(q->rcode), "%s", "");   /* dropped unanswered */
	return GW_DNS_DROP;
}

/* A query's every question name, as sent (qdcount != 1: `questions`, `qdcount`). */
static struct event *with_questions(struct event *e, const struct dns_msg *d)
{
	if (!e || d->qdcount == 1)
		return e;
	event_uint(e, "qdcount", d->qdcount);
	event_array_begin(e, "questions");
	for (size_t i = 0; i < d->n_questions; i++)
		event_str(e, NULL, d->questions[i]);
	event_array_end(e);
	return e;
}

static enum gw_dns_act on_query(struct gw_worker *w, const struct gw_meta *m,
				const struct gw_pkt *p, bool tcp, const struct dns_msg *d,
				const uint8_t *msg, size_t len, struct flow *f, const char *sid,
				const struct policy *pol, struct gw_evlist *l)
{
	struct gateway *g = w->g;
	struct dnspend_entry q;
	enum gw_dns_act act;

	atomic_fetch_add_explicit(&g->st.dns_queries, 1, memory_order_relaxed);
	entry_base(&q, m, sid);
	key_of(p, true, tcp, d->id, &q.key);
	snprintf(q.qname, sizeof(q.qname), "%s", d->qname);
	snprintf(q.qname_raw, sizeof(q.qname_raw), "%s", d->qname_raw);
	q.qtype = d->qtype;
	if (g->cfg.enforce && pol && judge_query(g, p, d, pol, &q)) {
		atomic_fetch_add_explicit(&g->st.blocked_dns, 1, memory_order_relaxed);
		act = refuse(w, p, tcp, f, msg, len, pol, &q);
		gw_blocked(g, nft_mark_id(m->mark), sid, q.reason, l);
		if (gw_summarised_dns(g, nft_mark_id(m->mark), &q, tcp))
			return act;   /* past the session's budget: in its net.blocked_summary */
		gw_evlist_push(l, with_questions(gw_ev_dns(&q, NULL, tcp ? "tcp" : "udp", "blocked",
							   q.reason, time_mono_ms()), d));
		return act;
	}
	if (d->qdcount != 1)   /* observed or would-block: every name is on record */
		gw_evlist_push(l, with_questions(gw_ev_dns(&q, NULL, tcp ? "tcp" : "udp",
							   "several_questions",
							   q.reason ? q.reason : "no_policy",
							   time_mono_ms()), d));
	if (q.verdict && !strcmp(q.verdict, "would_block"))
		gw_blocked(g, nft_mark_id(m->mark), sid, q.reason, l);
	/* A retransmission keeps the first send time; a full table is counted. */
	if (dnspend_add(g->pend, &q) == -ENOSPC)
		atomic_fetch_add_explicit(&g->st.dns_unanswered, 1, memory_order_relaxed);
	return GW_DNS_PASS;
}

static void on_answer(struct gateway *g, const struct gw_meta *m, const struct gw_pkt *p,
		      bool tcp, const struct dns_msg *d, const char *sid, struct gw_evlist *l)
{
	struct dnspend_key k;
	struct dnspend_entry q;
	const char *status = "answered";

	atomic_fetch_add_explicit(&g->st.dns_answers, 1, memory_order_relaxed);
	key_of(p, false, tcp, d->id, &k);
	if (dnspend_take(g->pend, &k, &q) != 0) {
		/* The gateway's own answer to a blocked query: recorded with the query. */
		if (gw_synth_own(g, &k))
			return;
		/* No query seen (a restart, or a spoofed answer): log what the answer says. */
		entry_base(&q, m, sid);
		q.key = k;
		q.sent_ms = 0;
		q.uid = -1;
		q.pid = -1;
		snprintf(q.qname, sizeof(q.qname), "%s", d->qname);
		snprintf(q.qname_raw, sizeof(q.qname_raw), "%s", d->qname_raw);
		q.qtype = d->qtype;
		status = "unsolicited";
		/* Enforcing, an answer without its query binds nothing (it may be forged). */
		if (!g->cfg.enforce)
			bind_answer(g, m->mark, d);
	} else if (!q.verdict || strcmp(q.verdict, "blocked")) {
		bind_answer(g, m->mark, d);
	}
	gw_evlist_push(l, gw_ev_dns(&q, d, tcp ? "tcp" : "udp", status, "no_policy",
				    time_mono_ms()));
}

static void on_malformed(struct gateway *g, const struct gw_meta *m,
			 const struct gw_pkt *p, bool tcp, const char *sid,
			 struct gw_evlist *l)
{
	struct dnspend_entry q;
	bool query = p->dport == 53;

	atomic_fetch_add_explicit(&g->st.dns_malformed, 1, memory_order_relaxed);
	entry_base(&q, m, sid);
	key_of(p, query, tcp, 0, &q.key);
	gw_evlist_push(l, gw_ev_dns(&q, NULL, tcp ? "tcp" : "udp", "malformed", "malformed",
				    time_mono_ms()));
}

static enum gw_dns_act dns_message(struct gw_worker *w, const struct gw_meta *m,
				   const struct gw_pkt *p, const uint8_t *msg, size_t len,
				   bool tcp, struct flow *f, const char *sid,
				   const struct policy *pol, struct gw_evlist *l)
{
	struct dns_msg *d = w->msg;

	if (len == 0 || dns_parse(msg, len, d) != 0)
		on_malformed(w->g, m, p, tcp, sid, l);
	else if (!d->qr)
		return on_query(w, m, p, tcp, d, msg, len, f, sid, pol, l);
	else
		on_answer(w->g, m, p, tcp, d, sid, l);
	return GW_DNS_PASS;
}

/* Next expected sequence number of direction dir; false: this segment is not it. */
static bool in_order(struct flow *f, int dir, const struct gw_pkt *p)
{
	if (p->tcp_flags & PKT_TCP_SYN) {
		f->nseq[dir] = p->seq + 1;
		f->nseq_set[dir] = true;
		return false;
	}
	if (p->payload_len == 0)
		return false;
	if (!f->nseq_set[dir]) {
		f->nseq[dir] = p->seq;
		f->nseq_set[dir] = true;
	}
	/* Retransmissions and segments after a gap are not fed: no bytes twice. */
	if (p->seq != f->nseq[dir])
		return false;
	f->nseq[dir] += (uint32_t)p->payload_len;
	return true;
}

static void dns_tcp_segment(struct gw_worker *w, const struct gw_meta *m,
			    const struct gw_pkt *p, struct flow *f, const char *sid,
			    const struct policy *pol, struct gw_evlist *l)
{
	int dir = p->dport == 53 ? 0 : 1, r;
	const uint8_t *msg;
	size_t len, need;

	if (!in_order(f, dir, p))
		return;
	if (!f->dtcp[dir] && !(f->dtcp[dir] = dns_tcp_new()))
		return;
	if (dns_tcp_feed(f->dtcp[dir], p->payload, p->payload_len) != 0) {
		/* More than DNS_TCP_BUF_MAX pending: abusive; stop following it. */
		on_malformed(w->g, m, p, true, sid, l);
		dns_tcp_free(f->dtcp[dir]);
		f->dtcp[dir] = NULL;
		return;
	}
	while ((r = dns_tcp_next(f->dtcp[dir], &msg, &len, &need)) != 0) {
		if (r < 0)
			on_malformed(w->g, m, p, true, sid, l);
		else
			(void)dns_message(w, m, p, msg, len, true, f, sid, pol, l);
	}
}

enum gw_dns_act gw_dns_packet(struct gw_worker *w, const struct gw_meta *m,
			      const struct gw_pkt *p, struct flow *f, const char *sid,
			      const struct policy *pol, struct gw_evlist *l)
{
	if (p->proto == IPPROTO_UDP)
		return dns_message(w, m, p, p->payload, p->payload_len, false, f, sid, pol, l);
	if (p->proto == IPPROTO_TCP && f)
		dns_tcp_segment(w, m, p, f, sid, pol, l);
	return GW_DNS_PASS;
}
