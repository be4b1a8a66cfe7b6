/*
 * Rules files (docs/detection.md): `rules:` is a list of rules, each with an id,
 * severity, the event types it looks at, a condition, an optional stateful detector
 * with its window/threshold, a summary template and tags. The YAML tree (with line
 * numbers) is the config loader's (conf/conf.h), so errors read the same as
 * config errors: FILE:LINE:COL: message. Loading is all or nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect_int.h"
#include "detect/rules_int.h"

static const char *const severities[] = { "info", "low", "medium", "high", "critical", NULL };
static const char *const detectors[] = {
	"none", "pipe_to_shell", "exfiltration", "cleanup", "blocked_burst", "first_domain",
	"burst",         /* burst: blocked_burst's other name, for any kind of burst */
	"downloaded_exec", NULL,
};

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void rule_clear(struct drule *r)
{
	free(r->id);
	free(r->file);
	free_strv(r->events, r->n_events);
	free(r->event_h);
	cond_free(r->cond);
	tmpl_free(&r->summary);
	free_strv(r->tags, r->n_tags);
	free_strv(r->list_a, r->n_a);
	free_strv(r->list_b, r->n_b);
	memset(r, 0, sizeof(*r));
}

void detect_rules_free(struct detect_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		rule_clear(&r->v[i]);
	free(r->v);
	free(r);
}

size_t detect_rules_count(const struct detect_rules *r) { return r ? r->n : 0; }

const char *detect_rules_id(const struct detect_rules *r, size_t i)
{
	return r && i < r->n ? r->v[i].id : NULL;
}

uint32_t event_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

bool rule_wants(const struct drule *r, const char *event, uint32_t h)
{
	if (r->n_events == 0)
		return true;
	for (size_t i = 0; i < r->n_events; i++)
		if (r->event_h[i] == h && strcmp(r->events[i], event) == 0)
			return true;
	return false;
}

/* A string or a list of strings (events, tags, downloaders, shells). */
static int str_list(struct rload *L, const struct cy_node *v, char ***out, size_t *n)
{
	size_t k = v->type == CY_SEQ ? v->n : 1;
	const char *s;

	if (v->type == CY_MAP || (v->type == CY_SEQ && v->n == 0)) {
		cfg_err(L->ctx, v, "expected a string or a non-empty list of strings");
		return -EINVAL;
	}
	free_strv(*out, *n);
	*n = 0;
	*out = calloc(k, sizeof(**out));
	if (!*out) {
		L->ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < k; i++) {
		if (cy_str(L->ctx, v->type == CY_SEQ ? v->items[i] : v, &s))
			return -EINVAL;
		if (!((*out)[(*n)++] = strdup(s))) {
			L->ctx->oom = true;
			return -ENOMEM;
		}
	}
	return 0;
}

static bool id_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '_' || *s == '.'))
			return false;
	return true;
}

static int key_id(struct rload *L, const struct cy_node *v, struct drule *r)
{
	const char *s;

	if (cy_str(L->ctx, v, &s))
		return -EINVAL;
	if (!id_ok(s)) {
		cfg_err(L->ctx, v, "a rule id is 1-64 of a-z 0-9 - _ .");
		return -EINVAL;
	}
	r->id = strdup(s);
	return r->id ? 0 : (L->ctx->oom = true, -ENOMEM);
}

static int key_summary(struct rload *L, const struct cy_node *v, struct drule *r)
{
	const char *s, *why = "invalid";
	int ret;

	if (cy_str(L->ctx, v, &s))
		return -EINVAL;
	tmpl_free(&r->summary);
	ret = tmpl_compile(s, &r->summary, &why);
	if (ret == -EINVAL)
		cfg_err(L->ctx, v, "summary: %s", why);
	else if (ret)
		L->ctx->oom = true;
	return ret;
}

/* One key of a rule mapping. */
static int rule_key(struct rload *L, const struct cy_node *k, const struct cy_node *v,
		    struct drule *r, bool *enabled)
{
	const char *name = k->str;
	uint64_t u;
	int e;

