/*
 * DNS on the packet path: every port-53 packet of a session, both directions, UDP and
 * TCP (reassembled per direction). A query is remembered until its answer; the answer
 * gives one net.dns event with the query's name, the rcode, the answers and the
 * latency, and binds the answer's addresses to the name for the session (TTL clamped to
 * gateway.dns_ttl_min..max). Pure (gateway/packet.h): the caller holds the tables
 * under its lock; records, the kernel bindings of an allowed answer and a synthesised
 * answer go through its hooks.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gw_int.h"
#include "gateway/packet.h"
#include "nft/nft.h"

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

/* One DNS message's context: the packet, its flow, the view, the hooks, the decision. */
struct dctx {
	const struct gw_packet_in *in;
	struct gw_flow_state *fs;
	const struct gw_policy_view *v;
	const struct gw_decide_hooks *h;
	struct gw_decision *out;
	bool tcp;
};

static void put(const struct dctx *c, struct gw_record *r)
{
	r->mark_id = nft_mark_id(c->in->mark);
	r->sid = c->in->sid;
	r->tcp = c->tcp;
	r->now_ms = c->in->now_ms;
	if (c->h && c->h->record)
		c->h->record(c->h->ctx, r);
}

/* A net.dns record of query q (answer ans or NULL; several questions: msg). */
static void put_dns(const struct dctx *c, const struct dnspend_entry *q,
		    const struct dns_msg *ans, const struct dns_msg *msg, const char *status,
		    const char *reason)
{
	struct gw_record r = { .kind = GW_REC_DNS, .q = q, .ans = ans, .status = status,
			       .reason = reason };

	r.questions = msg && msg->qdcount != 1 ? msg : NULL;
	put(c, &r);
}

static void entry_base(struct dnspend_entry *q, const struct dctx *c)
{
	memset(q, 0, sizeof(*q));
	snprintf(q->sid, sizeof(q->sid), "%s", c->in->sid);
	q->uid = c->in->uid;
	q->pid = c->in->pid;
	q->sent_ms = c->in->now_ms;
	q->sent_wall = c->in->now_wall;
	q->q_bytes = (uint32_t)c->in->len;
}

/*
 * Binds the answer's addresses to the name asked, for the session: under the caller's
 * lock and before the answer's verdict, so the connection that follows finds them (no
 * race).
 */
static void bind_answer(const struct dctx *c, const struct dns_msg *d)
{
	char name[DNSBIND_NAME_MAX];
	int64_t now = c->in->now_ms, ttl;

	if (d->rcode != DNS_RCODE_NOERROR || d->n_addrs == 0 ||
	    dns_name_normalize(d->qname, name, sizeof(name)) != 0)
		return;
	for (size_t i = 0; i < d->n_addrs; i++) {
		ttl = (int64_t)d->addrs[i].ttl * 1000;
		if (ttl < (int64_t)c->v->ttl_min_ms)
			ttl = (int64_t)c->v->ttl_min_ms;
		if (ttl > (int64_t)c->v->ttl_max_ms)
			ttl = (int64_t)c->v->ttl_max_ms;
		(void)dnsbind_add(c->v->binds, nft_mark_id(c->in->mark), d->addrs[i].family,
				  d->addrs[i].addr, name, now + ttl);
	}
}

/* What the policy says of query d; fills q's verdict fields. True: blocked now. */
static bool judge_query(const struct dctx *c, const struct dns_msg *d,
			struct dnspend_entry *q)
{
	struct policy_decision dec = { .verdict = POLICY_BLOCK, .reason = "invalid_name" };
	const struct gw_pkt *p = &c->in->p;
	char name[POLICY_NAME_MAX];
	bool report = policy_settings(c->v->pol)->mode == SG_MODE_REPORT;

