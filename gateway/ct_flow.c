/*
 * net.flow from conntrack: a TCP flow's close (gateway/ct_close.c) or a destroy event
 * ends a session flow (final: true); a periodic
 * dump reports flows older than gateway.flow_interim_interval (final: false) and finds
 * flows whose end event was lost. Byte and packet counts are conntrack's accounting:
 * original direction = out (the session opened it), reply = in.
 */
#include <arpa/inet.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/ct_int.h"
#include "journal/event.h"
#include "nft/nft.h"

/* The original tuple of ct as a flow key (what the packet path keyed the flow by). */
static void ct_key(const struct nf_conntrack *ct, struct flow_key *k)
{
	size_t al;

	memset(k, 0, sizeof(*k));
	k->family = nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO);
	k->proto = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	al = k->family == AF_INET ? 4 : 16;
	memcpy(k->src, nfct_get_attr(ct, al == 4 ? ATTR_ORIG_IPV4_SRC : ATTR_ORIG_IPV6_SRC), al);
	memcpy(k->dst, nfct_get_attr(ct, al == 4 ? ATTR_ORIG_IPV4_DST : ATTR_ORIG_IPV6_DST), al);
	if (k->proto == IPPROTO_TCP || k->proto == IPPROTO_UDP) {
		k->sport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC));
		k->dport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST));
	}
}

static void endpoints(struct event *e, const struct flow_key *k)
{
	bool ports = k->proto == IPPROTO_TCP || k->proto == IPPROTO_UDP;

	event_str(e, "proto", gw_proto_name(k->proto));
	gw_ev_endpoint(e, "src", k->family, k->src, k->sport, ports);
	gw_ev_endpoint(e, "dst", k->family, k->dst, k->dport, ports);
}

/* What net.flow says about conntrack's entry: from a destroy event or dump, or from
 * what the last dump told us of a flow whose end was missed. */
struct ct_snap {
	struct flow_key k;
	uint32_t id, mark;
	bool acct;
	uint64_t bytes[2], pkts[2];       /* [0] original (out), [1] reply (in) */
	int64_t duration_ms;              /* -1 unknown */
	int64_t start_ns;                 /* conntrack's start timestamp (wall), 0 unknown */
	bool missed;
};

static uint64_t attr64(const struct nf_conntrack *ct, enum nf_conntrack_attr a, bool *set)
{
	if (nfct_attr_is_set(ct, a) <= 0) {
		*set = false;
		return 0;
	}
	return nfct_get_attr_u64(ct, a);
}

static void snap_of_ct(const struct nf_conntrack *ct, const struct flow *f, bool final,
		       struct ct_snap *s)
{
	bool ts = true, ts_a = true;
	uint64_t a, b;
	struct timespec now;

	memset(s, 0, sizeof(*s));
	ct_key(ct, &s->k);
	s->id = nfct_get_attr_u32(ct, ATTR_ID);
	s->mark = nfct_get_attr_u32(ct, ATTR_MARK);
	s->acct = true;
	s->bytes[0] = attr64(ct, ATTR_ORIG_COUNTER_BYTES, &s->acct);
	s->bytes[1] = attr64(ct, ATTR_REPL_COUNTER_BYTES, &s->acct);
	s->pkts[0] = attr64(ct, ATTR_ORIG_COUNTER_PACKETS, &s->acct);
	s->pkts[1] = attr64(ct, ATTR_REPL_COUNTER_PACKETS, &s->acct);
	a = attr64(ct, ATTR_TIMESTAMP_START, &ts_a);
	b = attr64(ct, ATTR_TIMESTAMP_STOP, &ts);
	s->start_ns = ts_a ? (int64_t)a : 0;
	clock_gettime(CLOCK_REALTIME, &now);
	if (ts && ts_a && final)
		s->duration_ms = b > a ? (int64_t)((b - a) / 1000000) : 0;
	else if (ts_a && final)   /* at a close the entry lives on: until now */
		s->duration_ms = ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec - (int64_t)a) /
				 1000000;
	else
		s->duration_ms = f ? time_mono_ms() - f->start_ms : -1;
}

/* A flow whose end was missed: the counts and time of the last dump that listed it. */
static void snap_of_flow(const struct flow *f, struct ct_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->k = f->key;
	s->id = f->ct_id;
	s->mark = f->ct_mark;
	s->acct = f->ct_acct;
	memcpy(s->bytes, f->ct_bytes, sizeof(s->bytes));
	memcpy(s->pkts, f->ct_pkts, sizeof(s->pkts));
	s->duration_ms = f->ct_seen_ms - f->start_ms;
	s->missed = true;
}

