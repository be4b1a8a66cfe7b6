/*
 * Config loading: composes the whole file from the parts' sections. Here: the embedded
 * defaults, the top-level, cgroup and journal keys, and the all-or-nothing load. Every
 * other section is read by its part into its own struct (gateway/gateway_conf.c,
 * policy/policy_conf.c, audit/audit_conf.c, limits/limits_conf.c, sinks/sink_conf.c,
 * detect/detect_conf.c); the YAML tree, typed readers and error list are conf/'s.
 */
#include "daemon/config.h"
#include "conf/conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MS_S 1000ull
#define MS_DAY (86400ull * MS_S)

/* ---- field checkers (run after the value is stored) --------------------------------- */

static int check_socket(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			const struct cfg_key *k)
{
	const char *s = cfg_field_str(base, k);

	if (cfg_check_path(ctx, v, base, k))
		return -EINVAL;
	if (strlen(s) >= sizeof(((struct sockaddr_un *)NULL)->sun_path)) {
		cfg_err(ctx, v, "socket path longer than %zu bytes",
			sizeof(((struct sockaddr_un *)NULL)->sun_path) - 1);
		return -EINVAL;
	}
	return 0;
}

static int check_word(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		      const struct cfg_key *k)
{
	const char *s = cfg_field_str(base, k);

	if (!s)
		return 0;
	if (strlen(s) > 253 || cfg_has_ctl_or_space(s, false)) {
		cfg_err(ctx, v, "expected at most 253 printable characters without spaces");
		return -EINVAL;
	}
	return 0;
}

static int check_group(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		       const struct cfg_key *k)
{
	const char *s = cfg_field_str(base, k);
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-");

	if (s[n] != '\0' || n > 32 || s[0] == '-') {
		cfg_err(ctx, v, "expected a group name (letters, digits, '_', '.', '-')");
		return -EINVAL;
	}
	return 0;
}

static int check_listen(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			const struct cfg_key *k)
{
	const char *s = cfg_field_str(base, k);
	struct sg_addr a;
	uint16_t port;

	if (s && cfg_parse_hostport(s, &a, &port, true)) {
		cfg_err(ctx, v, "expected IP:PORT or [IPv6]:PORT, or null to disable");
		return -EINVAL;
	}
	return 0;
}

static int check_cgroup_root(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			     const struct cfg_key *k)
{
	if (strcmp(cfg_field_str(base, k), "auto") == 0)
		return 0;
	return cfg_check_path(ctx, v, base, k);
}

/* A relative path below the cgroup root; ".." could escape it. */
static int check_cgroup_parent(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			       const struct cfg_key *k)
{
	const char *s = cfg_field_str(base, k), *c = s;
	bool bad = s[0] == '/' || cfg_has_ctl_or_space(s, false);

	while (!bad) {
		size_t l = strcspn(c, "/");

		bad = l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.');
		if (c[l] == '\0')
			break;
		c += l + 1;
	}
	if (bad) {
		cfg_err(ctx, v, "expected a relative path without '.', '..' or empty parts");
		return -EINVAL;
	}
	return 0;
}

static int check_origin(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			const struct cfg_key *k)
{
	const char *s = cfg_field_str(base, k);

	/* The origin is the first line of every signed checkpoint: one printable line. */
	if (s && cfg_has_ctl_or_space(s, true)) {
		cfg_err(ctx, v, "must not contain control characters");
		return -EINVAL;
	}
	return 0;
}

/* 0 turns the shapes off (detection and the index parse every line); otherwise at least
 * 1 MiB, below which too few lines would be held to be worth placing them. */
static int check_shape_memory(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			      const struct cfg_key *k)
{
	uint64_t bytes;

	memcpy(&bytes, (const char *)base + k->off, sizeof(bytes));
	if (bytes != 0 && bytes < (1u << 20)) {
		cfg_err(ctx, v, "expected 0 (off) or at least 1MiB");
		return -EINVAL;
	}
	return 0;
}

/* ---- sections -------------------------------------------------------------------- */

static const char *const log_levels[] = { "error", "warn", "info", "debug", NULL };
static const char *const fsync_modes[] = { "checkpoint", "always", "never", NULL };

