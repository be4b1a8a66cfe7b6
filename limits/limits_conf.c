/*
 * The `limits:` section: how often the resource limits watcher samples the counters the
 * kernel does not announce, how often it may report, and what an outgrown disk quota
 * does (docs/config.md, docs/limits.md).
 */
#include "limits/limits_conf.h"
#include "conf/conf.h"

#include <errno.h>
#include <stddef.h>

#define F(T, f) offsetof(T, f)
#define MS_S 1000u

static const char *const disk_actions[] = { "warn", "kill", NULL };

void cfg_limits_default(struct sg_limits_config *l)
{
	*l = (struct sg_limits_config){
		.enabled = true, .sample_interval_ms = MS_S, .report_interval_ms = 10 * MS_S,
		.disk_interval_ms = 5 * MS_S, .disk_action = SG_DISK_WARN,
		.disk_max_entries = 100000, .kmsg = true,
	};
}

#define LC struct sg_limits_config
static const struct cfg_key limits_keys[] = {
	{ "enabled", CK_BOOL, F(LC, enabled), 0, 0, 0, NULL, NULL },
	{ "sample_interval", CK_DURATION, F(LC, sample_interval_ms), 0, 100, 3600 * MS_S, NULL,
	  NULL },
	{ "report_interval", CK_DURATION, F(LC, report_interval_ms), 0, 100, 86400 * MS_S, NULL,
	  NULL },
	{ "disk_interval", CK_DURATION, F(LC, disk_interval_ms), 0, 100, 3600 * MS_S, NULL,
	  NULL },
	{ "disk_action", CK_ENUM, F(LC, disk_action), 0, 0, 0, disk_actions, NULL },
	{ "disk_max_entries", CK_UINT, F(LC, disk_max_entries), sizeof(uint64_t), 100,
	  100000000, NULL, NULL },
	{ "kmsg", CK_BOOL, F(LC, kmsg), 0, 0, 0, NULL, NULL },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};
#undef LC

int cfg_limits(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_limits_config *l)
{
	return cfg_walk(ctx, v, limits_keys, l, "limits");
}
