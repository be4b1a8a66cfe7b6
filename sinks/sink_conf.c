/*
 * The `index:` section and the `sinks:` list (sinks/sink_conf.h, docs/config.md).
 * Each sink is a mapping walked with the shared table reader, then checked as a whole
 * (a file sink needs a path, a syslog sink an address, names are unique).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sinks/sink_conf.h"
#include "conf/conf.h"

#define F(T, f) offsetof(T, f)
#define MS_S 1000ull
#define MS_DAY (86400 * MS_S)

static const char *const sink_kinds[] = {
	"file", "stdout", "syslog_tcp", "hec", "otlp_http", "syslog_tls", NULL,
};
static const char *const sink_formats[] = { "native", "ocsf", NULL };
static const char *const sink_verbosities[] = { "full", "summary", "minimal", NULL };

void cfg_invest_default(struct sg_invest_config *c)
{
	*c = (struct sg_invest_config){
		.index_enabled = true, .index_poll_ms = MS_S, .retention_enabled = true,
		.hot_ms = 90 * MS_DAY, .cold_ms = 730 * MS_DAY, .retention_interval_ms = 3600 * MS_S,
	};
}

static void free_sink(struct sg_sink_config *s)
{
	free(s->name);
	free(s->path);
	free(s->address);
	free(s->url);
	free(s->token);
	free(s->ca_file);
	free(s->server_name);
	free(s->cert_file);
	free(s->key_file);
	cfg_str_list_free(s->events, s->n_events);
}

void cfg_invest_free(struct sg_invest_config *c)
{
	cfg_str_list_free(c->hold_sessions, c->n_hold_sessions);
	c->hold_sessions = NULL;
	c->n_hold_sessions = 0;
	for (size_t i = 0; i < c->n_sinks; i++)
		free_sink(&c->sinks[i]);
	free(c->sinks);
	c->sinks = NULL;
	c->n_sinks = 0;
}

#define IC struct sg_invest_config
static const struct cfg_key index_keys[] = {
	{ "enabled", CK_BOOL, F(IC, index_enabled), 0, 0, 0, NULL, NULL },
	{ "poll_interval", CK_DURATION, F(IC, index_poll_ms), 0, 10, 3600 * MS_S, NULL, NULL },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};
#undef IC

int cfg_index(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_invest_config *c)
{
	return cfg_walk(ctx, v, index_keys, c, "index");
}

static int key_address(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		       const struct cfg_key *k)
{
	struct sg_sink_config *s = base;
	struct sg_addr a;
	uint16_t port = 0;

	(void)k;
	if (!s->address || cfg_parse_hostport(s->address, &a, &port, true)) {
		cfg_err(ctx, v, "expected IP:PORT or [IPv6]:PORT");
		return -EINVAL;
	}
	memset(&s->addr, 0, sizeof(s->addr));
	if (a.family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&s->addr;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, a.bytes, 4);
		s->addr_len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&s->addr;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, a.bytes, 16);
		s->addr_len = sizeof(*in6);
	}
	return 0;
}

/* An event type or "prefix.*": letters, digits, '.', '_' and '-' only. */
static bool filter_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 47)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '.' || s[i] == '_' || s[i] == '-' || (s[i] == '*' && i == n - 1)))
			return false;
	return true;
}

static bool filter_item_ok(const char *s, const void *arg)
{
	(void)arg;
	return filter_ok(s);
}

static const struct cfg_list_spec events_spec = {
	"a list of event types", SG_SINK_FILTER_MAX, filter_item_ok, NULL,
	"expected an event type such as net.dns or net.*",
};

static int key_events(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		      const struct cfg_key *k)
{
	struct sg_sink_config *s = base;

	(void)k;
	return cfg_str_list(ctx, v, &events_spec, &s->events, &s->n_events);
}

static int key_url(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		   const struct cfg_key *k)
{
	const struct sg_sink_config *s = base;

	(void)k;
	if (s->url && (strncmp(s->url, "http://", 7) == 0 || strncmp(s->url, "https://", 8) == 0) &&
	    !strpbrk(s->url, " \t\r\n"))
		return 0;
	cfg_err(ctx, v, "expected an http:// or https:// URL");
	return -EINVAL;
}

