/* Shared by gateway/ct.c (the conntrack thread) and gateway/ct_flow.c (net.flow). */
#ifndef SANDGATE_GATEWAY_CT_INT_H
#define SANDGATE_GATEWAY_CT_INT_H

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "gateway/gw_int.h"

#define GW_CT_TICK_MS 250
#define GW_CT_GRACE_MS 30000   /* a flow younger than this is never swept */

struct gw_dump {
	struct gateway *g;
	unsigned gen;
	size_t missed;
	struct event **ev;            /* net.flow of missed ends, emitted after the sweep */
	size_t n_ev, cap_ev;
};

/* net.flow for ct (f: what the packet path knew of it, or NULL). NULL without memory. */
struct event *gw_ev_flow(struct gateway *g, const struct nf_conntrack *ct,
			 const struct flow *f, bool final);
/* nfct callbacks: data is the gateway / the struct gw_dump. */
int gw_ct_on_destroy(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data);
int gw_ct_on_dump(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data);
/*
 * After a dump (and after the destroy events queued meanwhile were read): drops the
 * flows it did not list. One that an earlier dump listed ended without a destroy event
 * we read: it gets its final net.flow from that dump's counts (missed_end: true), and
 * the count goes to sensor.loss. One never listed is dropped after GW_CT_GRACE_MS.
 */
void gw_ct_sweep(struct gw_dump *d);

#endif
