/* Internals shared by the gateway's files (gateway/gateway.h is the public side). */
#ifndef SANDGATE_GATEWAY_GW_INT_H
#define SANDGATE_GATEWAY_GW_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/dns.h"
#include "common/thread.h"
#include "common/timeutil.h"
#include "gateway/dnsbind.h"
#include "gateway/dnspend.h"
#include "gateway/flowtab.h"
#include "gateway/gateway.h"
#include "gateway/marktab.h"
#include "gateway/pkt.h"
#include "policy/policy.h"

#define GW_FLOWS_MAX 262144
#define GW_BINDS_MAX 262144
#define GW_PENDING_MAX 65536
#define GW_DECIDE_PKTS 8          /* queued packets of a flow before deciding without names */
#define GW_LAT_BUCKETS 8

/* Counters for /metrics and sensor.loss; relaxed atomics, written by every thread. */
struct gw_stats {
	atomic_uint_fast64_t packets, verdicts_accept, verdicts_drop, batches;
	atomic_uint_fast64_t flows_new, flows_ended, flows_untracked, syn_tuple_reused;
	atomic_uint_fast64_t dns_queries, dns_answers, dns_unanswered, dns_malformed;
	atomic_uint_fast64_t malformed, unknown_session, unparsable, truncated;
	atomic_uint_fast64_t queue_dropped, user_dropped, ct_overruns, emit_failed;
	atomic_uint_fast64_t ct_update_overruns;   /* close updates lost: recorded at destroy */
	atomic_uint_fast64_t lat[GW_LAT_BUCKETS + 1];   /* decision latency histogram */
	atomic_uint_fast64_t lat_sum_us;
	atomic_uint_fast64_t blocked_flows, would_block_flows, blocked_dns, dns_synth,
		violations;
	atomic_uint_fast64_t late_connects;   /* net.connect written at the flow's end */
	atomic_uint_fast64_t blocked_summarised;   /* blocked attempts folded into summaries */
	atomic_uint_fast64_t flows_closed;    /* final net.flow at a TCP close (FIN/RST) */
	atomic_uint_fast64_t flood_limits;    /* sessions given a flood limit (flood.c) */
	atomic_uint_fast64_t flood_rejected;  /* attempts the kernel's flood limit rejected */
	atomic_uint_fast64_t dns_flows_folded;   /* resolver flows recorded by net.dns alone */
	atomic_uint_fast64_t dns_flows_extra;    /* ... whose net.flow came too: counted more */
};

/* Blocked attempts of one session (gateway/blocks.c), under g->lock. */
#define GW_VIOL_MAX 64
struct gw_blocks;
int gw_blocks_new(struct gw_blocks **out);
void gw_blocks_free(struct gw_blocks *b);
/*
 * Counts one blocked attempt of mark id at now_ms; true when it is the one that takes
 * the session past burst attempts within window_ms (once per window).
 */
bool gw_blocks_hit(struct gw_blocks *b, uint32_t id, const char *sid, int64_t now_ms,
		   unsigned burst, int64_t window_ms);
void gw_blocks_forget(struct gw_blocks *b, uint32_t id);
/* Writes sandgate_gateway_session_blocked_total{session="..."} lines. */
void gw_blocks_metrics(struct gw_blocks *b, FILE *out);

/*
 * The priority of a thread the packet path waits for (nfq.c): a queue worker, or the
 * conntrack thread, which holds g->lock (flow ends, sweeps) and the flood lock (the
 * flood tick). Set by the thread at start, then under the flood lock.
 */
struct gw_prio {
	_Atomic pid_t tid;            /* 0 until the thread has set its start priority */
	unsigned nice_now;            /* the N of the nice -N set last */
	int nice_base;                /* its nice at start: what N = 0 puts back */
	bool rt_now;                  /* SCHED_RR (flood_worker_realtime) set last */
	bool rt_failed;               /* refused (no CAP_SYS_NICE, no RT budget): nice only */
};

