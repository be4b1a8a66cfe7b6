/*
 * The packet decision as a pure function (docs/architecture.md "The packet's path"):
 * one queued packet's bytes, its flow's state (held by the caller), the session's
 * policy view and the clock in; the verdict, the mark, a replacement packet and the
 * records to journal out. No syscall, no global, no journal or queue call inside: what
 * has to reach the outside (a record, a synthesised DNS answer) goes through the
 * caller's hooks, called while the decision runs (a DNS record points into the
 * caller's scratch message, valid only during the call). gateway/handle.c is the shell
 * around it; tests/unit/test_gateway_replay.c replays recorded packets through it.
 */
#ifndef SANDGATE_GATEWAY_PACKET_H
#define SANDGATE_GATEWAY_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "dns/dns.h"
#include "gateway/dnsbind.h"
#include "gateway/dnspend.h"
#include "gateway/flowtab.h"
#include "gateway/pkt.h"

struct policy;
struct sg_resolver;
struct gw_pkg_hosts;

/* One queued packet and what the queue told about it. */
struct gw_packet_in {
	const uint8_t *bytes;         /* from the IP header on */
	size_t len;
	uint32_t mark;                /* the packet's mark: a session mark */
	const char *sid;              /* the session of the mark */
	int64_t uid, pid;             /* -1 unknown */
	bool csum_unready;            /* the kernel has yet to fill the checksum in (GSO) */
	bool truncated;               /* the queue gave only the first len bytes of it */
	int64_t now_ms;               /* the clock: monotonic ms ... */
	struct timespec now_wall;     /* ... and wall time, for records */
	struct gw_pkt p;              /* filled in by gw_decide_read */
};

/* What the session's policy says, and what it was told (the names its answers bound). */
struct gw_policy_view {
	bool enforce;                 /* false: observe only, everything allowed */
	const struct policy *pol;     /* the session's policy; NULL: none */
	const struct sg_resolver *res;   /* the configured resolvers */
	size_t n_res;
	uint64_t ttl_min_ms, ttl_max_ms; /* an answer's bindings last its TTL, clamped */
	const struct gw_pkg_hosts *pkg;  /* the sender is an installer under block: its
	                                  * approved hosts; NULL */
	struct dnsbind *binds;        /* names bound to addresses; allowed answers add */
};

/* The flow's state as the caller holds it, and the DNS state the decision updates. */
struct gw_flow_state {
	struct flow *f;               /* the packet's flow; NULL: none could be kept */
	bool reply;                   /* the packet is the flow's reply direction */
	struct dnspend *pend;         /* queries waiting for their answer */
	struct dns_msg *msg;          /* scratch (~19 KiB) for a DNS message */
};

enum gw_rec_kind {
	GW_REC_CONNECT,   /* a later net.connect of a decided flow (another Host, ...) */
	GW_REC_DNS,       /* a net.dns */
	GW_REC_BLOCKED,   /* a blocked (or would-block) attempt of the session: count it */
	GW_REC_AGAIN,     /* another attempt on a flow already blocked (a new SYN) */
};

/* One record; pointers are valid during the hook's call only. */
struct gw_record {
	enum gw_rec_kind kind;
	uint32_t mark_id;             /* the session's mark id */
	const char *sid;
	const struct flow *flow;      /* CONNECT, AGAIN; DNS: the flow it stands for */
	const struct gw_pkt *pkt;     /* AGAIN: the packet */
	const char *reason;           /* BLOCKED: why; DNS: the reason when q has none */
	/* DNS: the query (its verdict fields), the answer or NULL, the query message when
	 * it has several questions (every name goes on record) or NULL */
	const struct dnspend_entry *q;
	const struct dns_msg *ans;
	const struct dns_msg *questions;
	bool tcp;
	const char *status;           /* answered, unsolicited, blocked, malformed, ... */
	int64_t now_ms;
	/* DNS: the answer's packet (IP length), when the record is the flow's too
	 * (flow set: an allowed exchange with a configured resolver, flow->dns_resolver) */
	uint32_t ans_bytes;
};

