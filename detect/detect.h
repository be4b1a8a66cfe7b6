/*
 * Detection: rules (YAML files, docs/detection.md) evaluated against every journal line
 * as it is appended, plus stateful detectors (pipe to shell, exfiltration shape,
 * clean-up before the end, bursts of blocked egress, first-seen domains per tenant).
 * A match becomes an alert (rule, severity, summary, refs = the seq of the triggering
 * lines, tags), rate-limited per rule and session, handed to a callback: the daemon
 * turns it into an `alert` event (daemon/detect_glue.c).
 *
 * The engine is fed journal lines (JSON text, parsed with jansson here), so it sees
 * every event with its seq without hooking any emitter. One lock per engine: a follower
 * thread feeds it while SIGHUP (detect_set_rules) and /metrics (detect_metrics) come from
 * other threads. The alert callback runs under that lock. Nothing here logs.
 */
#ifndef SANDGATE_DETECT_DETECT_H
#define SANDGATE_DETECT_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "conf/errors.h"   /* struct config_errors: rule errors are FILE:LINE too */

#define DETECT_MAX_RULES 1024
#define DETECT_MAX_REFS 32        /* refs kept per alert (the most recent) */

/* ---- rules ------------------------------------------------------------------------- */

struct detect_rules;
struct shape;            /* journal/shape.h */

/* Values substituted for ${state_dir} and ${control_socket} in rule patterns. */
struct detect_vars {
	const char *state_dir;
	const char *control_socket;
};

/*
 * Parses one rules file (text[0..len), named name in errors) and appends its rules to
 * *rules (created when NULL). Every error is appended to errs as FILE:LINE:COL.
 * Returns 0, -EINVAL (errors reported; *rules unchanged in content), -ENOMEM.
 */
int detect_rules_load_buffer(struct detect_rules **rules, const char *name,
			     const char *text, size_t len, const struct detect_vars *v,
			     struct config_errors *errs);

/*
 * Loads every path in paths: a file, or a directory whose *.yaml / *.yml files are read
 * in name order. Into a new set on success (*out), nothing on any error. Returns 0,
 * -EINVAL (errors in errs), -ENOENT (a path is missing, in errs), -ENOMEM.
 */
int detect_rules_load_paths(struct detect_rules **out, char *const *paths, size_t n,
			    const struct detect_vars *v, struct config_errors *errs);

size_t detect_rules_count(const struct detect_rules *r);
/* The id of the i-th rule (load order), or NULL. */
const char *detect_rules_id(const struct detect_rules *r, size_t i);
void detect_rules_free(struct detect_rules *r);

/* ---- the engine -------------------------------------------------------------------- */

struct detect_alert {
	const char *rule;
	const char *severity;          /* info, low, medium, high, critical */
	const char *summary;
	const char *session_id;        /* of the triggering event; NULL for host-level */
	const char *trigger;           /* event type of the last triggering line */
	const uint64_t *refs;          /* seq of the triggering lines, ascending */
	size_t n_refs;
	char *const *tags;
	size_t n_tags;
	uint64_t suppressed;           /* alerts of this rule and session dropped before */
};

/* Returns 0, or -errno: the engine counts it as an alert not recorded. */
typedef int (*detect_alert_fn)(void *ctx, const struct detect_alert *a);

struct detect_settings {
	unsigned rate_max;             /* alerts per rule and session per rate_window */
	uint64_t rate_window_ms;
	const char *state_dir;         /* first-seen domains persisted here; NULL: memory */
	detect_alert_fn on_alert;
	void *ctx;
};

struct detect;

/* rules is taken (freed with the engine). 0, -ENOMEM, -EIO (domain state unreadable). */
int detect_new(struct detect **out, const struct detect_settings *s, struct detect_rules *rules);
/* Replaces the rules (takes r; the old set is freed) and forgets the rate limits. */
void detect_set_rules(struct detect *d, struct detect_rules *r);
void detect_free(struct detect *d);

/*
 * Evaluates one journal line (not NUL-terminated). Lines that are not JSON objects are
 * counted and skipped; `alert` lines are skipped (no loops), and so are, unparsed, the
 * lines of an event type no rule reads. Returns 0 or -ENOMEM.
 */
int detect_feed_line(struct detect *d, const char *line, size_t len);

/*
 * The same line with its shape from the journal's writer (journal/handoff.h): its fields
 * are taken from the shape, without a JSON parse. A shape that does not describe the
 * line is set aside and the line parsed (counted in shape_refused). shape may be NULL.
 */
int detect_feed_shaped(struct detect *d, const char *line, size_t len,
		       const struct shape *shape);

/* Writes the persisted state (first-seen domains) if it changed. 0 or -errno. */
int detect_flush(struct detect *d);

/* lines: all fed; unread: of a type no rule reads (not parsed); bad_lines: of the rest;
 * parsed: read lines taken by parsing their JSON (no shape); shaped: from their shape. */
struct detect_stats {
	uint64_t lines, unread, bad_lines, alerts, suppressed, emit_errors;
	uint64_t parsed, shaped, shape_refused;
	size_t rules, sessions;
};
void detect_get_stats(struct detect *d, struct detect_stats *st);
/* Per-rule alert counts, Prometheus text, for /metrics. 0 or -EIO. */
int detect_metrics(struct detect *d, FILE *f);

#endif
