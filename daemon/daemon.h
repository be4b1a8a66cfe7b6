/*
 * sandgated's wiring: configuration, the journal as the event sink, the control socket,
 * signals, and the order in which they start and stop. The parts themselves live in
 * their folders; this is the one place that knows all of them.
 */
#ifndef SANDGATE_DAEMON_DAEMON_H
#define SANDGATE_DAEMON_DAEMON_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <stdint.h>

#include "daemon/config.h"
#include "daemon/control.h"
#include "daemon/health.h"
#include "common/loop.h"

struct nft_handle;
struct sessions;
struct gateway;
struct audit;
struct metrics;
struct investigation;
struct detection;
#include "journal/journal.h"

#include "common/version.h"
#define SANDGATE_VERSION sandgate_version()

struct daemon_opts {
	const char *config_path;     /* NULL: embedded defaults */
	const char *state_dir;       /* overrides the config */
	const char *control_path;    /* overrides the config */
	bool debug;
};

struct daemon {
	struct daemon_opts opts;
	struct sg_config *cfg;
	struct sg_config **retired;  /* configs a reload replaced, freed at exit */
	size_t n_retired;
	struct journal *journal;
	struct loop *loop;
	struct control *control;
	int sigfd;
	char cgroup_root[256];       /* the cgroup v2 mount */
	char session_prefix[256];    /* sessions' path inside the v2 hierarchy, "/sandgate" */
	struct timespec started;
	struct nft_handle *nft;      /* the installed ruleset, or NULL (gateway off) */
	struct sessions *sessions;   /* sessions (sessions/sessions.h, daemon/sessions_glue.c) */
	struct gateway *gateway;     /* NFQUEUE workers, DNS, flows (gateway/, daemon/gateway_glue.c) */
	struct audit *audit;         /* proc connector, fanotify (audit/, daemon/audit_glue.c) */
	struct metrics *metrics;     /* the /metrics HTTP server (daemon/metrics_http.c), or NULL */
	struct investigation *investigation;   /* index and sinks (daemon/investigate_glue.c) */
	struct detection *detection;   /* rules and alerts (daemon/detect_glue.c), or NULL */
	uint64_t first_seq;          /* the journal's next seq when this run opened it */
	struct daemon_health health; /* /healthz, status, the operator's metrics (health.c) */
	struct tamper *tamper;       /* the nft tamper watch (daemon/tamper_glue.c), or NULL */
	struct escape_watch *escape; /* session escape checks (daemon/escape_glue.c), or NULL */
};

/*
 * The tamper watch on the gateway's table (daemon/tamper_glue.c): after
 * daemon_gateway_install; no-op without a ruleset. 0 or -errno. fini accepts none.
 */
int daemon_tamper_init(struct daemon *d);
void daemon_tamper_fini(struct daemon *d);
/* The session escape watch (daemon/escape_glue.c): after daemon_audit_init. 0 or -errno. */
int daemon_escape_init(struct daemon *d);
void daemon_escape_fini(struct daemon *d);

/*
 * Re-reads the config file (SIGHUP, the `reload` verb): a file with errors, or policies
 * that do not compile, are refused (the first error, FILE:LINE:COL, in err) and the
 * running config stays; otherwise the policies are swapped into the gateway at once and
 * the rest taken. daemon.reload records the outcome. 0 or -errno.
 */
int daemon_reload(struct daemon *d, char *err, size_t errlen);

/* Runs the daemon until SIGTERM/SIGINT. Returns the process exit status. */
int daemon_main(const struct daemon_opts *opts);

/*
 * Loads the config named by opts (or the defaults) and applies the command-line
 * overrides. Returns 0, or -errno with every error printed on stderr as FILE:LINE.
 */
int daemon_load_config(const struct daemon_opts *opts, struct sg_config **out);
/* Sets gateway.resolvers to the host's when the file left them out (logs). 0 or -errno. */
int daemon_host_resolvers(struct sg_config *c);

/*
 * Sessions (sessions/sessions.h, daemon/sessions_glue.c): opens the part with the
 * config in force and the hooks to the gateway, the audit and the control socket.
 * fini frees (the sessions live on). Returns 0 or -errno (logged by caller).
 */
int daemon_sessions_init(struct daemon *d);
void daemon_sessions_fini(struct daemon *d);
/* After a reload replaced d->cfg: the sessions read the new one. */
void daemon_sessions_configure(struct daemon *d);

/*
 * The gateway: installs the nft ruleset (d->nft) in the configured namespace and starts
 * the NFQUEUE and conntrack workers. Runs before daemon_sessions_init, which binds the
 * marks of the sessions it adopts; daemon_gateway_install then puts the ruleset in. fini stops the workers; the ruleset stays
 * installed so session traffic stays blocked while the daemon is down (fail closed).
 */