static void counter(struct event *e, const char *key, const struct ct_snap *s, uint64_t v)
{
	if (s->acct)
		event_uint(e, key, v);
	else
		event_null(e, key);   /* accounting off: unknown, not zero */
}

static void names(struct event *e, const struct flow *f)
{
	event_str(e, "domain", f && f->domain[0] ? f->domain : NULL);
	event_str(e, "sni", f && f->sni[0] ? f->sni : NULL);
	event_str(e, "http_host", f && f->http_host[0] ? f->http_host : NULL);
}

static struct event *ev_flow(struct gateway *g, const struct ct_snap *s, const struct flow *f,
			     bool final)
{
	char sid[MARKTAB_ID_MAX + 1] = "";
	struct event *e;

	/* A flow the packet path never saw belongs to the session that held its mark when
	 * it began: not to a later holder of a reused mark (none known: null). */
	if (f)
		snprintf(sid, sizeof(sid), "%s", f->sid);
	else if (marktab_get_at(g->marks, nft_mark_id(s->mark), s->start_ns, sid,
				sizeof(sid)) != 0)
		sid[0] = '\0';
	e = event_new("net.flow", sid[0] ? sid : NULL, EVENT_SRC_GATEWAY);
	if (!e)
		return NULL;
	/* The packet path's id when it saw the flow start; else conntrack's own. */
	event_uint(e, "flow_id", f ? f->flow_id : s->id);
	event_uint(e, "ct_id", s->id);
	endpoints(e, &s->k);
	names(e, f);
	counter(e, "bytes_out", s, s->bytes[0]);
	counter(e, "bytes_in", s, s->bytes[1]);
	counter(e, "packets_out", s, s->pkts[0]);
	counter(e, "packets_in", s, s->pkts[1]);
	if (s->duration_ms >= 0)
		event_int(e, "duration_ms", s->duration_ms);
	else
		event_null(e, "duration_ms");
	event_bool(e, "final", final);
	event_bool(e, "missed_end", s->missed);
	event_str(e, "verdict", nft_mark_verdict(s->mark) == NFT_MARK_DENY ? "blocked" : "allowed");
	return e;
}

struct event *gw_ev_flow(struct gateway *g, const struct nf_conntrack *ct,
			 const struct flow *f, bool final)
{
	struct ct_snap s;

	snap_of_ct(ct, f, final, &s);
	return ev_flow(g, &s, f, final);
}

/* Whether ct began after this gateway did (its timestamp says; none: it cannot tell). */
static bool started_here(const struct gateway *g, const struct nf_conntrack *ct)
{
	bool set = true;
	uint64_t t = attr64(ct, ATTR_TIMESTAMP_START, &set);

	return set && t >= g->start_wall_ns;
}

/*
 * A flow that never reached a worker (its SYN not queued or not decided: rejected in the
 * kernel, lost from a full queue, or given up before its first bytes). Rebuilt from conntrack in tmp, which then stands for
 * it. Only an undecided TCP flow that began after this gateway (an older entry was an
 * earlier daemon's to record) of a session still known.
 */
static struct flow *unseen_flow(struct gateway *g, const struct nf_conntrack *ct,
				const struct flow_key *k, struct flow *tmp)
{
	uint32_t mark = nfct_get_attr_u32(ct, ATTR_MARK);
	bool set = true;
	uint64_t t0;

	if (k->proto != IPPROTO_TCP || k->dport == 53 || !started_here(g, ct))
		return NULL;
	memset(tmp, 0, sizeof(*tmp));
	t0 = attr64(ct, ATTR_TIMESTAMP_START, &set);
	if (marktab_get_at(g->marks, nft_mark_id(mark), set ? (int64_t)t0 : 0, tmp->sid,
			   sizeof(tmp->sid)) != 0)
		return NULL;
	tmp->key = *k;
	tmp->flow_id = ++g->flow_seq;
	tmp->mark_id = nft_mark_id(mark);
	tmp->family = k->family;
	tmp->proto = k->proto;
	memcpy(tmp->src, k->src, sizeof(tmp->src));
	memcpy(tmp->dst, k->dst, sizeof(tmp->dst));
	tmp->sport = k->sport;
	tmp->dport = k->dport;
	tmp->has_ports = true;
	tmp->start_wall.tv_sec = (time_t)(t0 / 1000000000u);
	tmp->start_wall.tv_nsec = (long)(t0 % 1000000000u);
	tmp->uid = -1;
	if (dnsbind_lookup(g->binds, tmp->mark_id, k->family, k->dst, time_mono_ms(),
			   tmp->domain, sizeof(tmp->domain)) != 0)
		tmp->domain[0] = '\0';
	return tmp;
}

