/*
 * What an npm (yarn, pnpm) run installed: the entries of node_modules/.package-lock.json
 * (npm's record of what it placed) whose package.json was written since the run's exec,
 * with version, resolved URL and the tarball's integrity hash. Without that file (yarn,
 * pnpm, old npm) the top-level node_modules/[@scope/]NAME/package.json files written
 * since the exec, without hash.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "packages/pkg_int.h"

#define LOCK_MAX (64u << 20)
#define PJSON_MAX (4u << 20)

void pkg_npm_project(const struct pkg_run *r, char *out, size_t len)
{
	const char *pre = pkg_run_env(r, "npm_config_prefix");
	char p[PKG_PATH_MAX + 16];

	if (r->cmd.target[0]) {
		pkg_run_path(r, r->cmd.target, out, len);
		return;
	}
	if (r->cmd.global) {
		/* global packages live in PREFIX/lib/node_modules: the "project" is PREFIX/lib */
		snprintf(out, len, "%s/lib", pre && pre[0] == '/' ? pre : "/usr/local");
		return;
	}
	snprintf(out, len, "%s", r->cwd);
	for (;;) {
		snprintf(p, sizeof(p), "%s/package.json", out);
		if (access(p, F_OK) == 0)
			return;
		char *s = strrchr(out, '/');

		if (!s || s == out)
			break;
		*s = '\0';
	}
	snprintf(out, len, "%s", r->cwd);
}

struct lock_ctx {
	const struct pkg_run *r;
	const char *proj;
	const char *lockpath;
	pkg_found_fn fn;
	void *ctx;
};

/* "file:../x.tgz" relative to the project -> "file:///abs/x.tgz" */
static void resolved_source(const char *proj, const char *res, char *out, size_t len)
{
	char path[PKG_PATH_MAX * 2], real[PATH_MAX];

	if (strncmp(res, "file:", 5) != 0 || strncmp(res, "file://", 7) == 0) {
		snprintf(out, len, "%s", res);
		return;
	}
	if (res[5] == '/')
		snprintf(path, sizeof(path), "%s", res + 5);
	else
		snprintf(path, sizeof(path), "%s/%s", proj, res + 5);
	snprintf(out, len, "file://%s", realpath(path, real) ? real : path);
}

static int on_lock(void *arg, const struct pkg_lock_ent *e)
{
	struct lock_ctx *c = arg;
	struct pkg_found f;
	char pj[PKG_PATH_MAX * 2 + 32];

	if (e->link)
		return 0;   /* a symlink to a workspace or directory: nothing was fetched */
	snprintf(pj, sizeof(pj), "%s/%s/package.json", c->proj, e->path);
	if (!pkg_changed_since(pj, &c->r->start))
		return 0;
	memset(&f, 0, sizeof(f));
	snprintf(f.name, sizeof(f.name), "%s", e->name);
	snprintf(f.version, sizeof(f.version), "%s", e->version);
	snprintf(f.location, sizeof(f.location), "%s/%s", c->proj, e->path);
	if (e->resolved[0]) {
		resolved_source(c->proj, e->resolved, f.source, sizeof(f.source));
		f.source_exact = true;
	}
	if (e->algo[0]) {
		snprintf(f.algo, sizeof(f.algo), "%s", e->algo);
		snprintf(f.value, sizeof(f.value), "%s", e->value);
		f.hash_kind = "archive";
		snprintf(f.hash_from, sizeof(f.hash_from), "%s", c->lockpath);
	}
	return c->fn(c->ctx, &f);
}

/* One node_modules/NAME (or @scope/NAME) directory without the hidden lockfile. */
static int one_dir(const struct pkg_run *r, const char *dir, pkg_found_fn fn, void *ctx)
{
	char pj[PKG_PATH_MAX + 16];
	struct pkg_found f;
	json_t *o;
	char *buf;
	size_t len;
	int ret = 0;

	snprintf(pj, sizeof(pj), "%s/package.json", dir);
	if (!pkg_changed_since(pj, &r->start) || pkg_read_file(pj, PJSON_MAX, &buf, &len) != 0)
		return 0;
	o = json_loadb(buf, len, 0, NULL);
	free(buf);
	if (!o)
		return 0;
	memset(&f, 0, sizeof(f));
	const char *n = json_string_value(json_object_get(o, "name"));
	const char *v = json_string_value(json_object_get(o, "version"));

	if (n && v) {
		snprintf(f.name, sizeof(f.name), "%s", n);
		snprintf(f.version, sizeof(f.version), "%s", v);
		snprintf(f.location, sizeof(f.location), "%s", dir);
		ret = fn(ctx, &f);
	}
	json_decref(o);
	return ret;
}

static int scan_modules(const struct pkg_run *r, const char *nm, bool scope, pkg_found_fn fn,
			void *ctx)
{
	char p[PKG_PATH_MAX + 512];
	struct dirent *de;
	DIR *d = opendir(nm);
	int ret = 0;

	if (!d)
		return 0;
	while (ret == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", nm, de->d_name);
		if (!scope && de->d_name[0] == '@')
			ret = scan_modules(r, p, true, fn, ctx);
		else
			ret = one_dir(r, p, fn, ctx);
	}
	closedir(d);
	return ret;
}

int pkg_collect_npm(const struct pkg_run *r, pkg_found_fn fn, void *ctx)
{
	char proj[PKG_PATH_MAX], lock[PKG_PATH_MAX + 64], nm[PKG_PATH_MAX + 16];
	struct lock_ctx c = { .r = r, .proj = proj, .lockpath = lock, .fn = fn, .ctx = ctx };
	char *buf;
	size_t len;
	int ret;

	pkg_npm_project(r, proj, sizeof(proj));
	snprintf(lock, sizeof(lock), "%s/node_modules/.package-lock.json", proj);
	snprintf(nm, sizeof(nm), "%s/node_modules", proj);
	if (pkg_changed_since(lock, &r->start) &&
	    pkg_read_file(lock, LOCK_MAX, &buf, &len) == 0) {
		ret = pkg_lock_parse(buf, len, on_lock, &c);
		free(buf);
		if (ret != -EINVAL)
			return ret;
	}
	return scan_modules(r, nm, false, fn, ctx);
}
