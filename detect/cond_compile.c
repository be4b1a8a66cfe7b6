/*
 * YAML condition -> struct cnode (docs/detection.md "Conditions"). A mapping is the AND
 * of its entries; an entry is `all: [..]`, `any: [..]`, `not: {..}` or `FIELD: TEST`,
 * where TEST is a scalar (equals), a list (in) or a mapping of operators (all must hold).
 * Every error is reported at its node's line; compiling goes on to find the others.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "detect/detect_int.h"
#include "detect/rules_int.h"

#define COND_MAX_DEPTH 16

static struct cnode *node_new(struct cfg_ctx *ctx, enum cnode_kind k)
{
	struct cnode *c = calloc(1, sizeof(*c));

	if (!c)
		ctx->oom = true;
	else
		c->kind = k;
	return c;
}

static int add_kid(struct cfg_ctx *ctx, struct cnode *p, struct cnode *kid)
{
	struct cnode **v = realloc(p->kids, (p->n + 1) * sizeof(*v));

	if (!v) {
		ctx->oom = true;
		cond_free(kid);
		return -ENOMEM;
	}
	p->kids = v;
	p->kids[p->n++] = kid;
	return 0;
}

/* ${state_dir} and ${control_socket} in s, replaced. NULL: out of memory. */
static char *expand_vars(const char *s, const struct detect_vars *v)
{
	static const char *names[] = { "${state_dir}", "${control_socket}" };
	const char *vals[] = { v && v->state_dir ? v->state_dir : "/var/lib/sandgate",
			       v && v->control_socket ? v->control_socket
						      : "/run/sandgate/control.sock" };
	char *out = strdup(s);

	for (size_t i = 0; out && i < 2; i++) {
		char *at = strstr(out, names[i]), *n;
		size_t nl = strlen(names[i]);

		if (!at)
			continue;
		n = malloc(strlen(out) - nl + strlen(vals[i]) + 1);
		if (n)
			sprintf(n, "%.*s%s%s", (int)(at - out), out, vals[i], at + nl);
		free(out);
		out = n;
		i--;   /* the same name may appear again */
	}
	return out;
}

static bool plain_num(const char *s, double *d)
{
	char *end;

	if (!*s || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
		return false;
	*d = strtod(s, &end);
	return *end == '\0';
}

int lit_from(struct rload *L, const struct cy_node *n, struct lit *l)
{
	if (n->type != CY_SCALAR) {
		cfg_err(L->ctx, n, "expected a value (string, number, true/false, null)");
		return -EINVAL;
	}
	memset(l, 0, sizeof(*l));
	l->t = LIT_STR;
	if (n->plain && (strcmp(n->str, "null") == 0 || strcmp(n->str, "~") == 0))
		l->t = LIT_NULL;
	else if (n->plain && (strcmp(n->str, "true") == 0 || strcmp(n->str, "false") == 0))
		l->t = LIT_BOOL, l->b = n->str[0] == 't';
	else if (n->plain && plain_num(n->str, &l->num))
		l->t = LIT_NUM;
	l->s = expand_vars(n->str, L->vars);
	if (!l->s) {
		L->ctx->oom = true;
		return -ENOMEM;
	}
	return 0;
}

static const struct { const char *name; enum cop op; } ops[] = {
	{ "equals", OP_EQ }, { "not_equals", OP_NE }, { "in", OP_IN }, { "glob", OP_GLOB },
	{ "regex", OP_REGEX }, { "gt", OP_GT }, { "ge", OP_GE }, { "lt", OP_LT },
	{ "le", OP_LE }, { "contains", OP_CONTAINS }, { "prefix", OP_PREFIX },
	{ "exists", OP_EXISTS }, { "eq_field", OP_EQ_FIELD }, { "ne_field", OP_NE_FIELD },
};

static int op_of(struct rload *L, const struct cy_node *k, enum cop *op)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(k->str, ops[i].name) == 0) {
			*op = ops[i].op;
			return 0;
		}
	cfg_err(L->ctx, k, "unknown operator '%.40s' (equals, not_equals, in, glob, regex, "
		"gt, ge, lt, le, contains, prefix, exists, eq_field, ne_field)", k->str);
	return -EINVAL;
}

