/*
 * YAML text -> a small node tree with line numbers (libyaml's event API). The tree lets
 * the schema code report every error in one pass and look at a mapping as a whole
 * (duplicate keys). Input is untrusted: nesting depth and collection sizes are bounded,
 * aliases are refused (no "billion laughs"), and any libyaml error stops the parse.
 */
#include "conf/conf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct cy_parser {
	yaml_parser_t p;
	struct cfg_ctx *ctx;
	const char *text;
	size_t len;
};

/* Parse status beyond 0 / -ENOMEM: the tree cannot be trusted, stop (already reported). */
#define CY_ABORT (-EINVAL)

#define QUOTE_HINT " (quote a wildcard domain: \"*.example.test\")"

static unsigned mark_line(const yaml_mark_t *m) { return (unsigned)m->line + 1; }
static unsigned mark_col(const yaml_mark_t *m) { return (unsigned)m->column + 1; }

void cy_free(struct cy_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		cy_free(n->items[i]);
	free(n->items);
	free(n->str);
	free(n);
}

/* The reader (encoding) stage gives a byte offset, not a mark: count lines ourselves. */
static void cy_reader_error(struct cy_parser *ps)
{
	size_t off = ps->p.problem_offset < ps->len ? ps->p.problem_offset : ps->len;
	unsigned line = 1, col = 1;

	for (size_t i = 0; i < off; i++) {
		col++;
		if (ps->text[i] == '\n') {
			line++;
			col = 1;
		}
	}
	cfg_err_at(ps->ctx, line, col, "%s (byte %zu)",
		   ps->p.problem ? ps->p.problem : "invalid input", off);
}

static int cy_next(struct cy_parser *ps, yaml_event_t *ev)
{
	const yaml_parser_t *p = &ps->p;

	if (yaml_parser_parse(&ps->p, ev))
		return 0;
	if (p->error == YAML_MEMORY_ERROR) {
		ps->ctx->oom = true;
		return -ENOMEM;
	}
	if (p->error == YAML_READER_ERROR) {
		cy_reader_error(ps);
		return CY_ABORT;
	}
	/* An unquoted "*.example.test" is read as an alias: say what to do about it. */
	cfg_err_at(ps->ctx, mark_line(&p->problem_mark), mark_col(&p->problem_mark),
		   "YAML syntax error: %s%s%s%s", p->problem ? p->problem : "invalid input",
		   p->context ? " " : "", p->context ? p->context : "",
		   p->context && strstr(p->context, "alias") ? QUOTE_HINT : "");
	return CY_ABORT;
}

static struct cy_node *cy_new(struct cy_parser *ps, enum cy_type t, const yaml_event_t *ev)
{
	struct cy_node *n = calloc(1, sizeof(*n));

	if (!n) {
		ps->ctx->oom = true;
		return NULL;
	}
	n->type = t;
	n->line = mark_line(&ev->start_mark);
	n->col = mark_col(&ev->start_mark);
	return n;
}

/* Explicit tags would change a value's type behind the schema's back: refuse them. */
static void cy_check_tag(struct cy_parser *ps, const yaml_event_t *ev, const yaml_char_t *tag)
{
	if (tag)
		cfg_err_at(ps->ctx, mark_line(&ev->start_mark), mark_col(&ev->start_mark),
			   "YAML tags are not supported");
}

static int cy_scalar(struct cy_parser *ps, const yaml_event_t *ev, struct cy_node **out)
{
	struct cy_node *n = cy_new(ps, CY_SCALAR, ev);
	size_t len = ev->data.scalar.length;

	if (!n)
		return -ENOMEM;
	n->str = malloc(len + 1);
	if (!n->str) {
		free(n);
		ps->ctx->oom = true;
		return -ENOMEM;
	}
	memcpy(n->str, ev->data.scalar.value, len);
	n->str[len] = '\0';
	n->len = len;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	cy_check_tag(ps, ev, ev->data.scalar.tag);
	*out = n;
	return 0;
}

static int cy_append(struct cy_parser *ps, struct cy_node *parent, struct cy_node *child)
{
	if (parent->n >= (parent->type == CY_MAP ? 2 * CY_MAX_ITEMS : CY_MAX_ITEMS)) {
		cfg_err_at(ps->ctx, child->line, child->col,
			   "too many entries in one list or mapping (limit %u)", CY_MAX_ITEMS);
		cy_free(child);
		return CY_ABORT;
	}
	if (parent->n % 64 == 0) {
		struct cy_node **v = realloc(parent->items, (parent->n + 64) * sizeof(*v));

		if (!v) {
			cy_free(child);
			ps->ctx->oom = true;
			return -ENOMEM;
		}
		parent->items = v;
	}
	parent->items[parent->n++] = child;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct cy_node *x = *(const struct cy_node *const *)a;
	const struct cy_node *y = *(const struct cy_node *const *)b;
	size_t m = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->str, y->str, m);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->col < y->col ? -1 : (x->col > y->col);
}

/*
 * Reports keys that are not scalars and every repeat of a key, at the repeat's line.
 * Sorting (key, position) keeps this O(n log n) for big policy maps.
 */
