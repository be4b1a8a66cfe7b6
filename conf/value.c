/*
 * Typed readers over the YAML node tree and the table-driven mapping walker. Every
 * reader reports its own error at the node's line and returns -EINVAL, so the schema
 * code just keeps going and all errors of a file come out in one run.
 */
#include "conf/conf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void cfg_show(const char *s, char out[CFG_SHOW_MAX])
{
	size_t o = 0;

	/* Messages go to terminals: never echo control bytes or unbounded input. */
	for (; *s && o + 5 < CFG_SHOW_MAX; s++) {
		unsigned char c = (unsigned char)*s;

		out[o++] = (c >= 0x20 && c != 0x7f) ? (char)c : '?';
	}
	if (*s) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

static void cfg_verr(struct cfg_ctx *ctx, unsigned line, unsigned col, const char *prefix,
		     const char *fmt, va_list ap)
{
	char msg[512];
	size_t off = 0;

	ctx->nerr++;
	if (!ctx->errs)
		return;
	if (prefix && *prefix)
		off = (size_t)snprintf(msg, sizeof(msg), "%s: ", prefix);
	if (off >= sizeof(msg))
		off = 0;
	vsnprintf(msg + off, sizeof(msg) - off, fmt, ap);
	if (config_errors_add(ctx->errs, ctx->file, line, col, msg))
		ctx->oom = true;
}

void cfg_err_at(struct cfg_ctx *ctx, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_verr(ctx, line, col, NULL, fmt, ap);
	va_end(ap);
}

void cfg_err(struct cfg_ctx *ctx, const struct cy_node *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_verr(ctx, n ? n->line : 0, n ? n->col : 0, ctx->path, fmt, ap);
	va_end(ap);
}

int cfg_set_str(struct cfg_ctx *ctx, char **field, const char *s)
{
	char *copy = NULL;

	if (s) {
		copy = strdup(s);
		if (!copy) {
			ctx->oom = true;
			return -ENOMEM;
		}
	}
	free(*field);
	*field = copy;
	return 0;
}

bool cy_is_null(const struct cy_node *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

	if (!n || n->type != CY_SCALAR || !n->plain)
		return false;
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (strcmp(n->str, nulls[i]) == 0)
			return true;
	return false;
}

const char *cy_type_name(const struct cy_node *n)
{
	if (n->type == CY_MAP)
		return "a mapping";
	if (n->type == CY_SEQ)
		return "a list";
	return cy_is_null(n) ? "null" : "a scalar";
}

int cy_need(struct cfg_ctx *ctx, const struct cy_node *n, enum cy_type t, const char *what)
{
	if (n->type == t && !(t == CY_SCALAR && cy_is_null(n)))
		return 0;
	cfg_err(ctx, n, "expected %s, got %s", what, cy_type_name(n));
	return -EINVAL;
}

int cy_str(struct cfg_ctx *ctx, const struct cy_node *n, const char **out)
{
	if (cy_need(ctx, n, CY_SCALAR, "a string"))
		return -EINVAL;
	if (strlen(n->str) != n->len) {
		cfg_err(ctx, n, "string contains a NUL byte");
		return -EINVAL;
	}
	if (n->len == 0) {
		cfg_err(ctx, n, "must not be empty");
		return -EINVAL;
	}
	*out = n->str;
	return 0;
}

int cy_bool(struct cfg_ctx *ctx, const struct cy_node *n, bool *out)
{
	static const char *const t[] = { "true", "True", "TRUE" };
	static const char *const f[] = { "false", "False", "FALSE" };

	if (n->type == CY_SCALAR && n->plain) {
		for (size_t i = 0; i < 3; i++) {
			if (strcmp(n->str, t[i]) == 0 || strcmp(n->str, f[i]) == 0) {
				*out = strcmp(n->str, t[i]) == 0;
				return 0;
			}
		}
	}
	cfg_err(ctx, n, "expected true or false");
	return -EINVAL;
}

static int parse_u64(const char *s, size_t *used, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (i == 0)
		return -EINVAL;
	*used = i;
	*out = v;
	return 0;
}

static int range_check(struct cfg_ctx *ctx, const struct cy_node *n, uint64_t v,
		       uint64_t min, uint64_t max, const char *unit)
{
	if (v >= min && v <= max)
		return 0;
	cfg_err(ctx, n, "%s is out of range (%llu..%llu%s)", n->str, (unsigned long long)min,
		(unsigned long long)max, unit);
	return -EINVAL;
}

int cy_uint(struct cfg_ctx *ctx, const struct cy_node *n, uint64_t min, uint64_t max,
	    uint64_t *out)
{
	size_t used = 0;
	uint64_t v = 0;
	int r;

	if (n->type != CY_SCALAR || !n->plain) {
		cfg_err(ctx, n, "expected an integer, got %s",
			n->type == CY_SCALAR ? "a quoted string" : cy_type_name(n));
		return -EINVAL;
	}
	r = parse_u64(n->str, &used, &v);
	if (r == 0 && n->str[used] != '\0')
		r = -EINVAL;
	if (r == -ERANGE)
		v = UINT64_MAX;
	else if (r) {
		cfg_err(ctx, n, "expected a non-negative integer, got '%.40s'", n->str);
		return -EINVAL;
	}
	if (range_check(ctx, n, v, min, max, ""))
		return -EINVAL;
	*out = v;
	return 0;
}

/* K/M/G/T (and Ki, KiB...) are powers of 1024; KB/MB/GB/TB are powers of 1000. */
static int size_unit(const char *u, uint64_t *mult)
{
	static const char prefixes[] = "kmgt";
	const char *p;
	uint64_t m = 1;

	if (*u == '\0' || strcasecmp(u, "b") == 0) {
		*mult = 1;
		return 0;
	}
	p = strchr(prefixes, u[0] | 0x20);
	if (!p)
		return -EINVAL;
	bool decimal = strcasecmp(u + 1, "b") == 0;

	if (!decimal && u[1] != '\0' && strcasecmp(u + 1, "i") != 0 &&
	    strcasecmp(u + 1, "ib") != 0)
		return -EINVAL;
	for (long i = 0; i <= p - prefixes; i++)
		m *= decimal ? 1000 : 1024;
	*mult = m;
	return 0;
}

int cfg_parse_size(const char *s, uint64_t *out)
{
	uint64_t v, mult;
	size_t used;
	int r = parse_u64(s, &used, &v);

	if (r)
		return r;
	if (size_unit(s + used, &mult))
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*out = v * mult;
	return 0;
}

static int duration_unit(const char *s, size_t *used, uint64_t *mult)
{
	static const struct { const char *u; uint64_t ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t l = strlen(units[i].u);

		if (strncmp(s, units[i].u, l) == 0) {
			*used = l;
			*mult = units[i].ms;
			return 0;
		}
	}
	return -EINVAL;
}

/* "500ms", "10s", "5m", "1h", "7d", compounds like "1h30m"; a bare integer is seconds. */
int cfg_parse_duration_ms(const char *s, uint64_t *out)
{
	uint64_t total = 0, v, mult;
	size_t used;
	int r;

	if (parse_u64(s, &used, &v) == 0 && s[used] == '\0') {
		if (v > UINT64_MAX / 1000)
			return -ERANGE;
		*out = v * 1000;
		return 0;
	}
	if (*s == '\0')
		return -EINVAL;
	while (*s) {
		r = parse_u64(s, &used, &v);
		if (r)
			return r;
		s += used;
		if (duration_unit(s, &used, &mult))
			return -EINVAL;
		s += used;
		if (v > UINT64_MAX / mult || total > UINT64_MAX - v * mult)
			return -ERANGE;
		total += v * mult;
	}
	*out = total;
	return 0;
}

static int cy_measure(struct cfg_ctx *ctx, const struct cy_node *n, int (*parse)(const char *,
		      uint64_t *), const char *example, uint64_t min, uint64_t max,
		      const char *unit, uint64_t *out)
{
	uint64_t v = 0;
	int r;

	if (cy_need(ctx, n, CY_SCALAR, example))
		return -EINVAL;
	r = parse(n->str, &v);
	if (r == -ERANGE)
		v = UINT64_MAX;
	else if (r || strlen(n->str) != n->len) {
		cfg_err(ctx, n, "expected %s, got '%.40s'", example, n->str);
		return -EINVAL;
	}
	if (range_check(ctx, n, v, min, max, unit))
		return -EINVAL;
	*out = v;
	return 0;
}

int cy_size(struct cfg_ctx *ctx, const struct cy_node *n, uint64_t min, uint64_t max,
	    uint64_t *out)
{
	return cy_measure(ctx, n, cfg_parse_size, "a size like 64MiB, 1G or 4096", min, max,
			  " bytes", out);
}

int cy_duration(struct cfg_ctx *ctx, const struct cy_node *n, uint64_t min_ms,
		uint64_t max_ms, uint64_t *out)
{
	return cy_measure(ctx, n, cfg_parse_duration_ms, "a duration like 500ms, 10s, 5m, 1h or 7d",
			  min_ms, max_ms, " ms", out);
}

int cy_enum(struct cfg_ctx *ctx, const struct cy_node *n, const char *const *names, int *out)
{
	char list[256] = "";

	if (n->type == CY_SCALAR) {
		for (int i = 0; names[i]; i++) {
			if (strcmp(n->str, names[i]) == 0) {
				*out = i;
				return 0;
			}
		}
	}
	for (int i = 0; names[i]; i++) {
		strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, names[i], sizeof(list) - strlen(list) - 1);
	}
	if (n->type == CY_SCALAR) {
		char shown[CFG_SHOW_MAX];

		cfg_show(n->str, shown);
		cfg_err(ctx, n, "expected one of %s; got '%s'", list, shown);
	} else {
		cfg_err(ctx, n, "expected one of %s; got %s", list, cy_type_name(n));
	}
	return -EINVAL;
}

