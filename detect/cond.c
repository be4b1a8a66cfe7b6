/*
 * Evaluating compiled conditions on a parsed event. A field that holds an array matches
 * a string or number test when any element does (args: {glob: "-e"}); "not equal" is
 * the negation of "equal". Missing fields are null: they equal `null` and nothing else.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect_int.h"
#include "detect/rules_int.h"

int fpath_parse(const char *s, struct fpath *f)
{
	size_t n = 1;
	char *copy, *save = NULL, *tok;

	memset(f, 0, sizeof(*f));
	for (const char *p = s; *p; p++)
		n += *p == '.';
	f->parts = calloc(n, sizeof(*f->parts));
	copy = strdup(s);
	if (!f->parts || !copy) {
		free(copy);
		fpath_free(f);
		return -ENOMEM;
	}
	for (tok = strtok_r(copy, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		f->parts[f->n] = strdup(tok);
		if (!f->parts[f->n]) {
			free(copy);
			fpath_free(f);
			return -ENOMEM;
		}
		f->n++;
	}
	free(copy);
	if (f->n == n)
		return 0;
	fpath_free(f);   /* "a..b", ".a", "a.": empty parts */
	return -EINVAL;
}

int fpath_parse_copy(const struct fpath *src, struct fpath *dst)
{
	memset(dst, 0, sizeof(*dst));
	dst->parts = calloc(src->n ? src->n : 1, sizeof(*dst->parts));
	if (!dst->parts)
		return -ENOMEM;
	for (; dst->n < src->n; dst->n++)
		if (!(dst->parts[dst->n] = strdup(src->parts[dst->n]))) {
			fpath_free(dst);
			return -ENOMEM;
		}
	return 0;
}

void fpath_free(struct fpath *f)
{
	for (size_t i = 0; f->parts && i < f->n; i++)
		free(f->parts[i]);
	free(f->parts);
	f->parts = NULL;
	f->n = 0;
}

json_t *field_get(const struct fpath *f, const struct eval_ctx *x)
{
	json_t *v = x->ev;
	size_t i = 0;

	if (f->n > 1 && strcmp(f->parts[0], "session") == 0) {
		v = x->session;
		i = 1;
	}
	for (; v && i < f->n; i++)
		v = json_is_object(v) ? json_object_get(v, f->parts[i]) : NULL;
	return v;
}

static bool is_null(const json_t *v)
{
	return !v || json_is_null(v);
}

static bool num_of(const json_t *v, double *out)
{
	char *end;

	if (json_is_number(v)) {
		*out = json_number_value(v);
		return true;
	}
	if (!json_is_string(v) || json_string_length(v) == 0)
		return false;
	*out = strtod(json_string_value(v), &end);
	return *end == '\0';
}

static bool lit_eq(const struct lit *l, const json_t *v)
{
	double d;

	switch (l->t) {
	case LIT_NULL:
		return is_null(v);
	case LIT_BOOL:
		return json_is_boolean(v) && json_boolean_value(v) == l->b;
	case LIT_NUM:
		if (json_is_number(v))
			return num_of(v, &d) && d == l->num;
		return json_is_string(v) && strcmp(json_string_value(v), l->s) == 0;
	case LIT_STR:
		if (json_is_string(v))
			return strcmp(json_string_value(v), l->s) == 0;
		/* "0" written quoted still equals the number 0 */
		return json_is_number(v) && num_of(v, &d) && l->s[0] != '\0' &&
		       strtod(l->s, NULL) == d;
	}
	return false;
}

static bool glob_match(const struct cnode *c, const char *s, size_t n)
{
	switch (c->glob_kind) {
	case GLOB_SUFFIX:
		return n >= c->glob_len && memcmp(s + n - c->glob_len, c->glob_lit, c->glob_len) == 0;
	case GLOB_PREFIX:
		return n >= c->glob_len && memcmp(s, c->glob_lit, c->glob_len) == 0;
	case GLOB_INFIX:
		return memmem(s, n, c->glob_lit, c->glob_len) != NULL;
	case GLOB_EXACT:
		return n == c->glob_len && memcmp(s, c->glob_lit, n) == 0;
	default:
		return fnmatch(c->lits[0].s, s, 0) == 0;
	}
}

/* One scalar against the test (arrays are handled by the caller). */
static bool scalar_match(const struct cnode *c, const json_t *v)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	double d;

	switch (c->op) {
	case OP_EQ:
	case OP_NE:
		return lit_eq(&c->lits[0], v);
	case OP_IN:
		for (size_t i = 0; i < c->nlits; i++)
			if (lit_eq(&c->lits[i], v))
				return true;
		return false;
	case OP_GLOB:
		return s && glob_match(c, s, json_string_length(v));
	case OP_REGEX:
		return s && regexec(&c->re, s, 0, NULL, 0) == 0;
	case OP_CONTAINS:
		return s && strstr(s, c->lits[0].s) != NULL;
	case OP_PREFIX:
		return s && strncmp(s, c->lits[0].s, strlen(c->lits[0].s)) == 0;
	case OP_GT: return num_of(v, &d) && d > c->lits[0].num;
	case OP_GE: return num_of(v, &d) && d >= c->lits[0].num;
	case OP_LT: return num_of(v, &d) && d < c->lits[0].num;
	case OP_LE: return num_of(v, &d) && d <= c->lits[0].num;
	default:
		return false;
	}
}

static bool test_eval(const struct cnode *c, const struct eval_ctx *x)
{
	json_t *v = field_get(&c->f, x), *w;
	size_t i;

	if (c->op == OP_EXISTS)
		return !is_null(v) == c->lits[0].b;
	if (c->op == OP_EQ_FIELD || c->op == OP_NE_FIELD) {
		w = field_get(&c->f2, x);
		if (is_null(v) || is_null(w))
			return false;
		return json_equal(v, w) == (c->op == OP_EQ_FIELD);
	}
	if (json_is_array(v)) {
		json_t *el;
		bool any = false;

		json_array_foreach(v, i, el)
			if ((any = scalar_match(c, el)))
				break;
		return c->op == OP_NE ? !any : any;
	}
	return c->op == OP_NE ? !scalar_match(c, v) : scalar_match(c, v);
}

bool cond_eval(const struct cnode *c, const struct eval_ctx *x)
{
	switch (c->kind) {
	case CN_ALL:
		for (size_t i = 0; i < c->n; i++)
			if (!cond_eval(c->kids[i], x))
				return false;
		return true;
	case CN_ANY:
		for (size_t i = 0; i < c->n; i++)
			if (cond_eval(c->kids[i], x))
				return true;
		return false;
	case CN_NOT:
		return !cond_eval(c->kids[0], x);
	case CN_TEST:
		return test_eval(c, x);
	}
	return false;
}

void cond_free(struct cnode *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		cond_free(c->kids[i]);
	free(c->kids);
	fpath_free(&c->f);
	fpath_free(&c->f2);
	for (size_t i = 0; i < c->nlits; i++)
		free(c->lits[i].s);
	free(c->lits);
	if (c->has_re)
		regfree(&c->re);
	free(c);
}