	q->mode = report ? "report" : "enforce";
	if (!gw_view_resolver_ok(c->v, p->family, p->dst, p->dport)) {
		dec.reason = "resolver_not_allowed";
	} else if (d->qdcount != 1) {
		/* Each name would need its own verdict, and resolvers answer only one: refuse
		 * (REFUSED, as most resolvers do) and record every name. */
		dec.reason = "multiple_questions";
	} else if (dns_name_normalize(d->qname, name, sizeof(name)) == 0) {
		policy_decide_query(c->v->pol, name, &dec);
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

/* The answer the gateway gives itself to a blocked query. */
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
static enum gw_dns_act refuse(const struct dctx *c, const uint8_t *msg, size_t len,
			      struct dnspend_entry *q)
{
	uint8_t ans[512];
	size_t alen = 0;
	uint8_t rc;
	int r;

	if (!strcmp(q->reason, "resolver_not_allowed"))
		return GW_DNS_PASS;
	rc = blocked_rcode(c->v->pol, q->reason);
	snprintf(q->rcode, sizeof(q->rcode), "%s", dns_rcode_str(rc));
	if (c->tcp) {
		if (c->fs->f)
			c->fs->f->verdict = NFT_MARK_DENY;
		snprintf(q->rcode, sizeof(q->rcode), "%s", "");
		return GW_DNS_PASS;
	}
	r = dns_synth_answer(msg, len, rc, ans, sizeof(ans), &alen);
	if (r == 0 && alen <= sizeof(c->out->answer)) {
		memcpy(c->out->answer, ans, alen);
		c->out->answer_len = alen;
	}
	if (r == 0 && c->h && c->h->answer)
		r = c->h->answer(c->h->ctx, &c->in->p, ans, alen);
	if (r == 0)
		c->out->n.dns_synth++;
	else
		snprintf(q->rcode, sizeof(q->rcode), "%s", "");   /* dropped unanswered */
	return GW_DNS_DROP;
}

static enum gw_dns_act on_query(const struct dctx *c, const struct dns_msg *d,
				const uint8_t *msg, size_t len)
{
	struct gw_record blk = { .kind = GW_REC_BLOCKED };
	struct dnspend_entry q;
	enum gw_dns_act act;

	c->out->n.dns_queries++;
	entry_base(&q, c);
	key_of(&c->in->p, true, c->tcp, d->id, &q.key);
	snprintf(q.qname, sizeof(q.qname), "%s", d->qname);
	snprintf(q.qname_raw, sizeof(q.qname_raw), "%s", d->qname_raw);
	q.qtype = d->qtype;
	if (c->v->enforce && c->v->pol && judge_query(c, d, &q)) {
		c->out->n.blocked_dns++;
		act = refuse(c, msg, len, &q);
		blk.reason = q.reason;
		put(c, &blk);
		/* Past the session's budget the caller counts it into a summary instead. */
		put_dns(c, &q, NULL, d, "blocked", q.reason);
		return act;
	}
	if (d->qdcount != 1)   /* observed or would-block: every name is on record */
		put_dns(c, &q, NULL, d, "several_questions", q.reason ? q.reason : "no_policy");
	if (q.verdict && !strcmp(q.verdict, "would_block")) {
		blk.reason = q.reason;
		put(c, &blk);
	}
	/* A retransmission keeps the first send time; a full table is counted. */
	if (dnspend_add(c->fs->pend, &q) == -ENOSPC)
		c->out->n.dns_unanswered++;
	return GW_DNS_PASS;
}

/* The exchange's net.dns stands for its flow: an allowed UDP flow to a resolver. */
static bool folds(const struct dctx *c)
{
	const struct flow *f = c->fs->f;

	return f && f->dns_resolver && !c->tcp && f->decided && f->verdict == NFT_MARK_ALLOW;
}

/* The answered query's net.dns with its flow; the bytes go on the flow's account. */
static void answered_on_flow(const struct dctx *c, const struct dnspend_entry *q,
			     const struct dns_msg *d)
{
	struct flow *f = c->fs->f;
	struct gw_record r = { .kind = GW_REC_DNS, .q = q, .ans = d, .status = "answered",
			       .reason = "no_policy", .flow = f,
			       .ans_bytes = (uint32_t)c->in->len };

	f->dns_bytes[0] += q->q_bytes;
	f->dns_bytes[1] += r.ans_bytes;
	f->dns_pkts[0]++;
	f->dns_pkts[1]++;
	put(c, &r);
}

static void on_answer(const struct dctx *c, const struct dns_msg *d)
{
	struct dnspend_key k;
	struct dnspend_entry q;
	const char *status = "answered";

	c->out->n.dns_answers++;
	key_of(&c->in->p, false, c->tcp, d->id, &k);
	if (dnspend_take(c->fs->pend, &k, &q) != 0) {
		/* The gateway's own answer to a blocked query: recorded with the query. */
		if (c->h && c->h->own_answer && c->h->own_answer(c->h->ctx, &k))
			return;
		/* No query seen (a restart, or a spoofed answer): log what the answer says. */
		entry_base(&q, c);
		q.key = k;
		q.sent_ms = 0;
		q.uid = -1;
		q.pid = -1;
		snprintf(q.qname, sizeof(q.qname), "%s", d->qname);
		snprintf(q.qname_raw, sizeof(q.qname_raw), "%s", d->qname_raw);
		q.qtype = d->qtype;
		status = "unsolicited";
		/* Enforcing, an answer without its query binds nothing (it may be forged). */
		if (!c->v->enforce)
			bind_answer(c, d);
	} else {
		if (!q.verdict || strcmp(q.verdict, "blocked"))
			bind_answer(c, d);
		if (folds(c)) {
			answered_on_flow(c, &q, d);
			return;
		}
	}
	put_dns(c, &q, d, NULL, status, "no_policy");
}

static void on_malformed(const struct dctx *c)
{
	struct dnspend_entry q;
	bool query = c->in->p.dport == 53;

	c->out->n.dns_malformed++;
	entry_base(&q, c);
	key_of(&c->in->p, query, c->tcp, 0, &q.key);
	put_dns(c, &q, NULL, NULL, "malformed", "malformed");
}

static enum gw_dns_act dns_message(const struct dctx *c, const uint8_t *msg, size_t len)
{
	struct dns_msg *d = c->fs->msg;

	if (len == 0 || dns_parse(msg, len, d) != 0)
		on_malformed(c);
	else if (!d->qr)
		return on_query(c, d, msg, len);
	else
		on_answer(c, d);
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

static void dns_tcp_segment(const struct dctx *c)
{
	const struct gw_pkt *p = &c->in->p;
	struct flow *f = c->fs->f;
	int dir = p->dport == 53 ? 0 : 1, r;
	const uint8_t *msg;
	size_t len, need;

	if (!in_order(f, dir, p))
		return;
	if (!f->dtcp[dir] && !(f->dtcp[dir] = dns_tcp_new()))
		return;
	if (dns_tcp_feed(f->dtcp[dir], p->payload, p->payload_len) != 0) {
		/* More than DNS_TCP_BUF_MAX pending: abusive; stop following it. */
		on_malformed(c);
		dns_tcp_free(f->dtcp[dir]);
		f->dtcp[dir] = NULL;
		return;
	}
	while ((r = dns_tcp_next(f->dtcp[dir], &msg, &len, &need)) != 0) {
		if (r < 0)
			on_malformed(c);
		else
			(void)dns_message(c, msg, len);
	}
}

enum gw_dns_act gw_dns_packet(const struct gw_packet_in *in, struct gw_flow_state *fs,
			      const struct gw_policy_view *v, const struct gw_decide_hooks *h,
			      struct gw_decision *out)
{
	struct dctx c = { in, fs, v, h, out, in->p.proto == IPPROTO_TCP };

	if (in->p.proto == IPPROTO_UDP)
		return dns_message(&c, in->p.payload, in->p.payload_len);
	if (in->p.proto == IPPROTO_TCP && fs->f)
		dns_tcp_segment(&c);
	return GW_DNS_PASS;
}
