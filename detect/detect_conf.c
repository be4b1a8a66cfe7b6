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
	cfg_str_list_free(c->rules, c->n_rules);
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

static bool abs_item_ok(const char *s, const void *arg)
{
	(void)arg;
	return s[0] == '/';
}

static const struct cfg_list_spec rules_spec = {
	"a list of rules files or directories", RULES_PATHS_MAX, abs_item_ok, NULL,
	"expected an absolute path",
};

static int key_rules(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		     const struct cfg_key *k)
{
	struct sg_detect_config *c = base;

	(void)k;
	c->rules_default = false;
	return cfg_str_list(ctx, v, &rules_spec, &c->rules, &c->n_rules);
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