	if (strcmp(name, "id") == 0)
		return key_id(L, v, r);
	if (strcmp(name, "description") == 0)
		return cy_need(L->ctx, v, CY_SCALAR, "a string");
	if (strcmp(name, "severity") == 0) {
		if (cy_enum(L->ctx, v, severities, &e))
			return -EINVAL;
		r->severity = severities[e];
		return 0;
	}
	if (strcmp(name, "events") == 0)
		return str_list(L, v, &r->events, &r->n_events);
	if (strcmp(name, "condition") == 0)
		return (r->cond = cond_compile(L, v, 0)) ? 0 : -EINVAL;
	if (strcmp(name, "summary") == 0)
		return key_summary(L, v, r);
	if (strcmp(name, "tags") == 0)
		return str_list(L, v, &r->tags, &r->n_tags);
	if (strcmp(name, "enabled") == 0)
		return cy_bool(L->ctx, v, enabled);
	if (strcmp(name, "detector") == 0) {
		if (cy_enum(L->ctx, v, detectors, &e))
			return -EINVAL;
		r->det = e == 6 ? DET_BURST : e == 7 ? DET_DOWNLOADED_EXEC : (enum det_kind)e;
		return 0;
	}
	if (strcmp(name, "window") == 0)
		return cy_duration(L->ctx, v, 1, 24ull * 3600 * 1000, &r->window_ms);
	if (strcmp(name, "threshold") == 0) {
		if (cy_uint(L->ctx, v, 1, SESS_RING, &u))
			return -EINVAL;
		r->threshold = (unsigned)u;
		return 0;
	}
	if (strcmp(name, "downloaders") == 0)
		return str_list(L, v, &r->list_a, &r->n_a);
	if (strcmp(name, "shells") == 0)
		return str_list(L, v, &r->list_b, &r->n_b);
	cfg_err(L->ctx, k, "unknown rule key '%.40s' (id, description, severity, events, "
		"condition, detector, window, threshold, downloaders, shells, summary, tags, "
		"enabled)", name);
	return -EINVAL;
}

static const char *const default_downloaders[] = {
	"curl", "wget", "fetch", "nc", "ncat", "netcat", "socat", "aria2c", "base64",
	"python", "python3", "perl", "ruby", "openssl", "xxd", NULL,
};
static const char *const default_shells[] = {
	"sh", "bash", "dash", "zsh", "ksh", "ash", "busybox", "python", "python3", "perl",
	"ruby", "node", "php", NULL,
};