/* A file the daemon opens later, from any working directory. */
static int key_abs_path(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			const struct cfg_key *k)
{
	char *const *p = (char *const *)((char *)base + k->off);

	if (*p && (*p)[0] == '/')
		return 0;
	cfg_err(ctx, v, "expected an absolute path");
	return -EINVAL;
}

/* A DNS name for SNI and the certificate check: letters, digits, '-', '.'. */
static int key_server_name(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			   const struct cfg_key *k)
{
	const char *s = ((const struct sg_sink_config *)base)->server_name;
	size_t n = s ? strlen(s) : 0;

	(void)k;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '.'))
			n = 0;
	if (n > 0 && n <= 253)
		return 0;
	cfg_err(ctx, v, "expected a DNS name");
	return -EINVAL;
}

#define SC struct sg_sink_config
static const struct cfg_key sink_keys[] = {
	{ "name", CK_STR, F(SC, name), 0, 0, 0, NULL, NULL },
	{ "kind", CK_ENUM, F(SC, kind), 0, 0, 0, sink_kinds, NULL },
	{ "format", CK_ENUM, F(SC, format), 0, 0, 0, sink_formats, NULL },
	{ "path", CK_STR, F(SC, path), 0, 0, 0, NULL, NULL },
	{ "address", CK_STR, F(SC, address), 0, 0, 0, NULL, key_address },
	{ "url", CK_STR, F(SC, url), 0, 0, 0, NULL, key_url },
	{ "token", CK_STR, F(SC, token), 0, 0, 0, NULL, NULL },
	{ "ca_file", CK_STR, F(SC, ca_file), 0, 0, 0, NULL, key_abs_path },
	{ "cert_file", CK_STR, F(SC, cert_file), 0, 0, 0, NULL, key_abs_path },
	{ "key_file", CK_STR, F(SC, key_file), 0, 0, 0, NULL, key_abs_path },
	{ "server_name", CK_STR, F(SC, server_name), 0, 0, 0, NULL, key_server_name },
	{ "verbosity", CK_ENUM, F(SC, verbosity), 0, 0, 0, sink_verbosities, NULL },
	{ "events", CK_CUSTOM, 0, 0, 0, 0, NULL, key_events },
	{ "retry_min", CK_DURATION, F(SC, retry_min_ms), 0, 1, 3600 * MS_S, NULL, NULL },
	{ "retry_max", CK_DURATION, F(SC, retry_max_ms), 0, 1, 3600 * MS_S, NULL, NULL },
	{ "batch_lines", CK_UINT, F(SC, batch_lines), sizeof(uint64_t), 1, 100000, NULL, NULL },
	{ "stall_bytes", CK_SIZE, F(SC, stall_bytes), 0, 0, UINT64_MAX, NULL, NULL },
	{ "stall_after", CK_DURATION, F(SC, stall_after_ms), 0, 0, 30 * 24 * 3600 * MS_S, NULL, NULL },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};
#undef SC