/*
 * Every new flow has its net.connect (docs/gateway.md "Events"; an allowed exchange with
 * a configured resolver has its net.dns lines instead). One that ends before
 * any packet of it was given a decision (no bytes came) gets it at its end, decided on
 * what it showed, with `late: true`. True when f is such a flow; *out its event (NULL:
 * not built, counted by gw_emit). A blocked one past its session's budget is counted in
 * net.blocked_summary instead: false. Under g->lock.
 */
static bool decide_at_end(struct gateway *g, struct flow *f, uint32_t mark, struct event **out)
{
	*out = NULL;
	if (!f || f->decided || f->is_dns)
		return false;
	if (!f->parse)
		f->parse = "no_data";
	f->late = true;
	(void)gw_decide(g, f, gw_policy_of(g, mark), false);
	/* Under its session's flood limit the flow's first bytes may have been rejected
	 * in the kernel (nft/nft_flood.c) before any worker read them: "allowed, no data"
	 * would be a guess, so it is recorded as what stopped it. */
	if (g->cfg.enforce && f->verdict == NFT_MARK_ALLOW && gw_flood_engaged(g, f->mark_id)) {
		f->verdict = NFT_MARK_DENY;
		f->vstr = "blocked";
		f->reason = "flood_limit";
	}
	f->decided = true;
	atomic_fetch_add_explicit(&g->st.late_connects, 1, memory_order_relaxed);
	if (gw_summarised_connect(g, f))
		return false;
	*out = gw_ev_connect(g, f, -1);
	return true;
}

/* decide_at_end for a destroyed entry: the flow the worker saw, else one it never saw. */
static bool late_connect(struct gateway *g, const struct nf_conntrack *ct,
			 const struct flow_key *k, struct flow **f, struct flow *tmp,
			 struct event **out)
{
	uint32_t mark = nfct_get_attr_u32(ct, ATTR_MARK);

	*out = NULL;
	if (nft_mark_verdict(mark) != 0)
		return false;   /* decided by a worker: recorded then */
	if (!*f)
		*f = unseen_flow(g, ct, k, tmp);
	return decide_at_end(g, *f, mark, out);
}

/*
 * A resolver exchange whose net.dns lines stand for it (gateway/flowtab.h dns_resolver):
 * true when conntrack counted exactly what they carry, so its net.flow would repeat them.
 * Anything more (an unanswered query, a retransmission, accounting off) and the flow
 * gets its net.flow with conntrack's counts, as any other.
 */
static bool on_record_already(struct gateway *g, const struct nf_conntrack *ct,
			      const struct flow *f)
{
	struct ct_snap s;

	if (!f || !f->dns_resolver || !f->decided || f->verdict != NFT_MARK_ALLOW)
		return false;
	snap_of_ct(ct, f, true, &s);
	if (s.acct && s.bytes[0] == f->dns_bytes[0] && s.bytes[1] == f->dns_bytes[1] &&
	    s.pkts[0] == f->dns_pkts[0] && s.pkts[1] == f->dns_pkts[1])
		return true;
	atomic_fetch_add_explicit(&g->st.dns_flows_extra, 1, memory_order_relaxed);
	return false;
}

void gw_ct_finish(struct gateway *g, const struct nf_conntrack *ct)
{
	struct event *c, *e;
	struct flow_key k;
	struct flow *f, tmp;
	bool late;

	ct_key(ct, &k);
	pthread_mutex_lock(&g->lock);
	f = flowtab_find(g->flows, &k);
	late = late_connect(g, ct, &k, &f, &tmp, &c);
	e = on_record_already(g, ct, f) ? NULL : gw_ev_flow(g, ct, f, true);
	if (f && f != &tmp)
		flowtab_del(g->flows, &k);
	pthread_mutex_unlock(&g->lock);
	atomic_fetch_add_explicit(&g->st.flows_ended, 1, memory_order_relaxed);
	if (late)
		gw_emit(g, c);
	if (e)
		gw_emit(g, e);
}

void gw_ct_key(const struct nf_conntrack *ct, struct flow_key *k)
{
	ct_key(ct, k);
}

/*
 * A flow denied at its first packet (a SYN or datagram the kernel then rejected) never
 * got a conntrack entry: no event will end it. Forgotten after GW_CT_DENIED_MS, not after
 * the sweep's grace, so a flood of blocked attempts does not fill the table.
 */
static bool denied_early(struct flow *f, void *ctx)
{
	const int64_t *now = ctx;

	return f->decided && f->verdict == NFT_MARK_DENY && f->npkts == 1 && !f->is_dns &&
	       f->gen == 0 && *now - f->start_ms >= GW_CT_DENIED_MS;
}