/* The literal(s) of one operator; checks their type. */
static int test_lits(struct rload *L, struct cnode *c, const struct cy_node *v)
{
	size_t n = v->type == CY_SEQ ? v->n : 1;
	int ret = 0;

	if (v->type == CY_MAP || (v->type == CY_SEQ && c->op != OP_IN)) {
		cfg_err(L->ctx, v, c->op == OP_IN ? "'in' takes a list"
						    : "expected one value");
		return -EINVAL;
	}
	if (c->op == OP_IN && v->type != CY_SEQ) {
		cfg_err(L->ctx, v, "'in' takes a list");
		return -EINVAL;
	}
	c->lits = calloc(n ? n : 1, sizeof(*c->lits));
	if (!c->lits) {
		L->ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && ret == 0; i++, c->nlits++)
		ret = lit_from(L, v->type == CY_SEQ ? v->items[i] : v, &c->lits[i]);
	return ret;
}

/* Picks the fast path of a glob (fnmatch without flags: '*' crosses '/'). */
static void glob_kind(struct cnode *c)
{
	const char *p = c->lits[0].s, *lit = p;
	size_t n = strlen(p), len;
	bool lead, trail;

	c->glob_kind = GLOB_FN;
	if (strpbrk(p, "?[\\"))
		return;
	lead = n > 0 && p[0] == '*';
	trail = n > 1 && p[n - 1] == '*';
	lit = p + lead;
	len = n - lead - trail;
	if (memchr(lit, '*', len))
		return;
	c->glob_lit = lit;
	c->glob_len = len;
	c->glob_kind = lead && trail ? GLOB_INFIX : lead ? GLOB_SUFFIX
				     : trail ? GLOB_PREFIX : GLOB_EXACT;
}

static int test_check(struct rload *L, struct cnode *c, const struct cy_node *v)
{
	const struct lit *l = &c->lits[0];
	char msg[128];
	int rc;

	switch (c->op) {
	case OP_GT: case OP_GE: case OP_LT: case OP_LE:
		if (l->t != LIT_NUM)
			cfg_err(L->ctx, v, "a numeric comparison needs a number");
		return l->t == LIT_NUM ? 0 : -EINVAL;
	case OP_EXISTS:
		if (l->t != LIT_BOOL)
			cfg_err(L->ctx, v, "'exists' takes true or false");
		return l->t == LIT_BOOL ? 0 : -EINVAL;
	case OP_EQ_FIELD: case OP_NE_FIELD:
		if (fpath_parse(l->s, &c->f2) == 0)
			return 0;
		cfg_err(L->ctx, v, "expected a field path (a.b.c)");
		return -EINVAL;
	case OP_GLOB:
		glob_kind(c);
		return 0;
	case OP_REGEX:
		if (regex_guard(l->s, msg, sizeof(msg)) != 0) {
			cfg_err(L->ctx, v, "regular expression refused: %s", msg);
			return -EINVAL;
		}
		rc = regcomp(&c->re, l->s, REG_EXTENDED | REG_NOSUB);
		if (rc == 0) {
			c->has_re = true;
			return 0;
		}
		regerror(rc, NULL, msg, sizeof(msg));
		cfg_err(L->ctx, v, "bad regular expression: %s", msg);
		return -EINVAL;
	default:
		return 0;
	}
}

