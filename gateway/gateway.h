/*
 * The gateway's packet path: one pinned thread per NFQUEUE queue reading the packets
 * the ruleset (nft/) queues, parsing DNS and the first bytes of new flows, recording
 * net.dns / net.connect and answering with a verdict in the packet mark; one conntrack
 * thread turning flow ends and periodic dumps into net.flow, and queue drops into
 * sensor.loss. Each session's policy decides its queries and flows (gateway/flow_verdict.c,
 * gateway/dnsh.c; gw_config.enforce false: observe only, every flow allowed).
 * Design: docs/gateway.md. Returns 0 or -errno; nothing here logs except the threads'
 * loops (once per failure, at the edge).
 */
#ifndef SANDGATE_GATEWAY_GATEWAY_H
#define SANDGATE_GATEWAY_GATEWAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "gateway/gateway_conf.h"

struct policy_set;

struct gw_config {
	const char *netns;            /* name under /run/netns, absolute path, or NULL */
	unsigned queue_base, queues, queue_len;
	bool fail_open;               /* NFQA_CFG_F_FAIL_OPEN on the queues */
	uint64_t dns_ttl_min_ms, dns_ttl_max_ms;
	uint64_t flow_interim_ms;     /* net.flow final:false for flows older than this */
	uint64_t dns_timeout_ms;      /* a query unanswered this long is logged as such */
	/* Policy (docs/gateway.md "Enforcement"); enforce false: observe only. */
	bool enforce;
	struct policy_set *policies;  /* the gateway takes its own reference; NULL: default-deny */
	const struct sg_resolver *resolvers;   /* copied; DNS only to these */
	size_t n_resolvers;
	const char *geoip_db;         /* NULL: no geo in net.connect */
	unsigned block_burst;         /* blocked attempts per window before policy.violation; 0 off */
	uint64_t block_window_ms;
	uint64_t ct_event_buffer;     /* destroy-event socket buffer, bytes; 0: 16 MiB */
	unsigned blocked_budget;      /* blocked attempts/s per session on their own lines; 0 all */
	uint64_t blocked_summary_ms;  /* net.blocked_summary interval; 0: 5 s */
	unsigned flood_rate;          /* packets/s of a session past its budget to the queue;
	                               * the rest rejected in the kernel; 0: no limit */
	unsigned worker_priority;     /* queue workers at nice -N (docs/gateway.md "Threads") */
	unsigned flood_worker_priority; /* ... while a session's flood limit is on (if higher) */
	bool flood_worker_realtime;   /* ... SCHED_RR at 1 then instead (falls back to the nice) */
};

struct gateway;

/*
 * Prepares the gateway (tables, the namespace handle) without starting anything.
 * 0, -ENOENT (namespace missing), -ENOMEM, -errno.
 */
int gateway_new(const struct gw_config *c, struct gateway **out);
/*
 * Starts the conntrack thread (which first enables nf_conntrack_acct and _timestamp in
 * the namespace) and one worker per queue, and returns once every queue is bound, so the
 * ruleset can be installed with a reader on each queue. On error, what started is
 * stopped. 0 or -errno (-EBUSY: a queue is bound by another program).
 */
int gateway_start(struct gateway *g);
/* Stops and joins the threads (verdicts in flight are sent first). Accepts NULL. */
void gateway_stop(struct gateway *g);
/* Frees g (stopping it first). Accepts NULL. */
void gateway_free(struct gateway *g);

/*
 * Tells the packet path that session mark id (1..0xFFFFF) belongs to session sid, whose
 * processes are in cgroup directory cgdir (NULL: unknown; used to find a flow's pid):
 * call before the session's nft elements are added. 0, -EINVAL, -ENOMEM.
 */
int gateway_session_bind(struct gateway *g, uint32_t mark_id, const char *sid,
			 const char *cgdir);
/* The policy (by name; NULL: "default") of mark id's session. 0, -ENOENT, -EINVAL. */
int gateway_session_policy(struct gateway *g, uint32_t mark_id, const char *policy);
/*
 * Swaps in a new policy set and resolver list (a reload): decisions after the call use
 * them; flows already decided keep their verdict. Takes its own reference on set.
 */
