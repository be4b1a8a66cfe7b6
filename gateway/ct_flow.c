/*
 * net.flow from conntrack: a destroy event ends a session flow (final: true); a periodic
 * dump reports flows older than gateway.flow_interim_interval (final: false) and finds
 * flows whose end event was lost. Byte and packet counts are conntrack's accounting:
 * original direction = out (the session opened it), reply = in.
 */
#include <arpa/inet.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

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

static void counter(struct event *e, const char *key, const struct nf_conntrack *ct,
		    enum nf_conntrack_attr a)
{
	if (nfct_attr_is_set(ct, a) > 0)
		event_uint(e, key, nfct_get_attr_u64(ct, a));
	else
		event_null(e, key);   /* accounting off: unknown, not zero */
}

static void duration(struct event *e, const struct nf_conntrack *ct, const struct flow *f,
		     bool final)
{
	uint64_t a, b;

	if (nfct_attr_is_set(ct, ATTR_TIMESTAMP_START) > 0 &&
	    nfct_attr_is_set(ct, ATTR_TIMESTAMP_STOP) > 0 && final) {
		a = nfct_get_attr_u64(ct, ATTR_TIMESTAMP_START);
		b = nfct_get_attr_u64(ct, ATTR_TIMESTAMP_STOP);
		event_uint(e, "duration_ms", b > a ? (b - a) / 1000000 : 0);
	} else if (f) {
		event_int(e, "duration_ms", time_mono_ms() - f->start_ms);
	} else {
		event_null(e, "duration_ms");
	}
}

static void names(struct event *e, const struct flow *f)
{
	event_str(e, "domain", f && f->domain[0] ? f->domain : NULL);
	event_str(e, "sni", f && f->sni[0] ? f->sni : NULL);
	event_str(e, "http_host", f && f->http_host[0] ? f->http_host : NULL);
}

struct event *gw_ev_flow(struct gateway *g, const struct nf_conntrack *ct,
			 const struct flow *f, bool final)
{
	char sid[MARKTAB_ID_MAX + 1] = "";
	uint32_t mark = nfct_get_attr_u32(ct, ATTR_MARK);
	struct flow_key k;
	struct event *e;

	if (f)
		snprintf(sid, sizeof(sid), "%s", f->sid);
	else if (marktab_get(g->marks, nft_mark_id(mark), sid, sizeof(sid)) != 0)
		sid[0] = '\0';
	e = event_new("net.flow", sid[0] ? sid : NULL, EVENT_SRC_GATEWAY);
	if (!e)
		return NULL;
	/* The packet path's id when it saw the flow start; else conntrack's own. */
	event_uint(e, "flow_id", f ? f->flow_id : nfct_get_attr_u32(ct, ATTR_ID));
	event_uint(e, "ct_id", nfct_get_attr_u32(ct, ATTR_ID));
	ct_key(ct, &k);
	endpoints(e, &k);
	names(e, f);
	counter(e, "bytes_out", ct, ATTR_ORIG_COUNTER_BYTES);
	counter(e, "bytes_in", ct, ATTR_REPL_COUNTER_BYTES);
	counter(e, "packets_out", ct, ATTR_ORIG_COUNTER_PACKETS);
	counter(e, "packets_in", ct, ATTR_REPL_COUNTER_PACKETS);
	duration(e, ct, f, final);
	event_bool(e, "final", final);
	event_str(e, "verdict", nft_mark_verdict(mark) == NFT_MARK_DENY ? "blocked" : "allowed");
	return e;
}

int gw_ct_on_destroy(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct gateway *g = data;
	struct flow_key k;
	struct event *e;
	struct flow *f;

	(void)type;
	if (!nft_mark_is_session(nfct_get_attr_u32(ct, ATTR_MARK)))
		return NFCT_CB_CONTINUE;   /* host traffic: never reported */
	ct_key(ct, &k);
	pthread_mutex_lock(&g->lock);
	f = flowtab_find(g->flows, &k);
	e = gw_ev_flow(g, ct, f, true);
	if (f)
		flowtab_del(g->flows, &k);
	pthread_mutex_unlock(&g->lock);
	atomic_fetch_add_explicit(&g->st.flows_ended, 1, memory_order_relaxed);
	gw_emit(g, e);
	return NFCT_CB_CONTINUE;
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
		f->gen = d->gen;
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

/* Flows not in the last dump: ended without a destroy event we read (or never began). */
static bool gone(struct flow *f, void *ctx)
{
	struct gw_dump *d = ctx;

	if (f->gen == d->gen || time_mono_ms() - f->start_ms < GW_CT_GRACE_MS)
		return false;
	/* It was in an earlier dump, so conntrack had it: its end was missed. */
	if (f->gen != 0)
		d->missed++;
	return true;
}

void gw_ct_sweep(struct gw_dump *d)
{
	pthread_mutex_lock(&d->g->lock);
	flowtab_sweep(d->g->flows, gone, d);
	pthread_mutex_unlock(&d->g->lock);
	if (d->missed)
		gw_ev_loss(d->g, "conntrack", (int64_t)d->missed,
			   "flow ended without a conntrack destroy event (net.flow missed)");
	d->missed = 0;
}