int daemon_gateway_init(struct daemon *d);
void daemon_gateway_fini(struct daemon *d);
/*
 * Installs the ruleset with the map elements of every session loaded so far, in one
 * atomic batch, and sets d->nft: a restart never has a moment where a session's
 * packets go unclassified. After daemon_sessions_init; no-op when the gateway is off.
 */
int daemon_gateway_install(struct daemon *d);
/*
 * Tells the packet path that session mark id (1..0xFFFFF, attribution's s->mark) is
 * session sid with v2 cgroup cgroup (relative to the mount, "/sandgate/s1"); call before
 * adding the session's nft elements. No-op (0) when the gateway is off. 0, -EINVAL,
 * -ENOMEM.
 */
int daemon_gateway_session_bind(struct daemon *d, uint32_t mark_id, const char *sid,
				const char *cgroup, const char *policy);
struct policy_set;
struct config_errors;
/* The compiled policies of c and its DoH list (daemon/gateway_glue.c). 0 or -errno. */
int daemon_policy_build(const struct sg_config *c, struct policy_set **out,
			struct config_errors *errs);
/*
 * A reload: swaps fresh's policies and resolvers into the running gateway (no-op when
 * off). 0, or -errno with the reason in err (the old policies stay).
 */
int daemon_gateway_reload(struct daemon *d, const struct sg_config *fresh, char *err,
			  size_t errlen);
/* Forgets mark id (after the session's elements are removed). No-op when off. */
void daemon_gateway_session_unbind(struct daemon *d, uint32_t mark_id);
/* When mark id's session was created (µs, wall; 0: now, it is being created): older
 * conntrack entries of the mark are an earlier holder's (gateway_session_since). No-op
 * when off. */
void daemon_gateway_session_since(struct daemon *d, uint32_t mark_id, int64_t created_us);

/*
 * Starts the health sampling (daemon/health.c) and serves GET /metrics and /healthz
 * (Prometheus text format) on cfg->metrics_listen from a libmicrohttpd thread; NULL
 * metrics_listen: sampling only. 0 or -errno (-EADDRINUSE...). fini stops both;
 * accepts a daemon without them.
 */
int daemon_metrics_init(struct daemon *d);
void daemon_metrics_fini(struct daemon *d);

/* The audit sensors (proc connector, fanotify), after the sessions they attribute to. */
int daemon_audit_init(struct daemon *d);
void daemon_audit_fini(struct daemon *d);
/* A process was moved into session sid (session.attach): the audit tracks it from now. */
void daemon_audit_attached(struct daemon *d, pid_t pid, const char *sid);
/* daemon.start's exec_source and exec_source_why: what the audit exec source probe says. */
struct event;
void daemon_audit_start_fields(struct daemon *d, struct event *e);

/*
 * The query index and the sinks, each following the journal files in its own thread
 * (after the audit sensors; stopped before them). Returns 0 or -errno (logged by caller).
 */
int daemon_investigation_init(struct daemon *d);
/* The index's lines by how they were read, for /metrics. 0 or -EIO. */
int daemon_investigation_metrics(struct daemon *d, FILE *f);
void daemon_investigation_fini(struct daemon *d);

/*
 * Detection: loads the configured rules (errors logged as FILE:LINE; a bad set refuses
 * the start), follows the journal in its own thread, registers `detect.reload`. After
 * the investigation side; stopped before it. 0 or -errno.
 */
int daemon_detect_init(struct daemon *d);
void daemon_detect_fini(struct daemon *d);
/* Reloads the rules from d->cfg (SIGHUP); a set with errors is logged and refused. */
void detect_reload(struct daemon *d);
/* For `--check-config`: loads the rules c names into errs; *n rules. 0, -EINVAL... */
int daemon_detect_check(const struct sg_config *c, struct config_errors *errs, size_t *n);
/* Detection's counters for /metrics (nothing when it is off). 0 or -EIO. */
int daemon_detect_metrics(struct daemon *d, FILE *f);

/*
 * Sink i's name and figures for /metrics; returns the number of sinks (0 when i is past
 * the last one, or none run). Thread-safe.
 */
struct sink_stats;
size_t daemon_sink_stats(struct daemon *d, size_t i, const char **name, struct sink_stats *st);

/* The core verbs every daemon answers: ping, status. */
int daemon_register_core_verbs(struct daemon *d);

/* The cgroup v2 mount: /sys/fs/cgroup/unified on hybrid hosts, /sys/fs/cgroup on v2. */
int daemon_cgroup2_root(const char *configured, char *out, size_t len);

#endif