struct gw_worker {
	struct gateway *g;
	unsigned idx;
	uint16_t qnum;
	struct sg_thread *t;          /* common/thread.h */
	int err;                      /* what stopped the loop: the thread's error */
	struct mnl_socket *nl;
	unsigned portid;
	uint8_t *rbuf, *sbuf;
	size_t slen;                  /* verdict bytes batched in sbuf */
	struct dns_msg *msg;          /* ~19 KiB scratch, one per worker */
	int diagfd;                   /* sock_diag socket in the namespace, -1: no pids */
	int raw4, raw6;               /* raw sockets for synthesised DNS answers, -1: not open */
	int start_err;
	struct gw_prio prio;
	/* A replacement packet for the verdict being given (a SYN without its Fast Open
	 * data, gateway/handle.c); mangle_len 0: none. */
	uint8_t mangle[128];
	size_t mangle_len;
	struct sockpid_cache *holders;   /* recent socket holders (gateway/sockpid.h) */
};


struct gateway {
	struct gw_config cfg;
	char *netns;                  /* owned copy of cfg.netns */
	int nsfd;                     /* the namespace to enter, -1: stay */
	struct marktab *marks;
	pthread_mutex_t lock;         /* flows, binds, pend */
	struct flowtab *flows;
	struct dnsbind *binds;
	struct dnspend *pend;
	struct gw_worker *w;
	unsigned nw;
	struct sg_thread *ct_t;       /* the conntrack thread (common/thread.h) */
	struct gw_prio ct_prio;       /* its priority: the workers' (nfq.c) */
	int ct_start_err;
	pthread_mutex_t start_lock;   /* threads report their start here */
	pthread_cond_t start_cond;
	unsigned started;             /* threads that finished starting (ok or not) */
	uint64_t flow_seq;            /* last flow_id given (under lock); seeded from the clock */
	uint64_t start_wall_ns;       /* when this gateway was made: older conntrack entries
	                               * were another daemon's to record */
	uint64_t qdrop_last[2][64];   /* nfnetlink_queue drop counters seen last */
	/* Policy, under lock (a reload swaps them). */
	struct policy_set *pset;
	struct sg_resolver res[CONFIG_MAX_RESOLVERS];
	size_t n_res;
	struct geo_db *geo;           /* read-only after start */
	struct gw_blocks *blocks;
	char viol[GW_VIOL_MAX][MARKTAB_ID_MAX + 1];   /* sessions to terminate */
	unsigned n_viol;
	int viol_fd;                  /* eventfd: a violation waits */
	struct nft_handle *nft;       /* nft socket (kbind.c), under the flood lock; NULL: off */
	struct gw_stats st;
	struct gw_blocksum *bsum;     /* blocked attempts past the budget (blocksum.c) */
	struct gw_synth *synth;       /* answers synthesised lately (dnssynth.c), under lock */
	pthread_rwlock_t pkg_lock;    /* pkg: read by the packet threads (pkgguard.c) */
	struct gw_pkg_guard pkg;      /* the package tracker's hooks; zeroed: none */
	struct gw_flood *flood;       /* kernel flood limits (flood.c); its lock guards nft */
	atomic_uint flood_on;         /* sessions with a flood limit on: the workers' priority */
};

/* What one queued packet told us, besides its bytes. */
struct gw_meta {
	uint32_t id;                  /* packet id for the verdict */
	uint32_t mark;
	int64_t pid;                  /* -1 unknown (set by gw_handle for DNS queries) */
	int64_t uid;                  /* -1 unknown */
	const uint8_t *pay;
	size_t len;
	int64_t t0_us;                /* monotonic, when received */
	const struct gw_pkg_hosts *pkg;   /* the sender is an installer under block; NULL */
	bool csum_unready;            /* NFQA_SKB_INFO: checksum to be filled in, or GSO */
	bool truncated;               /* NFQA_CAP_LEN: the packet is longer than len */
};

/* ---- `unapproved: block` (gateway/pkgguard.c) ---- */
/* The approved hosts of the installer run a flow's process belongs to. */
struct gw_pkg_hosts {
	size_t n;
	char host[GW_PKG_HOSTS_MAX][GW_PKG_HOST_MAX];
};
/* Cheap: whether session sid has an installer run under block (a guard is set). */
bool gw_pkg_active(struct gateway *g, const char *sid);
/* Whether pid of session sid is in such a run's tree; *out its approved hosts. */
bool gw_pkg_hosts_of(struct gateway *g, const char *sid, int64_t pid,
		     struct gw_pkg_hosts *out);
/* Tells the tracker what a flow or query of pid named (gateway/events.c). */
void gw_pkg_seen(struct gateway *g, const char *sid, int64_t pid, const char *const *names,
		 size_t n);
