/*
 * The `limits:` section (limits/limits_conf.c; docs/config.md "limits"), read by the
 * resource limits watcher (limits/limits_watch.c).
 */
#ifndef SANDGATE_LIMITS_LIMITS_CONF_H
#define SANDGATE_LIMITS_LIMITS_CONF_H

#include <stdbool.h>
#include <stdint.h>

/* What the limits watcher does when a session's workdir outgrows --disk. */
enum sg_disk_action { SG_DISK_WARN, SG_DISK_KILL };

/* The resource limits watcher (limits/limits_conf.c; docs/config.md "limits"). */
struct sg_limits_config {
	bool enabled;                 /* default true */
	uint64_t sample_interval_ms;  /* cpu.stat (and v1 counters without notification); 1s */
	uint64_t report_interval_ms;  /* at most one cpu/memory_max/pids report per session
					 and limit per interval; default 10s */
	uint64_t disk_interval_ms;    /* workdir measured against --disk; default 5s */
	enum sg_disk_action disk_action;   /* default warn */
	uint64_t disk_max_entries;    /* entries walked per measure; default 100000 */
	bool kmsg;                    /* OOM victims from /dev/kmsg; default true */
};

struct cfg_ctx;
struct cy_node;

/* Reads the `limits:` mapping v into l (conf/conf.h readers). 0, -EINVAL, -ENOMEM. */
int cfg_limits(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_limits_config *l);
/* The defaults (nothing to free). */
void cfg_limits_default(struct sg_limits_config *l);

#endif