/* The caller's side: where records go and how an answer is sent. */
struct gw_decide_hooks {
	void *ctx;
	void (*record)(void *ctx, const struct gw_record *r);
	/* Sends synthesised DNS answer ans to the sender of query packet q. 0 or -errno.
	 * NULL: the answer is only left in the decision's answer (taken as sent). */
	int (*answer)(void *ctx, const struct gw_pkt *q, const uint8_t *ans, size_t len);
	/* Whether an answer with key k, no query pending for it, is one answer sent (once). */
	bool (*own_answer)(void *ctx, const struct dnspend_key *k);
};

/* Counters the caller adds to its statistics. */
struct gw_counts {
	unsigned flows_new, flows_untracked, unparsable, syn_tuple_reused, truncated;
	unsigned dns_queries, dns_answers, dns_malformed, dns_unanswered, dns_synth;
	unsigned blocked_dns, blocked_flows, would_block_flows;
};

struct gw_decision {
	int verdict;                  /* NF_ACCEPT or NF_DROP */
	uint32_t mark;                /* the mark to set (the session mark, maybe a verdict) */
	uint8_t mangle[128];          /* the packet to send instead (a SYN without its Fast
	                               * Open data); mangle_len 0: none */
	size_t mangle_len;
	uint8_t answer[512];          /* the DNS answer synthesised for a blocked query (sent
	                               * through the answer hook; without one, the caller's
	                               * to send); answer_len 0: none */
	size_t answer_len;
	bool decided;                 /* this packet decided the flow: its net.connect */
	struct flow flow;             /* the flow as decided (no buffers) */
	struct gw_counts n;
};

/*
 * First step, before any state: parses in->bytes into in->p, refuses what cannot be
 * read (fragments when enforcing), takes a Fast Open SYN's data off (out->mangle).
 * Fills out (zeroed first: verdict NF_ACCEPT, mark in->mark). Returns true when the
 * packet goes on to gw_decide_packet, false when out's verdict is final.
 */
bool gw_decide_read(struct gw_packet_in *in, bool enforce, struct gw_decision *out);

/*
 * The flow of in->p in table t: found in either direction (*reply), or a new entry
 * (*fresh: fill it in with gw_flow_start). NULL when the table is full.
 */
struct flow *gw_flow_lookup(struct flowtab *t, const struct gw_pkt *p, bool *reply,
			    bool *fresh);

/* Fills new flow f (flow_id given by the caller) from packet in. */
void gw_flow_start(struct flow *f, const struct gw_packet_in *in,
		   const struct gw_policy_view *v, struct gw_decision *out);

/*
 * Second step: the decision on packet in (after gw_decide_read) of flow fs under view v.
 * Updates the flow, the bindings and the pending queries; records go to h->record as
 * they are made. out->verdict, out->mark; out->decided with out->flow when this packet
 * decided the flow (its net.connect is the caller's, with the pid it finds).
 */
void gw_decide_packet(const struct gw_packet_in *in, struct gw_flow_state *fs,
		      const struct gw_policy_view *v, const struct gw_decide_hooks *h,
		      struct gw_decision *out);

/*
 * The decision on flow f under v at now_ms (its names known, or before its first
 * payload: early): fills f->verdict, vstr, reason, rule, mode. True when decided
 * (early: only when nothing later could allow it).
 */
bool gw_flow_decide(const struct gw_policy_view *v, struct flow *f, bool early,
		    int64_t now_ms);

/* Whether server:port is one of v's resolvers. */
bool gw_view_resolver_ok(const struct gw_policy_view *v, int family, const uint8_t *addr,
			 uint16_t port);

/* ---- DNS (gateway/dnsh.c) ---- */
enum gw_dns_act { GW_DNS_PASS, GW_DNS_DROP };
/*
 * The DNS of one port-53 packet: UDP payload, or TCP segment fed to fs->f's reassembler
 * (fs->f NULL: TCP cannot be followed). Pairs answers with queries, binds allowed
 * answers' addresses, answers a blocked query itself (GW_DNS_DROP: the query goes no
 * further).
 */
enum gw_dns_act gw_dns_packet(const struct gw_packet_in *in, struct gw_flow_state *fs,
			      const struct gw_policy_view *v, const struct gw_decide_hooks *h,
			      struct gw_decision *out);

#endif
