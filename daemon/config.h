/*
 * The daemon's configuration: one YAML file (docs/config.md lists every key) turned into
 * a plain, fully validated struct sg_config, composed of the sections each part defines
 * and reads itself (their *_conf.h headers, included below). Loading is all or nothing: any error (unknown
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
#include "limits/limits_conf.h"
#include "detect/detect_conf.h"
#include "gateway/gateway_conf.h"
#include "sinks/sink_conf.h"
#include "policy/policy_conf.h"


/* ---- settings ------------------------------------------------------------------- */

enum sg_log_level { SG_LOG_ERROR, SG_LOG_WARN, SG_LOG_INFO, SG_LOG_DEBUG };

/* Same order as enum journal_fsync (journal/journal.h). */
enum sg_fsync { SG_FSYNC_CHECKPOINT, SG_FSYNC_ALWAYS, SG_FSYNC_NEVER };

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
	uint64_t shape_memory;        /* bytes: recent lines' shapes (journal/handoff.h) */
	char *origin;                 /* NULL: "sandgate/<host>" (journal_settings.origin) */
	char *witness_dir;            /* NULL: none; every checkpoint also appended there */
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
	struct sg_gateway_config gateway; /* gateway: (gateway/gateway_conf.c) */
	struct sg_audit_config audit;     /* audit: (audit/audit_conf.c) */
	struct sg_limits_config limits;   /* limits: (limits/limits_conf.c) */
	struct sg_invest_config invest;   /* index:, retention:, sinks: (sinks/sink_conf.c) */
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

/* Frees a config and everything it owns. Accepts NULL. */
void config_free(struct sg_config *c);

/* The policy called name, or NULL. name NULL means "default", which always exists. */
const struct sg_policy *config_policy(const struct sg_config *c, const char *name);

#endif
