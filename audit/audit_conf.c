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
			cfg_str_list_free(out, i);
			return -ENOMEM;
		}
	}
	cfg_str_list_free(*v, *n);
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
	cfg_str_list_free(a->file_marks, a->n_file_marks);
	cfg_str_list_free(a->sensitive_paths, a->n_sensitive_paths);
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

static bool path_item_ok(const char *s, const void *home_ok)
{
	return path_ok(s, *(const bool *)home_ok);
}

static const bool home_no, home_yes = true;
/* The lists replace the defaults. */
static const struct cfg_list_spec marks_spec = {
	"a list of /paths", AUDIT_LIST_MAX, path_item_ok, &home_no, "expected an absolute path",
};
static const struct cfg_list_spec sensitive_spec = {
	"a list of /paths or ~/paths", AUDIT_LIST_MAX, path_item_ok, &home_yes,
	"expected /absolute/path or ~/path",
};

static int key_marks(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		     const struct cfg_key *k)
{
	struct sg_audit_config *a = base;

	(void)k;
	return cfg_str_list(ctx, v, &marks_spec, &a->file_marks, &a->n_file_marks);
}

static int key_sensitive(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			 const struct cfg_key *k)
{
	struct sg_audit_config *a = base;

	(void)k;
	return cfg_str_list(ctx, v, &sensitive_spec, &a->sensitive_paths, &a->n_sensitive_paths);
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
