/*
 * Internal to the config loader (daemon/config*.c): the section readers config.c's
 * top-level table calls. Each moves to its part in the following commits.
 */
#ifndef SANDGATE_DAEMON_CONFIG_INT_H
#define SANDGATE_DAEMON_CONFIG_INT_H

#include "conf/conf.h"
#include "daemon/config.h"

/* Policies (config_policy.c). */
int cfg_policies(struct cfg_ctx *ctx, const struct cy_node *val, void *base,
		 const struct cfg_key *k);
int cfg_policy_embedded_default(struct sg_config *c);
void cfg_policy_free(struct sg_policy *p);

#endif
