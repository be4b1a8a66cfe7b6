/*
 * The `audit:` section: which sensors run, which filesystems fanotify marks, and which
 * path prefixes have their reads logged (docs/config.md).
 */
#include "audit/audit_conf.h"
#include "conf/conf.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define F(T, f) offsetof(T, f)
#define AUDIT_LIST_MAX 256

static const char *const default_sensitive[] = {
	"/etc", "/root", "~/.aws", "~/.ssh", "~/.config/gcloud", "~/.netrc",
	"~/.docker/config.json", "~/.kube", "/run/secrets", "/var/run/secrets", NULL,
};

static const char *const exec_sources[] = { "proc_connector", "audit", NULL };

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int set_list(char ***v, size_t *n, const char *const *src)
{
	size_t k = 0;
	char **out;

	while (src[k])
		k++;
	out = calloc(k + 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < k; i++) {
		out[i] = strdup(src[i]);
		if (!out[i]) {
			free_list(out, i);
			return -ENOMEM;
		}
	}
	free_list(*v, *n);
	*v = out;
	*n = k;
	return 0;
}

int cfg_audit_default(struct sg_audit_config *a)
{
	static const char *const root[] = { "/", NULL };

	a->enabled = true;
	a->files = true;
	a->file_modify = true;
	a->packages = true;
	/* The kernel's own copy of the arguments where the audit subsystem is there; the
	 * proc connector stays the fallback (docs/audit.md "Exec source"). */
	a->exec_source = SG_EXEC_AUDIT;
	a->proc_rcvbuf = 32u << 20;
	a->file_mounts = true;
	a->read_repeat_ms = 60000;
	if (set_list(&a->file_marks, &a->n_file_marks, root) ||
	    set_list(&a->sensitive_paths, &a->n_sensitive_paths, default_sensitive))
		return -ENOMEM;
	return 0;
}

void cfg_audit_free(struct sg_audit_config *a)
{
	free_list(a->file_marks, a->n_file_marks);
	free_list(a->sensitive_paths, a->n_sensitive_paths);
	a->file_marks = a->sensitive_paths = NULL;
	a->n_file_marks = a->n_sensitive_paths = 0;
}

/* "/abs/path", or with home_ok "~/rel" (any home directory); no control characters. */
static bool path_ok(const char *s, bool home_ok)
{
	if (!(s[0] == '/' || (home_ok && s[0] == '~' && s[1] == '/' && s[2] != '\0')))
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* A list of paths into (*v, *n), replacing the default. */
static int path_list(struct cfg_ctx *ctx, const struct cy_node *v, char ***out, size_t *nout,
		     bool home_ok)
{
	char **paths;
	size_t n = 0;
	int ret = 0;

	if (cy_need(ctx, v, CY_SEQ, home_ok ? "a list of /paths or ~/paths" : "a list of /paths"))
		return -EINVAL;
	if (v->n > AUDIT_LIST_MAX) {
		cfg_err(ctx, v, "at most %d entries", AUDIT_LIST_MAX);
		return -EINVAL;
	}
	paths = calloc(v->n + 1, sizeof(*paths));
	if (!paths) {
		ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->n && !ctx->oom; i++) {
		const char *s;

		if (cy_str(ctx, v->items[i], &s)) {
			ret = -EINVAL;
		} else if (!path_ok(s, home_ok)) {
			cfg_err(ctx, v->items[i], home_ok ? "expected /absolute/path or ~/path"
							  : "expected an absolute path");
			ret = -EINVAL;
		} else if (cfg_set_str(ctx, &paths[n], s) == 0) {
			n++;
		}
	}
	free_list(*out, *nout);
	*out = paths;
	*nout = n;
	return ctx->oom ? -ENOMEM : ret;
}

static int key_marks(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		     const struct cfg_key *k)
{
	struct sg_audit_config *a = base;

	(void)k;
	return path_list(ctx, v, &a->file_marks, &a->n_file_marks, false);
}

static int key_sensitive(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			 const struct cfg_key *k)
{
	struct sg_audit_config *a = base;

	(void)k;
	return path_list(ctx, v, &a->sensitive_paths, &a->n_sensitive_paths, true);
}

#define AC struct sg_audit_config
static const struct cfg_key audit_keys[] = {
	{ "enabled", CK_BOOL, F(AC, enabled), 0, 0, 0, NULL, NULL },
	{ "files", CK_BOOL, F(AC, files), 0, 0, 0, NULL, NULL },
	{ "file_modify", CK_BOOL, F(AC, file_modify), 0, 0, 0, NULL, NULL },
	{ "packages", CK_BOOL, F(AC, packages), 0, 0, 0, NULL, NULL },
	{ "exec_source", CK_ENUM, F(AC, exec_source), 0, 0, 0, exec_sources, NULL },
	{ "proc_rcvbuf", CK_SIZE, F(AC, proc_rcvbuf), 0, 4096, 1u << 30, NULL, NULL },
	{ "file_marks", CK_CUSTOM, 0, 0, 0, 0, NULL, key_marks },
	{ "sensitive_paths", CK_CUSTOM, 0, 0, 0, 0, NULL, key_sensitive },
	{ "file_mounts", CK_BOOL, F(AC, file_mounts), 0, 0, 0, NULL, NULL },
	{ "read_repeat_interval", CK_DURATION, F(AC, read_repeat_ms), 0, 1000, 86400000, NULL, NULL },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};
#undef AC

int cfg_audit(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_audit_config *a)
{
	return cfg_walk(ctx, v, audit_keys, a, "audit");
}