void gw_ct_sweep_denied(struct gateway *g)
{
	int64_t now = time_mono_ms();

	pthread_mutex_lock(&g->lock);
	flowtab_sweep(g->flows, denied_early, &now);
	pthread_mutex_unlock(&g->lock);
}

/* What a dump says of f: alive in generation gen, with these counts. */
static void remember(struct flow *f, const struct nf_conntrack *ct, unsigned gen, int64_t now)
{
	bool acct = true;

	f->gen = gen;
	f->ct_seen_ms = now;
	f->ct_id = nfct_get_attr_u32(ct, ATTR_ID);
	f->ct_mark = nfct_get_attr_u32(ct, ATTR_MARK);
	f->ct_bytes[0] = attr64(ct, ATTR_ORIG_COUNTER_BYTES, &acct);
	f->ct_bytes[1] = attr64(ct, ATTR_REPL_COUNTER_BYTES, &acct);
	f->ct_pkts[0] = attr64(ct, ATTR_ORIG_COUNTER_PACKETS, &acct);
	f->ct_pkts[1] = attr64(ct, ATTR_REPL_COUNTER_PACKETS, &acct);
	f->ct_acct = acct;
}

/* A flow seen in a dump: mark it alive; report it when its interim report is due. */
int gw_ct_on_dump(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct gw_dump *d = data;
	struct gateway *g = d->g;
	int64_t now = time_mono_ms();
	struct flow_key k;
	struct event *e = NULL;
	struct flow *f;

	(void)type;
	if (!nft_mark_is_session(nfct_get_attr_u32(ct, ATTR_MARK)))
		return NFCT_CB_CONTINUE;
	ct_key(ct, &k);
	pthread_mutex_lock(&g->lock);
	f = flowtab_find(g->flows, &k);
	if (f) {
		remember(f, ct, d->gen, now);
		if (now - f->last_report_ms >= (int64_t)g->cfg.flow_interim_ms) {
			f->last_report_ms = now;
			e = gw_ev_flow(g, ct, f, false);
		}
	}
	pthread_mutex_unlock(&g->lock);
	if (e)
		gw_emit(g, e);
	return NFCT_CB_CONTINUE;
}

static void keep_event(struct gw_dump *d, struct event *e)
{
	struct event **n;

	if (!e)
		return;
	if (d->n_ev == d->cap_ev) {
		n = realloc(d->ev, (d->cap_ev ? d->cap_ev * 2 : 64) * sizeof(*n));
		if (!n) {
			event_free(e);
			atomic_fetch_add_explicit(&d->g->st.emit_failed, 1, memory_order_relaxed);
			return;
		}
		d->ev = n;
		d->cap_ev = d->cap_ev ? d->cap_ev * 2 : 64;
	}
	d->ev[d->n_ev++] = e;
}

/*
 * Flows not in the last dump. Listed by an earlier one: conntrack had it and it is gone,
 * but no destroy event of it was read (the events were drained just before the sweep):
 * its end was missed. Never listed: not confirmed yet, or ended before any dump; dropped
 * silently once older than the grace.
 */
static bool gone(struct flow *f, void *ctx)
{
	struct gw_dump *d = ctx;
	struct event *c;
	struct ct_snap s;

	if (f->gen == d->gen)
		return false;
	if (f->gen == 0)
		return time_mono_ms() - f->start_ms >= GW_CT_GRACE_MS;
	d->missed++;
	if (decide_at_end(d->g, f, f->ct_mark, &c) && !c)
		atomic_fetch_add_explicit(&d->g->st.emit_failed, 1, memory_order_relaxed);
	keep_event(d, c);
	/* Its destroy event may still come (read after this sweep): nothing more then. */
	gw_ctev_recorded(d->cev, f->ct_id, &f->key);
	snap_of_flow(f, &s);
	keep_event(d, ev_flow(d->g, &s, f, true));
	return true;
}

void gw_ct_sweep(struct gw_dump *d)
{
	pthread_mutex_lock(&d->g->lock);
	flowtab_sweep(d->g->flows, gone, d);
	pthread_mutex_unlock(&d->g->lock);
	atomic_fetch_add_explicit(&d->g->st.flows_ended, d->missed, memory_order_relaxed);
	for (size_t i = 0; i < d->n_ev; i++)
		gw_emit(d->g, d->ev[i]);
	d->n_ev = 0;
	if (d->missed)
		gw_ev_loss(d->g, "conntrack", (int64_t)d->missed,
			   "flow ended without a conntrack destroy event read (net.flow from the last dump)");
	d->missed = 0;
}