#define F(type, field) offsetof(type, field)
#define UINT_KEY(type, name, lo, hi) \
	{ #name, CK_UINT, F(type, name), sizeof(((type *)0)->name), lo, hi, NULL, NULL }

static const struct cfg_key cgroup_keys[] = {
	{ "root", CK_STR, F(struct sg_cgroup_config, root), 0, 0, 0, NULL, check_cgroup_root },
	{ "parent", CK_STR, F(struct sg_cgroup_config, parent), 0, 0, 0, NULL,
	  check_cgroup_parent },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};

#define JC struct sg_journal_config
static const struct cfg_key journal_keys[] = {
	{ "segment_max_bytes", CK_SIZE, F(JC, segment_max_bytes), 0, 4096, 1ull << 40, NULL, NULL },
	{ "segment_max_age", CK_DURATION, F(JC, segment_max_age_ms), 0, MS_S, 365 * MS_DAY, NULL,
	  NULL },
	{ "fsync", CK_ENUM, F(JC, fsync), 0, 0, 0, fsync_modes, NULL },
	{ "checkpoint_interval", CK_DURATION, F(JC, checkpoint_interval_ms), 0, 10, 3600 * MS_S,
	  NULL, NULL },
	UINT_KEY(JC, checkpoint_events, 1, 10000000),
	{ "heartbeat_interval", CK_DURATION, F(JC, heartbeat_interval_ms), 0, 100, MS_DAY, NULL,
	  NULL },
	UINT_KEY(JC, queue_capacity, 16, 1u << 24),
	{ "shape_memory", CK_SIZE, F(JC, shape_memory), 0, 0, 1ull << 30, NULL,
	  check_shape_memory },
	{ "origin", CK_STR_NULL, F(JC, origin), 0, 0, 0, NULL, check_origin },
	{ "witness_dir", CK_STR_NULL, F(JC, witness_dir), 0, 0, 0, NULL, cfg_check_path },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};
#undef JC

static int sec_cgroup(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		      const struct cfg_key *k)
{
	(void)k;
	return cfg_walk(ctx, v, cgroup_keys, &((struct sg_config *)base)->cgroup, "cgroup");
}

static int sec_journal(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		       const struct cfg_key *k)
{
	(void)k;
	return cfg_walk(ctx, v, journal_keys, &((struct sg_config *)base)->journal, "journal");
}

/* Each part reads its own section into its own struct; the config only places them. */
#define SECTION(fn, field)                                                                 \
	static int sec_##fn(struct cfg_ctx *ctx, const struct cy_node *v, void *base,       \
			    const struct cfg_key *k)                                     \
	{                                                                                   \
		(void)k;                                                                    \
		return cfg_##fn(ctx, v, &((struct sg_config *)base)->field);                \
	}
SECTION(audit, audit)
SECTION(limits, limits)
SECTION(index, invest)
SECTION(sinks, invest)
SECTION(retention, invest)
SECTION(detect, detect)
SECTION(gateway, gateway)
#undef SECTION

static int sec_policies(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			const struct cfg_key *k)
{
	struct sg_config *c = base;

	(void)k;
	return cfg_policies(ctx, v, &c->policies, &c->n_policies);
}

#define C struct sg_config
static const struct cfg_key top_keys[] = {
	{ "host", CK_STR, F(C, host), 0, 0, 0, NULL, check_word },
	{ "state_dir", CK_STR, F(C, state_dir), 0, 0, 0, NULL, cfg_check_path },
	{ "control_socket", CK_STR, F(C, control_socket), 0, 0, 0, NULL, check_socket },
	{ "control_group", CK_STR, F(C, control_group), 0, 0, 0, NULL, check_group },
	{ "metrics_listen", CK_STR_NULL, F(C, metrics_listen), 0, 0, 0, NULL, check_listen },
	{ "log_level", CK_ENUM, F(C, log_level), 0, 0, 0, log_levels, NULL },
	{ "cgroup", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_cgroup },
	{ "journal", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_journal },
	{ "gateway", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_gateway },
	{ "policies", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_policies },
	{ "audit", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_audit },
	{ "limits", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_limits },
	{ "index", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_index },
	{ "sinks", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_sinks },
	{ "retention", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_retention },
	{ "detection", CK_CUSTOM, 0, 0, 0, 0, NULL, sec_detect },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};
#undef C

/* ---- defaults, load, free ------------------------------------------------------- */

static int default_strings(struct sg_config *c)
{
	char host[HOST_NAME_MAX + 1] = "";

	/* An unnamed host still needs a stable identifier in every event. */
	if (gethostname(host, sizeof(host)) != 0 || host[0] == '\0')
		strcpy(host, "localhost");
	host[HOST_NAME_MAX] = '\0';
	c->host = strdup(host);
	c->state_dir = strdup("/var/lib/sandgate");
	c->control_socket = strdup("/run/sandgate/control.sock");
	c->control_group = strdup("sandgate");
	c->metrics_listen = strdup("127.0.0.1:9477");
	c->cgroup.root = strdup("auto");
	c->cgroup.parent = strdup("sandgate");
	if (!c->host || !c->state_dir || !c->control_socket || !c->control_group ||
	    !c->metrics_listen || !c->cgroup.root || !c->cgroup.parent)
		return -ENOMEM;
	return 0;
}

struct sg_config *config_default(void)
{
	struct sg_config *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->log_level = SG_LOG_INFO;
	c->journal = (struct sg_journal_config){
		.segment_max_bytes = 64ull << 20, .segment_max_age_ms = 3600 * MS_S,
		.fsync = SG_FSYNC_CHECKPOINT, .checkpoint_interval_ms = MS_S,
		.checkpoint_events = 1000, .heartbeat_interval_ms = 10 * MS_S,
		.queue_capacity = 65536, .shape_memory = 24u << 20, .origin = NULL,
	};
	cfg_gateway_default(&c->gateway);
	cfg_invest_default(&c->invest);
	cfg_limits_default(&c->limits);
	if (default_strings(c) || cfg_policy_embedded_default(&c->policies, &c->n_policies) ||
	    cfg_audit_default(&c->audit) || cfg_detect_default(&c->detect)) {
		config_free(c);
		return NULL;
	}
	return c;
}

