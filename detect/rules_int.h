/* The rules loader's shared bits (detect/rules_load.c, detect/cond_compile.c). */
#ifndef SANDGATE_DETECT_RULES_INT_H
#define SANDGATE_DETECT_RULES_INT_H

#include "conf/conf.h"
#include "detect/detect_int.h"

struct rload {
	struct cfg_ctx *ctx;
	const struct detect_vars *vars;
};

/* A condition node tree; NULL after reporting an error (or out of memory: ctx->oom). */
struct cnode *cond_compile(struct rload *L, const struct cy_node *n, unsigned depth);
/* One YAML scalar as a literal, ${vars} expanded. 0, -EINVAL (reported), -ENOMEM. */
int lit_from(struct rload *L, const struct cy_node *n, struct lit *l);
/* 0 when regcomp may be given re; -1 with the reason in why (detect/regex_guard.c). */
int regex_guard(const char *re, char *why, size_t len);
int fpath_parse_copy(const struct fpath *src, struct fpath *dst);

#endif
