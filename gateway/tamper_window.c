/*
 * After the daemon undid a change of the gateway's table (daemon/tamper_glue.c): the
 * session flows that began while the table was not ours. Their first packets passed
 * unqueued, so no worker saw them and no decision was recorded; left alone, such a flow
 * would be decided only at its end (`late`), and its records would read net.connect
 * blocked next to a net.flow allowed with the bytes of the window. Instead each one gets
 * the deny verdict in its ct mark now (its next packet is rejected in the kernel, as a
 * revoked flow's), so its net.flow says blocked, and it is listed in the gateway.tamper
 * event with the bytes that went out during the window: the record of what leaked.
 *
 * Which flows: conntrack entries of the gateway's namespace with a session mark and no
 * verdict, TCP or UDP and not DNS, that conntrack timestamped within [from, to] (from is
 * at most this gateway's start), that the packet path does not know (a flow the worker
 * is deciding right now is its own) and whose destination no DNS answer bound to the
 * session. With the table intact such a flow cannot exist: its SYN would have been
 * queued.
 * Flows that began while the whole table was gone carry no session mark and are not
 * found here: after the restore their next packet is classified and queued.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "common/timeutil.h"
#include "gateway/ct_int.h"
#include "gateway/dnsbind.h"
#include "gateway/gw_int.h"
#include "journal/event.h"
#include "nft/nft.h"

#define WINDOW_LIST_MAX 16    /* flows named in the event; the rest counted */
#define WINDOW_SCAN_MAX 4096  /* flows denied in one pass */

struct wflow {
	struct flow_key k;
	uint32_t mark;
	uint64_t bytes, pkts;
};

struct wctx {
	struct gateway *g;
	uint64_t from_ns, to_ns;
	struct wflow *v;
	size_t n;
	int err;
};

static int on_entry(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct wctx *c = data;
	uint32_t mark = nfct_get_attr_u32(ct, ATTR_MARK);
	uint8_t proto = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	uint64_t t0;
	struct wflow *w;

	(void)type;
	if (!nft_mark_is_session(mark) || nft_mark_verdict(mark) != NFT_MARK_UNDECIDED ||
	    (proto != IPPROTO_TCP && proto != IPPROTO_UDP) || c->n == WINDOW_SCAN_MAX ||
	    !nfct_attr_is_set(ct, ATTR_TIMESTAMP_START))
		return NFCT_CB_CONTINUE;
	t0 = nfct_get_attr_u64(ct, ATTR_TIMESTAMP_START);
	if (t0 < c->from_ns || t0 > c->to_ns)
		return NFCT_CB_CONTINUE;
	w = &c->v[c->n];
	gw_ct_key(ct, &w->k);
	if (w->k.sport == 53 || w->k.dport == 53)
		return NFCT_CB_CONTINUE;
	w->mark = mark;
	w->bytes = nfct_get_attr_u64(ct, ATTR_ORIG_COUNTER_BYTES);
	w->pkts = nfct_get_attr_u64(ct, ATTR_ORIG_COUNTER_PACKETS);
	c->n++;
	return NFCT_CB_CONTINUE;
}

static void set_tuple(struct nf_conntrack *ct, const struct flow_key *k)
{
	nfct_set_attr_u8(ct, ATTR_L3PROTO, k->family);
	nfct_set_attr(ct, k->family == AF_INET ? ATTR_IPV4_SRC : ATTR_IPV6_SRC, k->src);
	nfct_set_attr(ct, k->family == AF_INET ? ATTR_IPV4_DST : ATTR_IPV6_DST, k->dst);
	nfct_set_attr_u8(ct, ATTR_L4PROTO, k->proto);
	nfct_set_attr_u16(ct, ATTR_PORT_SRC, htons(k->sport));
	nfct_set_attr_u16(ct, ATTR_PORT_DST, htons(k->dport));
}

/*
 * The packet path's own flows are not the window's, nor flows to an address a DNS answer
 * bound to the session: their SYN passes in the kernel anyway (the bound-address sets)
 * and their first bytes are queued and decided after the restore. The rest stay in c->v.
 */