static int cy_check_keys(struct cy_parser *ps, const struct cy_node *map)
{
	size_t nk = 0, pairs = map->n / 2;
	const struct cy_node **keys;
	char shown[CFG_SHOW_MAX];

	if (pairs == 0)
		return 0;
	keys = calloc(pairs, sizeof(*keys));
	if (!keys) {
		ps->ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < pairs; i++) {
		const struct cy_node *k = map->items[2 * i];

		if (k->type != CY_SCALAR)
			cfg_err_at(ps->ctx, k->line, k->col, "mapping keys must be plain strings");
		else
			keys[nk++] = k;
	}
	qsort(keys, nk, sizeof(*keys), key_cmp);
	for (size_t i = 1, first = 0; i < nk; i++) {
		if (keys[i]->len != keys[first]->len ||
		    memcmp(keys[i]->str, keys[first]->str, keys[i]->len) != 0) {
			first = i;
			continue;
		}
		cfg_show(keys[i]->str, shown);
		cfg_err_at(ps->ctx, keys[i]->line, keys[i]->col,
			   "duplicate key '%s' (first at line %u)", shown, keys[first]->line);
	}
	free(keys);
	return 0;
}

static int cy_node_from(struct cy_parser *ps, const yaml_event_t *ev, unsigned depth,
			struct cy_node **out);

static int cy_collection(struct cy_parser *ps, const yaml_event_t *ev, enum cy_type t,
			 unsigned depth, struct cy_node **out)
{
	yaml_event_type_t end = t == CY_MAP ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
	struct cy_node *n = cy_new(ps, t, ev);
	int ret = 0;

	if (!n)
		return -ENOMEM;
	for (;;) {
		yaml_event_t cev;
		struct cy_node *child = NULL;

		ret = cy_next(ps, &cev);
		if (ret)
			break;
		if (cev.type == end) {
			yaml_event_delete(&cev);
			break;
		}
		ret = cy_node_from(ps, &cev, depth + 1, &child);
		yaml_event_delete(&cev);
		if (ret == 0)
			ret = cy_append(ps, n, child);
		if (ret)
			break;
	}
	if (ret == 0 && t == CY_MAP)
		ret = cy_check_keys(ps, n);
	if (ret) {
		cy_free(n);
		return ret;
	}
	*out = n;
	return 0;
}

/* Builds the node that starts with event ev (owned by the caller). */
static int cy_node_from(struct cy_parser *ps, const yaml_event_t *ev, unsigned depth,
			struct cy_node **out)
{
	unsigned line = mark_line(&ev->start_mark), col = mark_col(&ev->start_mark);

	if (depth > CY_MAX_DEPTH) {
		cfg_err_at(ps->ctx, line, col, "nesting deeper than %u levels", CY_MAX_DEPTH);
		return CY_ABORT;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return cy_scalar(ps, ev, out);
	case YAML_SEQUENCE_START_EVENT:
		cy_check_tag(ps, ev, ev->data.sequence_start.tag);
		return cy_collection(ps, ev, CY_SEQ, depth, out);
	case YAML_MAPPING_START_EVENT:
		cy_check_tag(ps, ev, ev->data.mapping_start.tag);
		return cy_collection(ps, ev, CY_MAP, depth, out);
	case YAML_ALIAS_EVENT:
		cfg_err_at(ps->ctx, line, col, "YAML aliases (*name) are not supported"
			   QUOTE_HINT);
		return CY_ABORT;
	default:
		cfg_err_at(ps->ctx, line, col, "unexpected YAML structure");
		return CY_ABORT;
	}
}

/* Expects ev to be of type t; anything else after the one document is an error. */
static int cy_expect(struct cy_parser *ps, yaml_event_type_t t, const char *what)
{
	yaml_event_t ev;
	int ret = cy_next(ps, &ev);

	if (ret)
		return ret;
	if (ev.type != t) {
		cfg_err_at(ps->ctx, mark_line(&ev.start_mark), mark_col(&ev.start_mark), "%s",
			   what);
		ret = CY_ABORT;
	}
	yaml_event_delete(&ev);
	return ret;
}

/* After STREAM_START: an empty stream, or one document holding one node. */
static int cy_document(struct cy_parser *ps, struct cy_node **root)
{
	yaml_event_t ev;
	int ret = cy_next(ps, &ev);

	if (ret)
		return ret;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		return 0;
	}
	yaml_event_delete(&ev);   /* DOCUMENT_START: libyaml guarantees the order */
	ret = cy_next(ps, &ev);
	if (ret)
		return ret;
	ret = cy_node_from(ps, &ev, 1, root);
	yaml_event_delete(&ev);
	if (ret == 0)
		ret = cy_expect(ps, YAML_DOCUMENT_END_EVENT, "unexpected YAML structure");
	if (ret == 0)
		ret = cy_expect(ps, YAML_STREAM_END_EVENT, "only one YAML document per file");
	return ret;
}

int cy_parse(struct cfg_ctx *ctx, const char *text, size_t len, struct cy_node **root)
{
	struct cy_parser ps = { .ctx = ctx, .text = text, .len = len };
	int ret;

	*root = NULL;
	if (!yaml_parser_initialize(&ps.p)) {
		ctx->oom = true;
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&ps.p, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&ps.p, YAML_UTF8_ENCODING);
	ret = cy_expect(&ps, YAML_STREAM_START_EVENT, "unexpected YAML structure");
	if (ret == 0)
		ret = cy_document(&ps, root);
	yaml_parser_delete(&ps.p);
	if (ret) {
		cy_free(*root);
		*root = NULL;
	}
	return ret == -ENOMEM ? -ENOMEM : 0;
}
