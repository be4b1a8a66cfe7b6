/*
 * The daemon's configuration: one YAML file (docs/config.md lists every key) turned into
 * a plain, fully validated struct sg_config. Loading is all or nothing: any error (unknown
 * key, wrong type, bad value, duplicate key) is collected with FILE:LINE into a
 * config_errors list, every error in the file is reported, and no config object is
 * returned, so a bad file never half-applies. Nothing here logs or touches global state.
 */
#ifndef SANDGATE_DAEMON_CONFIG_H
#define SANDGATE_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "conf/addr.h"
#include "conf/errors.h"
#include "audit/audit_conf.h"
#include "daemon/limits_conf.h"
#include "detect/detect_conf.h"
#include "journal/sink_conf.h"
#include "policy/policy_conf.h"

#define CONFIG_MAX_RESOLVERS 16

/* ---- settings ------------------------------------------------------------------- */

enum sg_log_level { SG_LOG_ERROR, SG_LOG_WARN, SG_LOG_INFO, SG_LOG_DEBUG };

/* Same order as enum journal_fsync (journal/journal.h). */
enum sg_fsync { SG_FSYNC_CHECKPOINT, SG_FSYNC_ALWAYS, SG_FSYNC_NEVER };

struct sg_resolver {
	struct sg_addr addr;
	uint16_t port;        /* 53 when the entry gave none */
};

struct sg_cgroup_config {
	char *root;           /* "auto" (the caller detects the v2 mount) or an absolute path */
	char *parent;         /* relative path under root for session cgroups */
};

struct sg_journal_config {
	uint64_t segment_max_bytes;
	uint64_t segment_max_age_ms;
	enum sg_fsync fsync;
	uint64_t checkpoint_interval_ms;
	uint64_t checkpoint_events;
	uint64_t heartbeat_interval_ms;
	uint64_t queue_capacity;      /* events */
	char *origin;                 /* NULL: "sandgate/<host>" (journal_settings.origin) */
	char *witness_dir;            /* NULL: none; every checkpoint also appended there */
};

/* Which session traffic the gateway classifies (nft/nft.h cgroup_mode, iface_mode). */
enum sg_gw_mode { SG_GW_MODE_BOTH, SG_GW_MODE_CGROUP, SG_GW_MODE_INTERFACE };

struct sg_gateway_config {
	bool enabled;                 /* default false: opt-in until policies land */
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
	bool resolvers_set;           /* written in the file; else the host's (config_resolv.c) */
	char *geoip_db;               /* NULL: no GeoIP enrichment */
	char *doh_list;               /* NULL: the shipped data file */
	bool enforce;                 /* default true; false: observe only (no_policy) */
	unsigned block_burst;         /* blocked attempts per window before policy.violation */
	uint64_t block_window_ms;
	bool revoke_on_reload;        /* a reload resets the verdict of flows it no longer allows */
	unsigned blocked_budget;      /* blocked attempts/s a session logs one by one; 0: all */
	uint64_t blocked_summary_ms;  /* net.blocked_summary interval; default 5s */
};

/* ---- the whole file ------------------------------------------------------------- */

/*
 * Every string is heap-owned by the config (replace one with free() + strdup()); NULL
 * only where a comment says so. Durations are milliseconds, sizes bytes.
 */
struct sg_config {
	char *host;               /* default: gethostname() */
	char *state_dir;          /* default /var/lib/sandgate */
	char *control_socket;     /* default /run/sandgate/control.sock */
	char *control_group;      /* default "sandgate" */
	char *metrics_listen;     /* "IP:PORT" (IPv6 as "[IP]:PORT"); NULL: metrics off */
	enum sg_log_level log_level;
	struct sg_cgroup_config cgroup;
	struct sg_journal_config journal;
	struct sg_gateway_config gateway;
	struct sg_audit_config audit;     /* audit: (audit/audit_conf.c) */
	struct sg_limits_config limits;   /* limits: (daemon/limits_conf.c) */
	struct sg_invest_config invest;   /* index:, retention:, sinks: (journal/sink_conf.c) */
	struct sg_detect_config detect;   /* detection: (detect/detect_conf.c) */
	struct sg_policy *policies;   /* always holds one named "default" */
	size_t n_policies;
};

/* ---- loading -------------------------------------------------------------------- */

/*
 * The embedded defaults (interface.md), with the embedded "default" policy: allow
 * nothing, every block on. Returns NULL only when out of memory.
 */
struct sg_config *config_default(void);

/*
 * Parses text[0..len) (need not be NUL-terminated) named name in error messages. An
 * empty text gives the defaults. On success returns 0 and sets *out; otherwise *out is
 * NULL and returns -EINVAL (the file has errors, all of them appended to errs), -EFBIG
 * (len > CONFIG_MAX_FILE_BYTES, also in errs) or -ENOMEM. errs may be NULL.
 */
int config_load_buffer(const char *name, const char *text, size_t len,
		       struct sg_config **out, struct config_errors *errs);

/*
 * Reads and parses the file at path, as config_load_buffer(). Besides its returns:
 * -ENOENT, -EACCES, -EISDIR, -EFBIG or another -errno when the file cannot be read, with
 * an error naming the path appended to errs.
 */
int config_load_file(const char *path, struct sg_config **out, struct config_errors *errs);

/*
 * The core of `sandgated --check-config FILE`: loads path; on success writes one
 * "FILE: OK (N policies)" line to out, otherwise every error ("FILE:LINE:COL: message")
 * and a count to err. Returns what config_load_file() returned; the caller exits
 * non-zero on anything but 0.
 */
int config_check_file(const char *path, FILE *out, FILE *err);

/*
 * The depth of session cgroups (ROOT/PARENT/ID) below the cgroup v2 root: the level
 * `socket cgroupv2 level L` matches in the gateway's ruleset. PARENT's depth plus one.
 */
unsigned config_cgroup_level(const struct sg_config *c);

/*
 * Parses resolv.conf text: the "nameserver ADDR" lines (port 53), at most max of them
 * into out (*n set). Pure; 0.
 */
int config_resolv_parse(const char *text, size_t len, struct sg_resolver *out, size_t max,
			size_t *n);

/*
 * gateway.resolvers not written in the file: sets them to the host's, from resolv
 * (/etc/resolv.conf), or from resolved (/run/systemd/resolve/resolv.conf) when resolv
 * names only systemd-resolved's stub. from gets the file used. A missing file gives no
 * resolvers. 0, -ENOMEM or another -errno reading the file.
 */
int config_host_resolvers(struct sg_config *c, const char *resolv, const char *resolved,
			  char *from, size_t fromlen);
#define CONFIG_RESOLV_CONF "/etc/resolv.conf"
#define CONFIG_RESOLVED_CONF "/run/systemd/resolve/resolv.conf"

/* Frees a config and everything it owns. Accepts NULL. */
void config_free(struct sg_config *c);

/* The policy called name, or NULL. name NULL means "default", which always exists. */
const struct sg_policy *config_policy(const struct sg_config *c, const char *name);

#endif