/* ---- the mapping walker ------------------------------------------------------------ */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[33];

	if (la > 32 || lb > 32)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

static void unknown_key(struct cfg_ctx *ctx, const struct cy_node *key,
			const struct cfg_key *keys, const char *section)
{
	const char *best = NULL;
	size_t bestd = 3;
	char shown[CFG_SHOW_MAX];

	for (const struct cfg_key *k = keys; k->name; k++) {
		size_t d = edit_distance(key->str, k->name);

		if (d < bestd) {
			bestd = d;
			best = k->name;
		}
	}
	cfg_show(key->str, shown);
	/* The path ("policies.ci.allow[2]") says where better than the section's kind. */
	cfg_err_at(ctx, key->line, key->col, "unknown key '%s' in %s%s%s%s", shown,
		   ctx->path[0] ? ctx->path : section,
		   best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
}

static int apply_uint(struct cfg_ctx *ctx, const struct cfg_key *k, const struct cy_node *v,
		      void *field)
{
	uint64_t x;

	if (cy_uint(ctx, v, k->min, k->max, &x))
		return -EINVAL;
	if (k->width == sizeof(unsigned))
		*(unsigned *)field = (unsigned)x;
	else
		*(uint64_t *)field = x;
	return 0;
}

static int apply_str(struct cfg_ctx *ctx, const struct cfg_key *k, const struct cy_node *v,
		     void *field)
{
	const char *s;

	if (k->kind == CK_STR_NULL && cy_is_null(v))
		return cfg_set_str(ctx, field, NULL);
	if (cy_str(ctx, v, &s))
		return -EINVAL;
	return cfg_set_str(ctx, field, s);
}

static int apply_key(struct cfg_ctx *ctx, const struct cfg_key *k, const struct cy_node *v,
		     void *base)
{
	void *field = (char *)base + k->off;
	int r = 0, e;

	switch (k->kind) {
	case CK_STR:
	case CK_STR_NULL:
		r = apply_str(ctx, k, v, field);
		break;
	case CK_BOOL:
		r = cy_bool(ctx, v, field);
		break;
	case CK_UINT:
		r = apply_uint(ctx, k, v, field);
		break;
	case CK_SIZE:
		r = cy_size(ctx, v, k->min, k->max, field);
		break;
	case CK_DURATION:
		r = cy_duration(ctx, v, k->min, k->max, field);
		break;
	case CK_ENUM:
		/* The config's enums have only non-negative values: int-sized, int-aliasable. */
		r = cy_enum(ctx, v, k->names, &e);
		if (r == 0)
			*(int *)field = e;
		break;
	case CK_CUSTOM:
		break;
	}
	if (r == 0 && k->fn)
		r = k->fn(ctx, v, base, k);
	return r;
}

int cfg_walk(struct cfg_ctx *ctx, const struct cy_node *map, const struct cfg_key *keys,
	     void *base, const char *section)
{
	size_t plen = strlen(ctx->path);
	int ret = 0;

	if (cy_is_null(map))
		return 0;   /* "journal:" with nothing under it: the defaults stand */
	if (cy_need(ctx, map, CY_MAP, "a mapping"))
		return -EINVAL;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct cy_node *key = map->items[i], *val = map->items[i + 1];
		const struct cfg_key *k = keys;
		int r;

		if (key->type != CY_SCALAR)
			continue;   /* reported by the parser */
		while (k->name && strcmp(k->name, key->str) != 0)
			k++;
		if (!k->name) {
			unknown_key(ctx, key, keys, section);
			ret = -EINVAL;
			continue;
		}
		snprintf(ctx->path + plen, sizeof(ctx->path) - plen, "%s%s", plen ? "." : "",
			 k->name);
		r = apply_key(ctx, k, val, base);
		ctx->path[plen] = '\0';
		if (r == -ENOMEM || ctx->oom)
			return -ENOMEM;
		if (r)
			ret = -EINVAL;
	}
	return ret;
}