static void drop_known(struct wctx *c)
{
	int64_t now = time_mono_ms();
	char name[256];
	size_t j = 0;

	pthread_mutex_lock(&c->g->lock);
	for (size_t i = 0; i < c->n; i++) {
		const struct wflow *w = &c->v[i];

		if (flowtab_find(c->g->flows, &w->k) ||
		    dnsbind_lookup(c->g->binds, nft_mark_id(w->mark), w->k.family, w->k.dst, now,
				   name, sizeof(name)) == 0)
			continue;
		c->v[j++] = *w;
	}
	pthread_mutex_unlock(&c->g->lock);
	c->n = j;
}

static void deny_all(struct wctx *c, struct nfct_handle *h)
{
	for (size_t i = 0; i < c->n && c->err == 0; i++) {
		struct nf_conntrack *ct = nfct_new();

		if (!ct) {
			c->err = -ENOMEM;
			break;
		}
		set_tuple(ct, &c->v[i].k);
		nfct_set_attr_u32(ct, ATTR_MARK, nft_mark_with_verdict(c->v[i].mark, NFT_MARK_DENY));
		/* Ended meanwhile: nothing left to stop. */
		if (nfct_query(h, NFCT_Q_UPDATE, ct) != 0 && errno != ENOENT)
			c->err = -errno;
		nfct_destroy(ct);
	}
}

/* In the gateway's namespace: list the window's flows, then deny them. */
static void *window_main(void *arg)
{
	struct wctx *c = arg;
	uint32_t family = AF_UNSPEC;
	struct nfct_handle *h;

	c->err = gw_enter_netns(c->g);
	if (c->err)
		return NULL;
	h = nfct_open(CONNTRACK, 0);
	if (!h) {
		c->err = -errno;
		return NULL;
	}
	nfct_callback_register(h, NFCT_T_ALL, on_entry, c);
	if (nfct_query(h, NFCT_Q_DUMP, &family) != 0)
		c->err = -errno;
	nfct_callback_unregister(h);
	if (c->err == 0) {
		drop_known(c);
		deny_all(c, h);
	}
	nfct_close(h);
	return NULL;
}

static void list_flows(struct gateway *g, struct event *e, const struct wctx *c)
{
	char sid[MARKTAB_ID_MAX + 1];

	event_array_begin(e, "window_flows");
	for (size_t i = 0; i < c->n && i < WINDOW_LIST_MAX; i++) {
		const struct wflow *w = &c->v[i];

		if (marktab_get(g->marks, nft_mark_id(w->mark), sid, sizeof(sid)) != 0)
			sid[0] = '\0';
		event_object_begin(e, NULL);
		event_str(e, "session", sid[0] ? sid : NULL);
		event_str(e, "proto", gw_proto_name(w->k.proto));
		gw_ev_endpoint(e, "src", w->k.family, w->k.src, w->k.sport, true);
		gw_ev_endpoint(e, "dst", w->k.family, w->k.dst, w->k.dport, true);
		event_uint(e, "bytes_out", w->bytes);
		event_uint(e, "packets_out", w->pkts);
		event_str(e, "verdict", "blocked");
		event_object_end(e);
	}
	event_array_end(e);
	event_uint(e, "window_flows_total", c->n);
}

int gateway_tamper_window(struct gateway *g, uint64_t from_ns, uint64_t to_ns, struct event *e)
{
	struct wctx c = { .g = g, .to_ns = to_ns };
	pthread_t th;
	int r;

	if (!g)
		return 0;
	/* An entry older than this gateway was an earlier daemon's to record. */
	c.from_ns = from_ns > g->start_wall_ns ? from_ns : g->start_wall_ns;
	c.v = calloc(WINDOW_SCAN_MAX, sizeof(*c.v));
	if (!c.v)
		return -ENOMEM;
	r = pthread_create(&th, NULL, window_main, &c);
	if (r)
		c.err = -r;
	else
		pthread_join(th, NULL);
	if (e)
		list_flows(g, e, &c);
	free(c.v);
	return c.err;
}