void gateway_set_policies(struct gateway *g, struct policy_set *set,
			  const struct sg_resolver *res, size_t n_res);
/*
 * After gateway_set_policies, with gateway.revoke_on_reload: decides every allowed flow
 * again; those now blocked get the deny verdict in their conntrack mark (the kernel
 * rejects their next packet) and a policy.revoke event. *n_revoked: how many. 0 or -errno
 * (the flows counted were still marked denied in the gateway's own table).
 */
int gateway_revoke(struct gateway *g, size_t *n_revoked);
/*
 * Sessions whose blocked attempts passed gateway.block_burst within the window and whose
 * policy says terminate_on_violation, taken out one at a time (mark id, session id):
 * the main thread terminates them. 0 with one taken, -ENOENT none. efd is an eventfd
 * the gateway writes when one is waiting (for the main loop), -1 before start.
 */
int gateway_take_violation(struct gateway *g, char *sid, size_t cap);
int gateway_violation_fd(struct gateway *g);

/*
 * The gateway's side of the package tracker (docs/packages.md), a typed interface the
 * daemon's glue fills in with the tracker's functions; the gateway owns it, so neither
 * part includes the other and nothing passes through a process-global.
 *
 * seen: a net.connect or net.dns of session sid by pid named these (qname, domain, sni,
 * http_host, dst address: n of them, at most GW_PKG_SEEN_MAX); the tracker confirms an
 * installer's source with them. Called on the packet threads, possibly under the
 * gateway's lock: it must be quick and must not call into the gateway. NULL: none.
 * active (`unapproved: block`): cheap, whether session sid has an installer run in
 * progress under block (only then is a flow's pid looked up at its decision). hosts: when
 * pid is in such a run's process tree, the hosts of the session's approved sources (at
 * most max) and their count; -ENOENT when it is not. Both are called from the packet
 * threads, outside the gateway's lock; NULL when the gateway does not enforce.
 */
#define GW_PKG_HOSTS_MAX 16
#define GW_PKG_HOST_MAX 256
#define GW_PKG_SEEN_MAX 4
struct gw_pkg_guard {
	void (*seen)(void *ctx, const char *sid, pid_t pid, const char *const *names,
		     size_t n);
	bool (*active)(void *ctx, const char *sid);
	int (*hosts)(void *ctx, const char *sid, pid_t pid, char (*out)[GW_PKG_HOST_MAX],
		     size_t max);
	void *ctx;
};
/*
 * Sets g's hooks (copied; NULL clears them). Returns once no packet thread is inside the
 * previous ones, so their ctx may be freed then.
 */
void gateway_set_pkg_guard(struct gateway *g, const struct gw_pkg_guard *guard);

/*
 * When mark id's session was created (wall clock, µs): conntrack entries of the mark that
 * began before are an earlier holder's, never this session's. 0 or -ENOENT (unbound).
 */
int gateway_session_since(struct gateway *g, uint32_t mark_id, int64_t created_us);

/* Forgets mark id and its DNS bindings: call after the elements are removed. */
void gateway_session_unbind(struct gateway *g, uint32_t mark_id);

/* Writes the counters in Prometheus text format. 0 or -EIO. */
int gateway_metrics(struct gateway *g, FILE *out);

/*
 * Puts the kernel bindings (bound-address set elements) the gateway installed and that
 * have not expired back into the sets, after the ruleset was restored (daemon's tamper
 * watch). *restored: how many. 0 or -errno. Accepts NULL (nothing to do).
 */
int gateway_kbind_restore(struct gateway *g, size_t *restored);
/* The netlink port id of the gateway's nft socket (its commits are the daemon's); 0 none. */
uint32_t gateway_kbind_portid(struct gateway *g);

/*
 * After a tamper restore: the session flows conntrack started within [from_ns, to_ns]
 * (wall clock) that no worker decided get the deny verdict in their ct mark, and e (when
 * not NULL) gets `window_flows` (the first 16: session, proto, src, dst, bytes_out,
 * packets_out) and `window_flows_total` (gateway/tamper_window.c). 0 or -errno.
 */
struct event;
int gateway_tamper_window(struct gateway *g, uint64_t from_ns, uint64_t to_ns, struct event *e);

#endif
