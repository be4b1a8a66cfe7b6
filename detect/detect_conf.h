/*
 * The `detection:` section (detect/detect_conf.c; docs/config.md "detection"): which
 * rules files the detection engine loads (detect/detect.h) and its alert rate limit.
 */
#ifndef SANDGATE_DETECT_DETECT_CONF_H
#define SANDGATE_DETECT_DETECT_CONF_H

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

/* Reads the `detection:` mapping v into c (conf/conf.h readers). 0, -EINVAL, -ENOMEM. */
int cfg_detect(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_detect_config *c);
int cfg_detect_default(struct sg_detect_config *c);
void cfg_detect_free(struct sg_detect_config *c);

#endif
