/*
 * The `detection:` section (daemon/config_detect.c; docs/config.md "detection"): which
 * rules files the detection engine loads (detect/detect.h) and its alert rate limit.
 */
#ifndef SANDGATE_DAEMON_CONFIG_DETECT_H
#define SANDGATE_DAEMON_CONFIG_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sg_detect_config {
	bool enabled;                 /* default true */
	char **rules;                 /* files or directories; default: the shipped rules/ */
	size_t n_rules;
	bool rules_default;           /* rules is the default: a missing directory is no error */
	uint64_t rate_limit;          /* alerts per rule and session per rate_interval; 0: none */
	uint64_t rate_interval_ms;    /* default 60 s */
};

struct cfg_ctx;
struct cy_node;
struct cfg_key;

int cfg_detect(struct cfg_ctx *ctx, const struct cy_node *val, void *base,
	       const struct cfg_key *k);
int cfg_detect_default(struct sg_detect_config *c);
void cfg_detect_free(struct sg_detect_config *c);

#endif