struct policy_flow;
/*
 * Whether flow f (pf: what the policy was asked with) goes to none of pk's hosts: its
 * SNI and Host, when present, must each be one; without them, its address or a name
 * bound to it. early (no payload yet): only when no name could make it one (names
 * are bound to the address, none of them and not the address is an approved host).
 */
bool gw_pkg_refused(const struct gw_pkg_hosts *pk, const struct flow *f,
		    const struct policy_flow *pf, bool early);

/* ---- threads (gateway/gateway.c) ---- */
/* Enters the gateway's namespace (this thread only). 0 or -errno. */
int gw_enter_netns(struct gateway *g);
/* A thread reports it started (err 0) or failed. */
void gw_started(struct gateway *g, int *slot, int err);
/* The flow key of packet p's own direction. */
void gw_pkt_key(const struct gw_pkt *p, struct flow_key *k);

/* ---- NFQUEUE worker (gateway/nfq.c) ---- */
int gw_worker_main(struct sg_thread *t, void *arg);

/* ---- the packet path: the shell (gateway/handle.c) around the pure decision
 * (gateway/packet.h: packet.c, dnsh.c, flow_verdict.c) ---- */
/* Decides the verdict of one packet: *verdict NF_ACCEPT/NF_DROP, *mark the mark to set. */
void gw_handle(struct gw_worker *w, const struct gw_meta *m, int *verdict, uint32_t *mark);
/* Events built under the gateway lock, emitted after it is released. */
struct gw_evlist {
	struct event **v;
	size_t n, cap;
	size_t lost;                  /* could not be kept (out of memory) */
};
void gw_evlist_push(struct gw_evlist *l, struct event *e);
/* Emits every event of l (and a sensor.loss for the lost ones), then frees the list. */
void gw_evlist_flush(struct gateway *g, struct gw_evlist *l);
/* The policy of the session of mark (default when unknown); NULL only without a set. */
const struct policy *gw_policy_of(struct gateway *g, uint32_t mark);
/*
 * The decision on flow f (its names known, or the first packet: early true) under
 * policy p, with g->lock held: fills f->verdict, f->pverdict, f->reason, f->rule,
 * f->mode (gw_flow_decide with the gateway's view). Returns true when decided (early: only when nothing later could allow it).
 */
bool gw_decide(struct gateway *g, struct flow *f, const struct policy *p, bool early);
/* Policy state at gateway_new / gateway_free (gateway/gwpolicy.c). 0 or -errno. */
int gw_policy_init(struct gateway *g);
void gw_policy_fini(struct gateway *g);
/* Counts a blocked attempt of f's session; may emit policy.violation (onto l). */
void gw_blocked(struct gateway *g, uint32_t mark_id, const char *sid, const char *reason,
		struct gw_evlist *l);
/* Sends a synthesised DNS answer (dns bytes ans) to the query packet's sender. 0 or -errno. */
int gw_inject_dns(struct gw_worker *w, const struct gw_pkt *q, const uint8_t *ans,
		  size_t alen);

/* ---- the gateway's nft socket (gateway/kbind.c); calls under the flood lock ---- */
struct nft_handle;
/* Opens g->nft in the gateway's namespace; on failure logs and leaves it NULL. */
void gw_kbind_open(struct gateway *g);
void gw_kbind_close(struct gateway *g);

/* ---- events (gateway/events.c) ---- */
struct event;
/* {ip, port} object under key; port null when has_port is false. */
void gw_ev_endpoint(struct event *e, const char *key, int family, const uint8_t *addr,
		    uint16_t port, bool has_port);
/* Emits e, counting a failure. */
void gw_emit(struct gateway *g, struct event *e);
/* net.connect for f at its decision; pid -1: null. */
struct event *gw_ev_connect(struct gateway *g, const struct flow *f, int64_t pid);
/* net.dns for an answered/unanswered/malformed query. */
/* reason: when q->reason is NULL (no policy said anything). f: the flow this exchange
 * stands for (an allowed UDP exchange with a configured resolver: `flow` with the
 * query's bytes and ans_bytes), or NULL. */
struct event *gw_ev_dns(struct gateway *g, const struct dnspend_entry *q,
			const struct dns_msg *ans,
			const char *transport, const char *status, const char *reason,
			int64_t now_ms, const struct flow *f, uint32_t ans_bytes);
