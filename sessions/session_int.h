/*
 * The daemon's side of sessions, shared by sessions/session_*.c and sessions/sessions.c:
 * the registry, the cgroup host, the watches, and the transitions every path (control
 * verbs, kernel reports, timeouts) goes through so each is logged the same way.
 */
#ifndef SANDGATE_SESSIONS_SESSION_INT_H
#define SANDGATE_SESSIONS_SESSION_INT_H

#include "attribution/attribution.h"
#include "common/control_verb.h"
#include "common/timeutil.h"
#include "journal/event.h"
#include "limits/limits.h"
#include "policy/policy_conf.h"
#include "sessions/sessions.h"

#define SESSION_END_GRACE_MS 500    /* wait for a `run` exit report after populated 0 */
#define SESSION_CONTAIN_GRACE_MS 5000   /* a run that asked session.contain: its attach */
#define SESSION_TICK_MS 100
#define SESSION_FREEZE_MS 5000
#define SESSION_KILL_WAIT_MS 5000

/* A process session.attach moved in (its fork tree's root), for the control socket's
 * ancestry test: a descendant that moved out is still known by its ancestor. */
struct attach_root {
	pid_t pid;
	uint64_t start;
	char sid[SESSION_ID_MAX + 1];
};
#define ATTACH_ROOTS 256

struct sessions {
	struct attach_root roots[ATTACH_ROOTS];   /* a ring: the latest attaches */
	size_t next_root;
	struct sessions_conf conf;    /* the config in force (sessions_configure) */
	struct loop *loop;            /* the daemon's */
	struct session_hooks hooks;   /* the gateway, the audit, the control socket */
	struct nft_handle *nft;       /* the gateway's ruleset, or NULL (sessions_set_nft) */
	struct session_reg *reg;
	struct cg_host cg;
	struct pidcache *pids;
	int ifd;                  /* inotify on every session's cgroup.events */
	int tfd;                  /* SESSION_TICK_MS timer: timeouts, delayed ends */
	struct limits *limits;    /* the resource limits watcher, or NULL (limits/limits.h) */
	char detail_dir[512];
	char snapshot_dir[512];
};

/* Who asked: the peer's credentials and the request's optional actor name. */
struct actor {
	int64_t uid, pid;
	const char *name;
};

/* The actor of a control request. */
void actor_from(struct actor *a, const struct control_peer *peer,
		const struct control_request *req);
/* Writes "actor": {uid, pid, name}, or null when a is NULL (kernel, timer). */
void event_actor(struct event *e, const struct actor *a);

/* ---- the daemon's side (sessions/session_hooks.c) ---------------------------------- */

/* The policy named name in the config in force (NULL: "default"), or NULL. */
const struct sg_policy *sess_policy(const struct sessions *ss, const char *name);
/* Registers verb with the control socket (hooks.add_verb). 0 or -errno. */
int sess_add_verb(struct sessions *ss, const char *verb, control_verb_fn fn);
/* Tells the audit that pid now belongs to s (hooks.attached). */
void sess_attached(struct sessions *ss, pid_t pid, const struct session *s);

/* ---- transitions (sessions/session_ops.c) ---------------------------------------------- */

/*
 * Kills s (any state but terminated), waits for its cgroup to empty and records the
 * end: state terminated, reason, exit status, session.terminate with src/actor.
 * 0 or -errno with err set; on error nothing changed.
 */
int sess_terminate(struct sessions *ss, struct session *s, const char *reason,
		   const struct actor *a, enum event_source src, char *err, size_t errlen);
/* The kernel said the cgroup is empty: end s with the reason observed (normal/oom/signal). */
void sess_end_observed(struct sessions *ss, struct session *s);
/* Saves s; a failure is logged (the transition it records already happened). */
void sess_save(struct sessions *ss, const struct session *s);
/* Watches s's cgroup.events; 0 or -errno. */
int sess_watch(struct sessions *ss, struct session *s);
void sess_unwatch(struct sessions *ss, struct session *s);

/* ---- nftables (sessions/session_nft.c) ---------------------------------------------- */

/* The 32-bit packet/ct mark of session mark id (tag | id). */
uint32_t sess_nft_mark(uint32_t id);
/* Adds/removes s's elements when the gateway's ruleset is installed; else 0. */
int sess_nft_add(struct sessions *ss, struct session *s);
int sess_nft_del(struct sessions *ss, struct session *s);

/* ---- containment (sessions/session_contain.c, contain/contain.h) --------------------- */

/* The capabilities s's contained commands keep. */
uint64_t sess_keep(const struct session *s);
/* Makes s's holder unless it has a live one. 0 or -errno with err. */
int sess_holder_ensure(struct sessions *ss, struct session *s, char *err, size_t errlen);
/* Kills s's holder (and so every process in its PID namespace), removes its cgroup. */
void sess_holder_stop(struct sessions *ss, struct session *s);
/* After a restart: finds s's holder in its cgroup. */
void sess_holder_adopt(struct sessions *ss, struct session *s);
/* 0 when pid is a contained member of s's namespaces; -EPERM/-errno with err. */
int sess_contain_check(struct sessions *ss, struct session *s, pid_t pid, char *err,
		       size_t errlen);
/* Remembers pid (just attached to s) as the root of a fork tree of s. */
void sess_note_root(struct sessions *ss, const struct session *s, pid_t pid);

/* ---- verbs ------------------------------------------------------------------------ */

/* Checks that args holds only the keys in allowed (NULL-terminated). 0 or -EINVAL. */
int args_only(const json_t *args, const char *const *allowed, char *err, size_t errlen);
/* An optional string member of at most max bytes: *out NULL when absent. 0 or -EINVAL. */
int arg_str(const json_t *args, const char *key, size_t max, const char **out, char *err,
	    size_t errlen);
/* An optional non-negative integer member: *out -1 when absent. 0 or -EINVAL. */
int arg_int(const json_t *args, const char *key, int64_t *out, char *err, size_t errlen);
/* The session named by args.id (or args.session_id): 0 or -EINVAL/-ENOENT with err. */
int arg_session(struct sessions *ss, const json_t *args, struct session **out, char *err,
		size_t errlen);

/* session.create (sessions/session_create.c), registered by session_verbs_register. */
int verb_session_create(void *ctx, const struct control_peer *peer,
			const struct control_request *req, json_t **result, char *err,
			size_t errlen);
int session_verbs_register(struct sessions *ss);   /* create ... cleanup, list, show */
int session_run_verbs_register(struct sessions *ss);   /* attach, report_exit, whois */
int session_tool_verbs_register(struct sessions *ss);  /* tool.invoke, model.summary, detail.get */

#endif
