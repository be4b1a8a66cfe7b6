/*
 * The `gateway:` section (gateway/gateway_conf.c; docs/config.md "gateway") and the
 * host's resolvers used when gateway.resolvers is left out (gateway/resolv_conf.c).
 */
#ifndef SANDGATE_GATEWAY_GATEWAY_CONF_H
#define SANDGATE_GATEWAY_GATEWAY_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/addr.h"

#define CONFIG_MAX_RESOLVERS 16

struct sg_resolver {
	struct sg_addr addr;
	uint16_t port;        /* 53 when the entry gave none */
};

/* Which session traffic the gateway classifies (nft/nft.h cgroup_mode, iface_mode). */
enum sg_gw_mode { SG_GW_MODE_BOTH, SG_GW_MODE_CGROUP, SG_GW_MODE_INTERFACE };

struct sg_gateway_config {
	bool enabled;                 /* default true: it only touches session traffic (18.6) */
	enum sg_gw_mode mode;         /* default both */
	uint64_t flow_interim_ms;     /* net.flow final:false for longer flows; default 60s */
	uint64_t dns_timeout_ms;      /* a query unanswered this long is logged; default 5s */
	char *netns;                  /* NULL: the daemon's own; a name or an absolute path */
	bool fail_open;
	bool queue_fanout;            /* queue by CPU (fanout) instead of by flow hash */
	unsigned queues;              /* NFQUEUE numbers queue_base .. queue_base+queues-1 */
	unsigned queue_len;
	unsigned queue_base;
	uint64_t ct_event_buffer;     /* conntrack event socket receive buffer, bytes */
	uint64_t dns_ttl_min_ms;
	uint64_t dns_ttl_max_ms;
	struct sg_resolver *resolvers;
	size_t n_resolvers;
	bool resolvers_set;           /* written in the file; else the host's (resolv_conf.c) */
	char *geoip_db;               /* NULL: no GeoIP enrichment */
	char *doh_list;               /* NULL: the shipped data file */
	bool enforce;                 /* default true; false: observe only (no_policy) */
	unsigned block_burst;         /* blocked attempts per window before policy.violation */
	uint64_t block_window_ms;
	bool revoke_on_reload;        /* a reload resets the verdict of flows it no longer allows */
	unsigned blocked_budget;      /* blocked attempts/s a session logs one by one; 0: all */
	uint64_t blocked_summary_ms;  /* net.blocked_summary interval; default 5s */
	unsigned flood_rate;          /* packets/s to the queue of a session past its budget; 0 off */
	unsigned worker_priority;     /* the queue workers run at nice -N; 0: the daemon's */
	unsigned flood_worker_priority; /* ... at nice -N while a flood limit is on (if higher) */
	bool flood_worker_realtime;   /* ... SCHED_RR 1 instead, while a flood limit is on */
};

struct cfg_ctx;
struct cy_node;

/* Reads the `gateway:` mapping v into g (conf/conf.h readers). 0, -EINVAL, -ENOMEM. */
int cfg_gateway(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_gateway_config *g);
/* The defaults (no strings: nothing can fail). */
void cfg_gateway_default(struct sg_gateway_config *g);
/* Frees what g owns (the struct is left empty). */
void cfg_gateway_free(struct sg_gateway_config *g);

/*
 * Parses resolv.conf text: the "nameserver ADDR" lines (port 53), at most max of them
 * into out (*n set). Pure; 0.
 */
int config_resolv_parse(const char *text, size_t len, struct sg_resolver *out, size_t max,
			size_t *n);

/*
 * gateway.resolvers not written in the file: sets g's to the host's, from resolv
 * (/etc/resolv.conf), or from resolved (/run/systemd/resolve/resolv.conf) when resolv
 * names only systemd-resolved's stub. from gets the file used. A missing file gives no
 * resolvers. 0, -ENOMEM or another -errno reading the file.
 */
int config_host_resolvers(struct sg_gateway_config *g, const char *resolv,
			  const char *resolved, char *from, size_t fromlen);
#define CONFIG_RESOLV_CONF "/etc/resolv.conf"
#define CONFIG_RESOLVED_CONF "/run/systemd/resolve/resolv.conf"

#endif