static int default_list(char ***out, size_t *n, const char *const *src)
{
	size_t k = 0;

	while (src[k])
		k++;
	*out = calloc(k, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (*n = 0; *n < k; (*n)++)
		if (!((*out)[*n] = strdup(src[*n])))
			return -ENOMEM;
	return 0;
}

/* Detector defaults and what a rule must have. */
static int rule_finish(struct rload *L, const struct cy_node *m, struct drule *r)
{
	static const uint64_t windows[] = { 0, 60000, 60000, 10000, 10000, 0, 600000 };
	static const unsigned thresholds[] = { 0, 1, 1, 3, 5, 1, 1 };

	if (!r->id || !r->severity || !r->summary.segs) {
		cfg_err(L->ctx, m, "a rule needs id, severity and summary");
		return -EINVAL;
	}
	if (r->det == DET_NONE && !r->cond && r->n_events == 0) {
		cfg_err(L->ctx, m, "rule '%s' has neither events nor a condition", r->id);
		return -EINVAL;
	}
	if (r->n_events && !(r->event_h = calloc(r->n_events, sizeof(*r->event_h))))
		return L->ctx->oom = true, -ENOMEM;
	for (size_t i = 0; i < r->n_events; i++)
		r->event_h[i] = event_hash(r->events[i]);
	if (!r->window_ms)
		r->window_ms = windows[r->det];
	if (!r->threshold)
		r->threshold = thresholds[r->det];
	if (r->det == DET_PIPE_SHELL && !r->list_a &&
	    default_list(&r->list_a, &r->n_a, default_downloaders))
		return L->ctx->oom = true, -ENOMEM;
	if (r->det == DET_PIPE_SHELL && !r->list_b &&
	    default_list(&r->list_b, &r->n_b, default_shells))
		return L->ctx->oom = true, -ENOMEM;
	return 0;
}

static int add_rule(struct rload *L, struct detect_rules *rs, const struct cy_node *m)
{
	struct drule r = { .line = m->line };
	bool enabled = true;
	int ret = 0;

	if (cy_need(L->ctx, m, CY_MAP, "a rule (a mapping)"))
		return -EINVAL;
	for (size_t i = 0; i + 1 < m->n && !L->ctx->oom; i += 2)
		if (m->items[i]->type == CY_SCALAR &&
		    rule_key(L, m->items[i], m->items[i + 1], &r, &enabled))
			ret = -EINVAL;
	if (ret == 0)
		ret = rule_finish(L, m, &r);
	for (size_t i = 0; ret == 0 && i < rs->n; i++)
		if (strcmp(rs->v[i].id, r.id) == 0) {
			cfg_err(L->ctx, m, "duplicate rule id '%s' (first at %s:%u)", r.id,
				rs->v[i].file, rs->v[i].line);
			ret = -EINVAL;
		}
	if (ret == 0 && enabled && rs->n >= DETECT_MAX_RULES) {
		cfg_err(L->ctx, m, "more than %d rules", DETECT_MAX_RULES);
		ret = -EINVAL;
	}
	if (ret == 0 && enabled && !(r.file = strdup(L->ctx->file)))
		ret = -ENOMEM;
	if (ret == 0 && enabled) {
		struct drule *v = realloc(rs->v, (rs->n + 1) * sizeof(*v));

		if (!v) {
			ret = -ENOMEM;
		} else {
			rs->v = v;
			rs->v[rs->n++] = r;
			return 0;
		}
	}
	if (ret == -ENOMEM)
		L->ctx->oom = true;
	rule_clear(&r);
	return ret;
}

static int load_root(struct rload *L, const struct cy_node *root, struct detect_rules *rs)
{
	const struct cy_node *list = NULL;

	if (!root || cy_is_null(root))
		return 0;
	if (root->type != CY_MAP) {
		cfg_err(L->ctx, root, "a rules file is a mapping with a 'rules:' list");
		return -EINVAL;
	}
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		if (root->items[i]->type != CY_SCALAR)
			continue;
		if (strcmp(root->items[i]->str, "rules") == 0)
			list = root->items[i + 1];
		else
			cfg_err(L->ctx, root->items[i], "unknown key '%.40s' (rules)",
				root->items[i]->str);
	}
	if (!list || cy_is_null(list))
		return 0;
	if (cy_need(L->ctx, list, CY_SEQ, "a list of rules"))
		return -EINVAL;
	for (size_t i = 0; i < list->n && !L->ctx->oom; i++)
		add_rule(L, rs, list->items[i]);
	return 0;
}

int detect_rules_load_buffer(struct detect_rules **rules, const char *name,
			     const char *text, size_t len, const struct detect_vars *v,
			     struct config_errors *errs)
{
	struct cfg_ctx ctx = { .file = name ? name : "(rules)", .errs = errs };
	struct rload L = { .ctx = &ctx, .vars = v };
	struct cy_node *root = NULL;
	size_t before;
	int ret;

	if (!*rules && !(*rules = calloc(1, sizeof(**rules))))
		return -ENOMEM;
	before = (*rules)->n;
	if (len > CONFIG_MAX_FILE_BYTES) {
		cfg_err_at(&ctx, 0, 0, "larger than %u bytes", CONFIG_MAX_FILE_BYTES);
		return -EINVAL;
	}
	ret = cy_parse(&ctx, text, len, &root);
	if (ret == 0 && ctx.nerr == 0)
		load_root(&L, root, *rules);
	cy_free(root);
	if (ret == 0 && ctx.oom)
		ret = -ENOMEM;
	if (ret == 0 && ctx.nerr)
		ret = -EINVAL;
	if (ret) {   /* all or nothing: drop what this file added */
		while ((*rules)->n > before)
			rule_clear(&(*rules)->v[--(*rules)->n]);
	}
	return ret;
}
