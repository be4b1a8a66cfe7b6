/*
 * The `gateway:` section (docs/config.md "gateway"): the queues, the DNS timing, the
 * resolvers sessions may use and the enforcement switches, with their defaults.
 */
#include "gateway/gateway_conf.h"
#include "conf/conf.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MS_S 1000ull
#define MS_DAY (86400ull * MS_S)
#define F(type, field) offsetof(type, field)
#define UINT_KEY(type, name, lo, hi) \
	{ #name, CK_UINT, F(type, name), sizeof(((type *)0)->name), lo, hi, NULL, NULL }

void cfg_gateway_default(struct sg_gateway_config *g)
{
	*g = (struct sg_gateway_config){
		.fail_open = false, .queues = 2, .queue_len = 4096, .queue_base = 100,
		.ct_event_buffer = 16 << 20,
		.dns_ttl_min_ms = 5 * MS_S, .dns_ttl_max_ms = 3600 * MS_S,
		.enabled = true, .mode = SG_GW_MODE_BOTH, .flow_interim_ms = 60 * MS_S,
		.dns_timeout_ms = 5 * MS_S, .enforce = true, .block_burst = 20,
		.block_window_ms = 10 * MS_S, .revoke_on_reload = false,
		.blocked_budget = 100, .blocked_summary_ms = 5 * MS_S,
		.flood_rate = 100, .worker_priority = 0, .flood_worker_priority = 10,
		.flood_worker_realtime = true,
	};
}

void cfg_gateway_free(struct sg_gateway_config *g)
{
	free(g->netns);
	free(g->resolvers);
	free(g->geoip_db);
	free(g->doh_list);
	g->netns = g->geoip_db = g->doh_list = NULL;
	g->resolvers = NULL;
	g->n_resolvers = 0;
}

static int check_netns(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		       const struct cfg_key *k)
{
	const char *s = cfg_field_str(base, k);

	if (!s || s[0] == '/')
		return cfg_check_path(ctx, v, base, k);
	if (strchr(s, '/') || !strcmp(s, ".") || !strcmp(s, "..") || cfg_has_ctl_or_space(s, false)) {
		cfg_err(ctx, v, "expected a namespace name (/run/netns/NAME) or an absolute path");
		return -EINVAL;
	}
	return 0;
}

static int sec_resolvers(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			 const struct cfg_key *k)
{
	struct sg_gateway_config *g = base;
	struct sg_resolver *r = NULL;
	size_t n = 0;
	int ret = 0;

	(void)k;
	if (cy_is_null(v))
		goto set;   /* null: the host's resolvers, as when left out */
	g->resolvers_set = true;
	if (cy_need(ctx, v, CY_SEQ, "a list of IP or IP:PORT"))
		return -EINVAL;
	if (v->n > CONFIG_MAX_RESOLVERS) {
		cfg_err(ctx, v, "at most %d resolvers", CONFIG_MAX_RESOLVERS);
		return -EINVAL;
	}
	r = calloc(v->n ? v->n : 1, sizeof(*r));
	if (!r) {
		ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct cy_node *it = v->items[i];
		const char *s;

		r[n].port = 53;
		if (cy_str(ctx, it, &s) || cfg_parse_hostport(s, &r[n].addr, &r[n].port, false)) {
			if (it->type == CY_SCALAR && !cy_is_null(it) && it->len)
				cfg_err(ctx, it, "expected IP, IP:PORT or [IPv6]:PORT");
			ret = -EINVAL;
			continue;
		}
		n++;
	}
set:
	free(g->resolvers);
	g->resolvers = r;
	g->n_resolvers = n;
	return ret;
}

#define GC struct sg_gateway_config
static const char *const gw_modes[] = { "both", "cgroup", "interface", NULL };
static const struct cfg_key gateway_keys[] = {
	{ "enabled", CK_BOOL, F(GC, enabled), 0, 0, 0, NULL, NULL },
	{ "mode", CK_ENUM, F(GC, mode), 0, 0, 0, gw_modes, NULL },
	{ "flow_interim_interval", CK_DURATION, F(GC, flow_interim_ms), 0, MS_S, MS_DAY, NULL,
	  NULL },
	{ "dns_timeout", CK_DURATION, F(GC, dns_timeout_ms), 0, 100, 300 * MS_S, NULL, NULL },
	{ "netns", CK_STR_NULL, F(GC, netns), 0, 0, 0, NULL, check_netns },
	{ "fail_open", CK_BOOL, F(GC, fail_open), 0, 0, 0, NULL, NULL },
	{ "queue_fanout", CK_BOOL, F(GC, queue_fanout), 0, 0, 0, NULL, NULL },
	UINT_KEY(GC, queues, 1, 64),
	UINT_KEY(GC, queue_len, 1, 1u << 24),
	UINT_KEY(GC, queue_base, 0, 65535),
	{ "ct_event_buffer", CK_SIZE, F(GC, ct_event_buffer), 0, 4096, 1ull << 30, NULL, NULL },
	{ "dns_ttl_min", CK_DURATION, F(GC, dns_ttl_min_ms), 0, 0, MS_DAY, NULL, NULL },
	{ "dns_ttl_max", CK_DURATION, F(GC, dns_ttl_max_ms), 0, MS_S, 7 * MS_DAY, NULL, NULL },
	{ "resolvers", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_resolvers },
	{ "geoip_db", CK_STR_NULL, F(GC, geoip_db), 0, 0, 0, NULL, cfg_check_path },
	{ "doh_list", CK_STR_NULL, F(GC, doh_list), 0, 0, 0, NULL, cfg_check_path },
	{ "enforce", CK_BOOL, F(GC, enforce), 0, 0, 0, NULL, NULL },
	UINT_KEY(GC, block_burst, 0, 1000000),
	{ "block_window", CK_DURATION, F(GC, block_window_ms), 0, 100, MS_DAY, NULL, NULL },
	{ "revoke_on_reload", CK_BOOL, F(GC, revoke_on_reload), 0, 0, 0, NULL, NULL },
	UINT_KEY(GC, blocked_budget, 0, 1000000),
	{ "blocked_summary_interval", CK_DURATION, F(GC, blocked_summary_ms), 0, 100, 3600 * MS_S,
	  NULL, NULL },
	UINT_KEY(GC, flood_rate, 0, 1000000),
	UINT_KEY(GC, worker_priority, 0, 20),
	UINT_KEY(GC, flood_worker_priority, 0, 20),
	{ "flood_worker_realtime", CK_BOOL, F(GC, flood_worker_realtime), 0, 0, 0, NULL, NULL },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};
#undef GC

/* Cross-field rules, reported at the mapping so the line points into the section. */
static int gateway_consistent(struct cfg_ctx *ctx, const struct cy_node *v,
			      const struct sg_gateway_config *g)
{
	int ret = 0;

	if (g->dns_ttl_min_ms > g->dns_ttl_max_ms) {
		cfg_err(ctx, v, "dns_ttl_min is greater than dns_ttl_max");
		ret = -EINVAL;
	}
	if ((uint64_t)g->queue_base + g->queues > 65536) {
		cfg_err(ctx, v, "queue_base + queues exceeds 65536 (queue numbers are 16-bit)");
		ret = -EINVAL;
	}
	return ret;
}

int cfg_gateway(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_gateway_config *g)
{
	int ret;

	ret = cfg_walk(ctx, v, gateway_keys, g, "gateway");
	if (ret == 0)
		ret = gateway_consistent(ctx, v, g);
	return ret;
}