/* FIELD: {op: value} for one op; a list for glob/regex/contains/prefix is any of them. */
static struct cnode *one_test(struct rload *L, const struct fpath *f, enum cop op,
			      const struct cy_node *v)
{
	bool multi = v->type == CY_SEQ && op != OP_IN;
	struct cnode *c = node_new(L->ctx, multi ? CN_ANY : CN_TEST);
	int ret = 0;

	if (!c)
		return NULL;
	for (size_t i = 0; multi && i < v->n && ret == 0; i++) {
		struct cnode *k = one_test(L, f, op, v->items[i]);

		ret = k ? add_kid(L->ctx, c, k) : -EINVAL;
	}
	if (!multi) {
		c->op = op;
		ret = fpath_parse_copy(f, &c->f);
		if (ret == 0)
			ret = test_lits(L, c, v);
		if (ret == 0)
			ret = test_check(L, c, v);
	}
	if (ret) {
		cond_free(c);
		return NULL;
	}
	return c;
}

static struct cnode *field_test(struct rload *L, const struct cy_node *k,
				const struct cy_node *v)
{
	struct cnode *all = NULL, *t;
	struct fpath f;
	enum cop op;

	if (fpath_parse(k->str, &f)) {
		cfg_err(L->ctx, k, "'%.40s' is not a field path (a.b.c)", k->str);
		fpath_free(&f);
		return NULL;
	}
	if (v->type != CY_MAP) {
		t = one_test(L, &f, v->type == CY_SEQ ? OP_IN : OP_EQ, v);
		fpath_free(&f);
		return t;
	}
	all = v->n ? node_new(L->ctx, CN_ALL) : NULL;
	if (!v->n)
		cfg_err(L->ctx, v, "an empty test");
	for (size_t i = 0; all && i + 1 < v->n; i += 2) {
		t = v->items[i]->type != CY_SCALAR || op_of(L, v->items[i], &op) ? NULL : one_test(L, &f, op, v->items[i + 1]);
		if (!t || add_kid(L->ctx, all, t)) {
			cond_free(all);
			all = NULL;
		}
	}
	fpath_free(&f);
	return all;
}

static struct cnode *entry(struct rload *L, const struct cy_node *k, const struct cy_node *v,
			   unsigned depth)
{
	bool is_all = k->str && strcmp(k->str, "all") == 0;
	bool is_any = k->str && strcmp(k->str, "any") == 0;
	struct cnode *c, *kid;

	if (k->type != CY_SCALAR)
		return NULL;   /* reported by the parser */
	if (!is_all && !is_any && strcmp(k->str, "not") != 0)
		return field_test(L, k, v);
	if ((is_all || is_any) && (v->type != CY_SEQ || v->n == 0)) {
		cfg_err(L->ctx, v, "'%s' takes a non-empty list of conditions", k->str);
		return NULL;
	}
	c = node_new(L->ctx, is_all ? CN_ALL : is_any ? CN_ANY : CN_NOT);
	for (size_t i = 0; c && i < (v->type == CY_SEQ ? v->n : 1); i++) {
		kid = cond_compile(L, v->type == CY_SEQ ? v->items[i] : v, depth + 1);
		if (!kid || add_kid(L->ctx, c, kid)) {
			cond_free(c);
			c = NULL;
		}
	}
	return c;
}

struct cnode *cond_compile(struct rload *L, const struct cy_node *n, unsigned depth)
{
	struct cnode *all, *kid;

	if (depth > COND_MAX_DEPTH) {
		cfg_err(L->ctx, n, "conditions nested deeper than %d", COND_MAX_DEPTH);
		return NULL;
	}
	if (n->type != CY_MAP || n->n == 0) {
		cfg_err(L->ctx, n, "a condition is a non-empty mapping (FIELD: TEST, all, any, not)");
		return NULL;
	}
	if (n->n == 2)
		return entry(L, n->items[0], n->items[1], depth);
	all = node_new(L->ctx, CN_ALL);
	for (size_t i = 0; all && i + 1 < n->n; i += 2) {
		kid = entry(L, n->items[i], n->items[i + 1], depth);
		if (!kid || add_kid(L->ctx, all, kid)) {
			cond_free(all);
			all = NULL;
		}
	}
	return all;
}
