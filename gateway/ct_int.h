/* Shared by gateway/ct.c (the conntrack thread) and gateway/ct_flow.c (net.flow). */
#ifndef SANDGATE_GATEWAY_CT_INT_H
#define SANDGATE_GATEWAY_CT_INT_H

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "gateway/gw_int.h"

#define GW_CT_TICK_MS 250
#define GW_CT_GRACE_MS 30000   /* a flow younger than this is never swept */
#define GW_CT_DENIED_MS 1000   /* a flow denied at its first packet is kept this long */

struct gw_ctev;
struct gw_dump {
	struct gateway *g;
	struct gw_ctev *cev;          /* a missed end's late destroy event writes nothing */
	unsigned gen;
	size_t missed;
	struct event **ev;            /* net.flow of missed ends, emitted after the sweep */
	size_t n_ev, cap_ev;
};

/* net.flow for ct (f: what the packet path knew of it, or NULL). NULL without memory. */
struct event *gw_ev_flow(struct gateway *g, const struct nf_conntrack *ct,
			 const struct flow *f, bool final);
/*
 * The end of session flow ct (destroyed, or a TCP flow closed): the late net.connect of
 * a flow never decided, the final net.flow with ct's counts, the flow forgotten.
 */
void gw_ct_finish(struct gateway *g, const struct nf_conntrack *ct);
/* The original tuple of ct as a flow key. */
void gw_ct_key(const struct nf_conntrack *ct, struct flow_key *k);
/* Forgets the flows denied at their first packet (never in conntrack), once old enough. */
void gw_ct_sweep_denied(struct gateway *g);
/* nfct dump callback: data is the struct gw_dump. */
int gw_ct_on_dump(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data);

/*
 * TCP flows recorded at their close (gateway/ct_close.c): a state update to TIME_WAIT or
 * CLOSE (FIN/RST seen both ways) reads the entry's counters and writes the final
 * net.flow then, not when conntrack forgets the entry (TIME_WAIT: 120 s by default). The
 * entry is remembered (id and tuple) until its destroy event, which then writes nothing.
 */
struct gw_ctclosed;
struct gw_ctev {
	struct gateway *g;
	struct nfct_handle *get;      /* reads one entry (its counters at the close) */
	struct nf_conntrack *got;     /* what the read found */
	bool found;
	struct gw_ctclosed *closed;
	int64_t next_expire_ms;
};
/* 0 or -errno; gw_ctev_fini accepts a zeroed or half-made one. */
int gw_ctev_init(struct gw_ctev *c, struct gateway *g);
void gw_ctev_fini(struct gw_ctev *c);
/* nfct event callback (destroy and update events): data is the struct gw_ctev. */
int gw_ct_on_event(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data);
/* Remembers entry id with tuple k as recorded (its late destroy event writes nothing). */
void gw_ctev_recorded(struct gw_ctev *c, uint32_t id, const struct flow_key *k);
/* Forgets closed entries older than any TIME_WAIT/CLOSE timeout (from the tick). */
void gw_ctev_expire(struct gw_ctev *c);
/*
 * After a dump (and after the destroy events queued meanwhile were read): drops the
 * flows it did not list. One that an earlier dump listed ended without a destroy event
 * we read: it gets its final net.flow from that dump's counts (missed_end: true), and
 * the count goes to sensor.loss. One never listed is dropped after GW_CT_GRACE_MS.
 */
void gw_ct_sweep(struct gw_dump *d);

#endif