static bool name_ok(const char *s)
{
	if (!s[0] || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return false;
	return true;
}

/* What one sink needs as a whole, once its keys are read. */
static int sink_consistent(struct cfg_ctx *ctx, const struct cy_node *v,
			   const struct sg_sink_config *s, const struct sg_invest_config *c)
{
	if (!s->name || !name_ok(s->name)) {
		cfg_err(ctx, v, "a sink needs a name of letters, digits, '_' or '-'");
		return -EINVAL;
	}
	for (size_t i = 0; i < c->n_sinks; i++)
		if (strcmp(c->sinks[i].name, s->name) == 0) {
			cfg_err(ctx, v, "two sinks are named %s", s->name);
			return -EINVAL;
		}
	if (s->kind == SG_SINK_FILE && (!s->path || s->path[0] != '/')) {
		cfg_err(ctx, v, "sink %s: kind file needs an absolute path", s->name);
		return -EINVAL;
	}
	if ((s->kind == SG_SINK_SYSLOG_TCP || s->kind == SG_SINK_SYSLOG_TLS) && !s->address) {
		cfg_err(ctx, v, "sink %s: kind %s needs an address", s->name,
			s->kind == SG_SINK_SYSLOG_TCP ? "syslog_tcp" : "syslog_tls");
		return -EINVAL;
	}
	if (!s->cert_file != !s->key_file) {
		cfg_err(ctx, v, "sink %s: cert_file and key_file go together", s->name);
		return -EINVAL;
	}
	if ((s->kind == SG_SINK_HEC || s->kind == SG_SINK_OTLP_HTTP) && !s->url) {
		cfg_err(ctx, v, "sink %s: kind %s needs a url", s->name,
			s->kind == SG_SINK_HEC ? "hec" : "otlp_http");
		return -EINVAL;
	}
	if (s->retry_min_ms > s->retry_max_ms) {
		cfg_err(ctx, v, "sink %s: retry_min is above retry_max", s->name);
		return -EINVAL;
	}
	return 0;
}

static int one_sink(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_invest_config *c)
{
	struct sg_sink_config s = {
		.kind = SG_SINK_FILE, .retry_min_ms = 200, .retry_max_ms = 30 * MS_S,
		.batch_lines = 500, .stall_bytes = 1ull << 30, .stall_after_ms = 3600 * MS_S,
	};
	int ret = cfg_walk(ctx, v, sink_keys, &s, "sinks[]");

	if (ret == 0)
		ret = sink_consistent(ctx, v, &s, c);
	if (ret) {
		free_sink(&s);
		return ret;
	}
	c->sinks[c->n_sinks++] = s;
	return 0;
}

int cfg_sinks(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_invest_config *c)
{
	int ret = 0;

	if (cy_need(ctx, v, CY_SEQ, "a list of sinks"))
		return -EINVAL;
	if (v->n > SG_SINKS_MAX) {
		cfg_err(ctx, v, "at most %d sinks", SG_SINKS_MAX);
		return -EINVAL;
	}
	cfg_invest_free(c);
	c->sinks = calloc(v->n + 1, sizeof(*c->sinks));
	if (!c->sinks) {
		ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->n && !ctx->oom; i++) {
		int r = one_sink(ctx, v->items[i], c);

		if (r)
			ret = r;
	}
	return ctx->oom ? -ENOMEM : ret;
}

static const struct cfg_list_spec holds_spec = { "a list of session ids", 0, NULL, NULL, NULL };

static int key_holds(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		     const struct cfg_key *k)
{
	struct sg_invest_config *c = base;

	(void)k;
	return cfg_str_list(ctx, v, &holds_spec, &c->hold_sessions, &c->n_hold_sessions);
}

#define RC struct sg_invest_config
static const struct cfg_key retention_keys[] = {
	{ "enabled", CK_BOOL, F(RC, retention_enabled), 0, 0, 0, NULL, NULL },
	{ "hot", CK_DURATION, F(RC, hot_ms), 0, MS_S, 36500 * MS_DAY, NULL, NULL },
	{ "cold", CK_DURATION, F(RC, cold_ms), 0, MS_S, 36500 * MS_DAY, NULL, NULL },
	{ "interval", CK_DURATION, F(RC, retention_interval_ms), 0, 100, MS_DAY, NULL, NULL },
	{ "hold_all", CK_BOOL, F(RC, hold_all), 0, 0, 0, NULL, NULL },
	{ "hold_sessions", CK_CUSTOM, 0, 0, 0, 0, NULL, key_holds },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};
#undef RC

int cfg_retention(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_invest_config *c)
{
	int ret;

	ret = cfg_walk(ctx, v, retention_keys, c, "retention");
	if (ret == 0 && c->hot_ms > c->cold_ms) {
		/* cold is the age at purge, counted like hot from the segment's last line. */
		cfg_err(ctx, v, "retention: hot is longer than cold");
		ret = -EINVAL;
	}
	return ret;
}
