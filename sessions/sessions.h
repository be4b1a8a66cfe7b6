/*
 * Sessions (docs/sessions.md): the registry loaded from the state directory, sessions
 * adopted after a restart, the session/run/tool verbs, their cgroups and nft elements,
 * containment, the kernel's reports (cgroup.events, timeouts) and the resource limits
 * watcher (limits/). The daemon opens the part with the settings it needs and a hooks
 * struct through which sessions tell the parts that attribute to them (the gateway, the
 * audit) about binds, unbinds and attaches, and get their verbs registered. It runs on
 * the daemon's loop (one thread).
 */
#ifndef SANDGATE_SESSIONS_SESSIONS_H
#define SANDGATE_SESSIONS_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/control_verb.h"

struct loop;
struct nft_handle;
struct nft_session;
struct session_reg;
struct sessions;
struct sg_limits_config;
struct sg_policy;

/*
 * What the part reads of the config in force (pointers into it: the caller keeps that
 * config alive as long as the part runs, and calls sessions_configure after a reload).
 */
struct sessions_conf {
	const char *state_dir;        /* sessions/, detail/, snapshots/ under it */
	const char *control_socket;   /* hidden from contained sessions */
	const char *config_path;      /* hidden too; NULL: embedded defaults */
	const char *host;             /* session.start's host_id */
	const char *cgroup_root;      /* the cgroup v2 mount */
	const char *session_prefix;   /* sessions' path in the v2 hierarchy, "/sandgate" */
	bool gateway_enabled;         /* --net-rate is a rule of the gateway's ruleset */
	const struct sg_policy *policies;   /* by name (--policy) */
	size_t n_policies;
	const struct sg_limits_config *limits;   /* the `limits:` section */
};

/*
 * Filled in by the daemon. Every member but ctx may be NULL (nobody listens).
 */
struct session_hooks {
	void *ctx;
	/*
	 * Session mark mark_id (1..0xFFFFF, attribution's s->mark) is session sid, with v2
	 * cgroup cgroup (relative to the mount) and policy: the packet path must know it
	 * before the session's nft elements go in; conntrack entries of the mark older than
	 * created_us (µs, wall; 0: now) are an earlier holder's. 0 or -errno: not bound.
	 */
	int (*bind)(void *ctx, uint32_t mark_id, const char *sid, const char *cgroup,
		    const char *policy, int64_t created_us);
	/* The mark's elements are gone: forget it. */
	void (*unbind)(void *ctx, uint32_t mark_id);
	/* A process was moved into session sid (session.attach, create's --pid). */
	void (*attached)(void *ctx, pid_t pid, const char *sid);
	/* Registers a control verb (daemon/control.h). 0 or -errno. */
	int (*add_verb)(void *ctx, const char *verb, control_verb_fn fn, void *fn_ctx);
};

/*
 * Loads the registry from conf->state_dir, adopts live sessions (binding their marks
 * through hooks), starts the watchers on loop and the limits watcher, registers the
 * session, run and tool verbs. 0, or -errno with nothing left running (*out NULL).
 */
int sessions_open(struct sessions **out, const struct sessions_conf *conf, struct loop *loop,
		  const struct session_hooks *hooks);
/* Stops watching; the sessions live on (their files stay, the next daemon adopts them).
 * Accepts NULL. */
void sessions_close(struct sessions *ss);
/* The config in force after a reload. */
void sessions_configure(struct sessions *ss, const struct sessions_conf *conf);
/* The gateway's installed ruleset: sessions add and remove their elements in it. */
void sessions_set_nft(struct sessions *ss, struct nft_handle *h);
/* The registry (attribution/attribution.h), for those that read sessions. */
struct session_reg *sessions_registry(const struct sessions *ss);
/* The pids in s's cgroup (malloc'd into *pids, caller frees). 0 or -errno. */
struct session;
int sessions_pids(struct sessions *ss, const struct session *s, pid_t **pids, size_t *n);

/* Terminates session sid, actor null (the daemon). 0, -ENOENT, -errno (logged). */
int sessions_terminate_id(struct sessions *ss, const char *sid, const char *reason);
/* The nft elements of the sessions that want them (calloc'd array, caller frees). 0 or
 * -ENOMEM. NULL ss: none. */
int sessions_nft_list(struct sessions *ss, struct nft_session **out, size_t *n);
/*
 * The control socket's peer test (control_peer_fn; ctx the sessions): refuses a pid in
 * a session's PID namespace or descending from a process run in a session. 0 or -EACCES
 * with why.
 */
int sessions_peer_check(void *ctx, pid_t pid, char *why, size_t len);

#endif
