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

static void on_query(struct gateway *g, const struct gw_meta *m, const struct gw_pkt *p,
		     bool tcp, const struct dns_msg *d, const char *sid)
{
	struct dnspend_entry q;

	atomic_fetch_add_explicit(&g->st.dns_queries, 1, memory_order_relaxed);
	entry_base(&q, m, sid);
	key_of(p, true, tcp, d->id, &q.key);
	snprintf(q.qname, sizeof(q.qname), "%s", d->qname);
	q.qtype = d->qtype;
	/* A retransmission keeps the first send time; a full table is counted. */
	if (dnspend_add(g->pend, &q) == -ENOSPC)
		atomic_fetch_add_explicit(&g->st.dns_unanswered, 1, memory_order_relaxed);
}

static void on_answer(struct gateway *g, const struct gw_meta *m, const struct gw_pkt *p,
		      bool tcp, const struct dns_msg *d, const char *sid,
		      struct gw_evlist *l)
{
	struct dnspend_key k;
	struct dnspend_entry q;
	const char *status = "answered";

	atomic_fetch_add_explicit(&g->st.dns_answers, 1, memory_order_relaxed);
	key_of(p, false, tcp, d->id, &k);
	if (dnspend_take(g->pend, &k, &q) != 0) {
		/* No query seen (a restart, or a spoofed answer): log what the answer says. */
		entry_base(&q, m, sid);
		q.key = k;
		q.sent_ms = 0;
		q.uid = -1;
		q.pid = -1;
		snprintf(q.qname, sizeof(q.qname), "%s", d->qname);
		q.qtype = d->qtype;
		status = "unsolicited";
	}
	bind_answer(g, m->mark, d);
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

static void dns_message(struct gw_worker *w, const struct gw_meta *m,
			const struct gw_pkt *p, const uint8_t *msg, size_t len, bool tcp,
			const char *sid, struct gw_evlist *l)
{
	struct dns_msg *d = w->msg;

	if (len == 0 || dns_parse(msg, len, d) != 0)
		on_malformed(w->g, m, p, tcp, sid, l);
	else if (!d->qr)
		on_query(w->g, m, p, tcp, d, sid);
	else
		on_answer(w->g, m, p, tcp, d, sid, l);
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
			    struct gw_evlist *l)
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
			dns_message(w, m, p, msg, len, true, sid, l);
	}
}

void gw_dns_packet(struct gw_worker *w, const struct gw_meta *m, const struct gw_pkt *p,
		   struct flow *f, const char *sid, struct gw_evlist *l)
{
	if (p->proto == IPPROTO_UDP)
		dns_message(w, m, p, p->payload, p->payload_len, false, sid, l);
	else if (p->proto == IPPROTO_TCP && f)
		dns_tcp_segment(w, m, p, f, sid, l);
}