/* sensor.loss */
void gw_ev_loss(struct gateway *g, const char *sensor, int64_t lost, const char *why);

/* ---- blocked attempts past the session's budget (gateway/blocksum.c) ---- */
struct gw_blocksum;
/* budget: blocked attempts per second a session writes on their own lines (0: all);
 * interval_ms: how often summaries are written (0: 5 s). 0 or -ENOMEM. */
int gw_blocksum_new(unsigned budget, uint64_t interval_ms, struct gw_blocksum **out);
void gw_blocksum_free(struct gw_blocksum *s);
/*
 * Whether the net.connect of f (blocked: for any other verdict false) is left out
 * because its session is past its budget: the attempt is then counted into the
 * session's next net.blocked_summary. Call instead of writing it when true.
 */
bool gw_summarised_connect(struct gateway *g, const struct flow *f);
/* The same for the net.dns of blocked query q of session mark_id. */
bool gw_summarised_dns(struct gateway *g, uint32_t mark_id, const struct dnspend_entry *q,
		       bool tcp);
/*
 * A new attempt on flow f, already blocked: packet p is a SYN again on its tuple (a
 * reused source port) or another datagram. Counted into the session's summary (the
 * flow's first attempt had its own line); other packets and verdicts are not attempts.
 */
void gw_blocked_again(struct gateway *g, const struct flow *f, const struct gw_pkt *p);
/* Writes the summaries when the interval is over (force: now). */
void gw_blocksum_flush(struct gateway *g, bool force);
/* Writes session mark_id's summaries now and forgets its budget (at unbind). */
void gw_blocksum_forget(struct gateway *g, uint32_t mark_id);

/* Every started queue worker, and the conntrack thread, to the nice the flood limits
 * call for (nfq.c; called under the flood lock). */
void gw_workers_renice(struct gateway *g);
/* The calling thread's start priority, recorded in p (nfq.c): the workers' own. */
void gw_prio_start(struct gateway *g, struct gw_prio *p);

/* ---- the flood limit in the kernel (gateway/flood.c) ---- */
struct gw_flood;
/* rate: packets/second a limited session may send to the queue (0: never limit). */
int gw_flood_new(uint32_t rate, struct gw_flood **out);
void gw_flood_free(struct gw_flood *fl);
/* Session id (sid) is past its blocked budget: limit it in the kernel (once), or note
 * that it still is. With or without g->lock held. */
void gw_flood_engage(struct gateway *g, uint32_t id, const char *sid);
/* Whether session id is under its kernel flood limit now (any lock held or not). */
bool gw_flood_engaged(struct gateway *g, uint32_t id);
/* Every summary interval: what the kernel rejected since, as events on l; ends the
 * limit of a session quiet for the interval. */
void gw_flood_tick(struct gateway *g, struct gw_evlist *l);
/* Session id goes: its last count onto l, its limit removed. */
void gw_flood_forget(struct gateway *g, uint32_t id, struct gw_evlist *l);
/* After the table was put back: every limit again (counters from 0). 0 or -errno. */
int gw_flood_restore(struct gateway *g, size_t *restored);
/* g->nft is shared with kbind.c: its calls are made between these. */
void gw_flood_lock_nft(struct gateway *g);
void gw_flood_unlock_nft(struct gateway *g);

/* ---- the gateway's own DNS answers (gateway/dnssynth.c), under g->lock ---- */
struct gw_synth;
int gw_synth_new(struct gw_synth **out);
void gw_synth_free(struct gw_synth *t);
/* Remembers the answer with id dns_id just sent to query packet q's sender. */
void gw_synth_note(struct gateway *g, const struct gw_pkt *q, uint16_t dns_id);
/* Whether an answer with key k (no query pending for it) is one the gateway sent (at
 * most once per note): it was recorded with its blocked query, it gets no line. */
bool gw_synth_own(struct gateway *g, const struct dnspend_key *k);

/* ---- conntrack (gateway/ct.c), queue stats (gateway/qstats.c) ---- */
int gw_ct_main(struct sg_thread *t, void *arg);
/* Reads the namespace's nfnetlink_queue drop counters and reports new drops. */
void gw_qstats_poll(struct gateway *g);
/* Records one decision latency. */
void gw_lat_observe(struct gateway *g, int64_t us);

#endif
