/*
 * The `detection:` section: enabled, rules (files or directories, loaded in order),
 * rate_limit and rate_interval. The rules themselves are validated by the detect part
 * (sandgated --check-config loads them too: daemon/detect_glue.c).
 */
#include "detect/detect_conf.h"
#include "conf/conf.h"
#include "common/paths.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>


#define F(T, f) offsetof(T, f)
#define RULES_PATHS_MAX 64

void cfg_detect_free(struct sg_detect_config *c)
{
	for (size_t i = 0; i < c->n_rules; i++)
		free(c->rules[i]);
	free(c->rules);
	c->rules = NULL;
	c->n_rules = 0;
}

int cfg_detect_default(struct sg_detect_config *c)
{
	memset(c, 0, sizeof(*c));
	c->enabled = true;
	c->rate_limit = 10;
	c->rate_interval_ms = 60000;
	c->rules_default = true;
	c->rules = calloc(1, sizeof(*c->rules));
	if (!c->rules || !(c->rules[0] = strdup(sg_rules_dir())))
		return -ENOMEM;
	c->n_rules = 1;
	return 0;
}

static int key_rules(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		     const struct cfg_key *k)
{
	struct sg_detect_config *c = base;
	const char *s;
	int ret = 0;

	(void)k;
	if (cy_need(ctx, v, CY_SEQ, "a list of rules files or directories"))
		return -EINVAL;
	if (v->n > RULES_PATHS_MAX) {
		cfg_err(ctx, v, "at most %d entries", RULES_PATHS_MAX);
		return -EINVAL;
	}
	cfg_detect_free(c);
	c->rules_default = false;
	c->rules = calloc(v->n + 1, sizeof(*c->rules));
	if (!c->rules) {
		ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->n && !ctx->oom; i++) {
		if (cy_str(ctx, v->items[i], &s)) {
			ret = -EINVAL;
		} else if (s[0] != '/') {
			cfg_err(ctx, v->items[i], "expected an absolute path");
			ret = -EINVAL;
		} else if (cfg_set_str(ctx, &c->rules[c->n_rules], s) == 0) {
			c->n_rules++;
		}
	}
	return ctx->oom ? -ENOMEM : ret;
}

#define DC struct sg_detect_config
static const struct cfg_key detect_keys[] = {
	{ "enabled", CK_BOOL, F(DC, enabled), 0, 0, 0, NULL, NULL },
	{ "rules", CK_CUSTOM, 0, 0, 0, 0, NULL, key_rules },
	{ "rate_limit", CK_UINT, F(DC, rate_limit), sizeof(uint64_t), 0, 1000000, NULL, NULL },
	{ "rate_interval", CK_DURATION, F(DC, rate_interval_ms), 0, 1000, 86400000, NULL, NULL },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};
#undef DC

int cfg_detect(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_detect_config *c)
{
	return cfg_walk(ctx, v, detect_keys, c, "detection");
}