void config_free(struct sg_config *c)
{
	if (!c)
		return;
	free(c->host);
	free(c->state_dir);
	free(c->control_socket);
	free(c->control_group);
	free(c->metrics_listen);
	free(c->cgroup.root);
	free(c->cgroup.parent);
	free(c->journal.origin);
	free(c->journal.witness_dir);
	cfg_gateway_free(&c->gateway);
	cfg_audit_free(&c->audit);
	cfg_invest_free(&c->invest);
	cfg_detect_free(&c->detect);
	for (size_t i = 0; i < c->n_policies; i++)
		cfg_policy_free(&c->policies[i]);
	free(c->policies);
	free(c);
}

const struct sg_policy *config_policy(const struct sg_config *c, const char *name)
{
	return cfg_policy_find(c->policies, c->n_policies, name);
}

static int load_tree(struct cfg_ctx *ctx, const char *text, size_t len, struct sg_config *c)
{
	struct cy_node *root = NULL;
	int ret = cy_parse(ctx, text, len, &root);

	if (ret == 0 && root && !cy_is_null(root)) {
		if (root->type != CY_MAP)
			cfg_err(ctx, root, "the file must be a mapping of keys (see docs/config.md)");
		else
			ret = cfg_walk(ctx, root, top_keys, c, "the top level");
	}
	cy_free(root);
	return ret == -ENOMEM || ctx->oom ? -ENOMEM : 0;
}

int config_load_buffer(const char *name, const char *text, size_t len,
		       struct sg_config **out, struct config_errors *errs)
{
	struct cfg_ctx ctx = { .file = name ? name : "(config)", .errs = errs };
	size_t first = errs ? errs->n : 0;
	struct sg_config *c = NULL;
	int ret = -ENOMEM;

	*out = NULL;
	if (len > CONFIG_MAX_FILE_BYTES) {
		cfg_err_at(&ctx, 0, 0, "larger than %u bytes", CONFIG_MAX_FILE_BYTES);
		return -EFBIG;
	}
	c = config_default();
	if (!c || load_tree(&ctx, text, len, c))
		goto out;
	ret = ctx.nerr ? -EINVAL : 0;
	if (ret == 0) {
		*out = c;
		c = NULL;
	}
out:
	if (errs)
		config_errors_sort_from(errs, first);
	config_free(c);
	return ret;
}

/* Reads at most CONFIG_MAX_FILE_BYTES + 1 so an oversized file is detected, not cut. */
static int read_all(int fd, char **text, size_t *len)
{
	size_t cap = 64 * 1024, n = 0;
	char *b = malloc(cap);

	while (b) {
		ssize_t r;

		if (n == cap) {
			char *nb = cap > CONFIG_MAX_FILE_BYTES ? NULL : realloc(b, cap * 2 + 1);

			if (!nb)
				break;
			b = nb;
			cap = cap * 2 + 1;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			free(b);
			return e;
		}
		if (r == 0) {
			*text = b;
			*len = n;
			return 0;
		}
		n += (size_t)r;
	}
	free(b);
	return n > CONFIG_MAX_FILE_BYTES ? -EFBIG : -ENOMEM;
}

static int open_config(const char *path, int *fdp)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	if (S_ISREG(st.st_mode) && st.st_size > CONFIG_MAX_FILE_BYTES) {
		close(fd);
		return -EFBIG;
	}
	*fdp = fd;
	return 0;
}

int config_load_file(const char *path, struct sg_config **out, struct config_errors *errs)
{
	struct cfg_ctx ctx = { .file = path, .errs = errs };
	char *text = NULL;
	size_t len = 0;
	int fd = -1, ret;

	*out = NULL;
	ret = open_config(path, &fd);
	if (ret == 0) {
		ret = read_all(fd, &text, &len);
		close(fd);
	}
	if (ret == -EFBIG)
		cfg_err_at(&ctx, 0, 0, "larger than %u bytes", CONFIG_MAX_FILE_BYTES);
	else if (ret)
		cfg_err_at(&ctx, 0, 0, "cannot read: %s", strerror(-ret));
	if (ret == 0)
		ret = config_load_buffer(path, text, len, out, errs);
	free(text);
	return ret;
}

int config_check_file(const char *path, FILE *out, FILE *err)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	int ret = config_load_file(path, &c, &errs);

	if (ret == 0)
		fprintf(out, "%s: OK (%zu polic%s)\n", path, c->n_policies,
			c->n_policies == 1 ? "y" : "ies");
	else if (config_errors_print(&errs, err) == 0 && ret == -EINVAL)
		fprintf(err, "%s: %zu error%s\n", path, errs.n + errs.dropped,
			errs.n + errs.dropped == 1 ? "" : "s");
	config_free(c);
	config_errors_free(&errs);
	return ret;
}
