/*
 * The resource limits watcher (docs/limits.md): per session, the kernel's limit events
 * and counters (OOM kills with their victim from the kernel log, memory and pids limit
 * hits, CPU throttling, the --net-rate drops, the --disk quota), reported as
 * resource.limit at a bounded rate. The sessions part owns one watcher and tells it
 * which sessions to watch; the watcher asks back through its hooks when a limit's
 * action ends a session. It runs on the caller's loop (one thread).
 */
#ifndef SANDGATE_LIMITS_LIMITS_H
#define SANDGATE_LIMITS_LIMITS_H

#include <stddef.h>
#include <stdint.h>

struct cg_host;
struct loop;
struct nft_handle;
struct session;
struct sg_limits_config;
struct limits;

/* What the watcher asks of the session's owner. */
struct limits_hooks {
	void *ctx;
	/*
	 * Ends session s for reason ("disk_quota" with disk_action kill), as the daemon
	 * (no actor). 0 or -errno with err set; the watcher logs err.
	 */
	int (*terminate)(void *ctx, struct session *s, const char *reason, char *err,
			 size_t errlen);
};

/*
 * Starts the watcher (inotify, sample timer, /dev/kmsg) on loop when cfg->enabled;
 * *out stays NULL when it is not. cfg and cg must outlive the watcher (limits_configure
 * replaces cfg). 0, or -errno with *out set to what was started (free it).
 */
int limits_new(struct limits **out, const struct sg_limits_config *cfg, struct loop *loop,
	       const struct cg_host *cg, const struct limits_hooks *hooks);
/* Stops watching everything, closes the descriptors. Accepts NULL. */
void limits_free(struct limits *L);
/* The config in force after a reload (the sample timer is re-armed at its next tick). */
void limits_configure(struct limits *L, const struct sg_limits_config *cfg);
/* The gateway's installed ruleset (the --net-rate drop counters), or NULL. */
void limits_set_nft(struct limits *L, struct nft_handle *h);

/* Starts/stops watching s's limit counters. A failure is logged and leaves s unwatched:
 * the session itself is not refused. NULL L: nothing. */
void limits_watch(struct limits *L, struct session *s);
void limits_unwatch(struct limits *L, struct session *s);
/*
 * s is ending: reads its counters once more, reports everything pending (OOM kills with
 * the victims known so far) and stops watching s. Returns the OOM kills the watcher
 * reported for s, so the caller reports only those it missed (a daemon restart in
 * between).
 */
uint64_t limits_flush(struct limits *L, struct session *s);

#endif
