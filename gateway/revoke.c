/*
 * gateway.revoke_on_reload: after a reload, every allowed flow is decided again under the
 * new policy (with the names it was decided on); one the new policy blocks gets the deny
 * verdict in its conntrack mark (ctnetlink update, from a short thread inside the
 * gateway's namespace), so its next packet in the original direction is rejected by the
 * kernel (TCP reset, ICMP) without being queued. One policy.revoke per flow.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "gateway/gw_int.h"
#include "journal/event.h"
#include "nft/nft.h"

struct revoked {
	struct flow_key k;
	uint32_t mark;
};

struct revoke_ctx {
	struct gateway *g;
	struct revoked *v;
	size_t n, cap;
	struct gw_evlist *l;
	int err;
};

static struct event *revoke_event(const struct flow *f)
{
	struct event *e = event_new("policy.revoke", f->sid[0] ? f->sid : NULL,
				    EVENT_SRC_GATEWAY);

	if (!e)
		return NULL;
	event_uint(e, "flow_id", f->flow_id);
	gw_ev_endpoint(e, "dst", f->family, f->dst, f->dport, f->has_ports);
	event_str(e, "sni", f->sni[0] ? f->sni : NULL);
	event_str(e, "http_host", f->http_host[0] ? f->http_host : NULL);
	event_str(e, "reason", f->reason);
	event_str(e, "rule", f->rule[0] ? f->rule : NULL);
	return e;
}

static bool redecide(struct flow *f, void *arg)
{
	struct revoke_ctx *c = arg;
	const struct policy *p;
	struct revoked *nv;

	if (!f->decided || f->verdict != NFT_MARK_ALLOW || f->is_dns)
		return false;
	p = gw_policy_of(c->g, nft_mark_make(f->mark_id));
	if (!p || !gw_decide(c->g, f, p, false) || f->verdict != NFT_MARK_DENY)
		return false;
	if (c->n == c->cap) {
		nv = realloc(c->v, (c->cap ? c->cap * 2 : 16) * sizeof(*nv));
		if (!nv) {
			c->err = -ENOMEM;
			return false;
		}
		c->v = nv;
		c->cap = c->cap ? c->cap * 2 : 16;
	}
	c->v[c->n].k = f->key;
	c->v[c->n].mark = nft_mark_with_verdict(nft_mark_make(f->mark_id), NFT_MARK_DENY);
	c->n++;
	gw_evlist_push(c->l, revoke_event(f));
	return false;
}

static void set_tuple(struct nf_conntrack *ct, const struct flow_key *k)
{
	nfct_set_attr_u8(ct, ATTR_L3PROTO, k->family);
	if (k->family == AF_INET) {
		nfct_set_attr(ct, ATTR_IPV4_SRC, k->src);
		nfct_set_attr(ct, ATTR_IPV4_DST, k->dst);
	} else {
		nfct_set_attr(ct, ATTR_IPV6_SRC, k->src);
		nfct_set_attr(ct, ATTR_IPV6_DST, k->dst);
	}
	nfct_set_attr_u8(ct, ATTR_L4PROTO, k->proto);
	nfct_set_attr_u16(ct, ATTR_PORT_SRC, htons(k->sport));
	nfct_set_attr_u16(ct, ATTR_PORT_DST, htons(k->dport));
}

/* In the namespace: the deny verdict into each flow's ct mark. */
static void *update_main(void *arg)
{
	struct revoke_ctx *c = arg;
	struct nfct_handle *h;
	struct nf_conntrack *ct;

	c->err = gw_enter_netns(c->g);
	if (c->err)
		return NULL;
	h = nfct_open(CONNTRACK, 0);
	if (!h) {
		c->err = -errno;
		return NULL;
	}
	for (size_t i = 0; i < c->n; i++) {
		ct = nfct_new();
		if (!ct) {
			c->err = -ENOMEM;
			break;
		}
		set_tuple(ct, &c->v[i].k);
		nfct_set_attr_u32(ct, ATTR_MARK, c->v[i].mark);
		/* A flow that ended meanwhile is not there any more: nothing to revoke. */
		if (nfct_query(h, NFCT_Q_UPDATE, ct) != 0 && errno != ENOENT)
			c->err = -errno;
		nfct_destroy(ct);
	}
	nfct_close(h);
	return NULL;
}

int gateway_revoke(struct gateway *g, size_t *n_revoked)
{
	struct gw_evlist l = { 0 };
	struct revoke_ctx c = { .g = g, .l = &l };
	pthread_t th;
	int r;

	pthread_mutex_lock(&g->lock);
	flowtab_sweep(g->flows, redecide, &c);
	pthread_mutex_unlock(&g->lock);
	gw_evlist_flush(g, &l);
	*n_revoked = c.n;
	if (c.n > 0) {
		r = pthread_create(&th, NULL, update_main, &c);
		if (r)
			c.err = -r;
		else
			pthread_join(th, NULL);
	}
	free(c.v);
	return c.err;
}
