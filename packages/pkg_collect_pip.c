/*
 * What a pip (or uv pip) run installed: the *.dist-info directories created or
 * replaced since the run's exec, in every site directory the run could have written
 * (--target, --prefix, the virtualenv of the interpreter or VIRTUAL_ENV, the
 * interpreter's own prefix, the system and user site directories). Name and Version
 * from METADATA; source and archive hash from direct_url.json (PEP 610) when pip wrote
 * one; otherwise the hash is the SHA-256 of the installed RECORD.
 */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "packages/pkg_int.h"

#define SITES_MAX 16
#define META_MAX (1u << 20)

struct sites {
	char dir[SITES_MAX][PKG_PATH_MAX];
	dev_t dev[SITES_MAX];
	ino_t ino[SITES_MAX];
	size_t n;
};

static void add_site(struct sites *s, const char *dir)
{
	struct stat st;

	if (s->n == SITES_MAX || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->dev[i] == st.st_dev && s->ino[i] == st.st_ino)
			return;
	snprintf(s->dir[s->n], PKG_PATH_MAX, "%s", dir);
	s->dev[s->n] = st.st_dev;
	s->ino[s->n++] = st.st_ino;
}

/* BASE/lib/python3*\/{site,dist}-packages */
static void add_prefix(struct sites *s, const char *base)
{
	char pat[PKG_PATH_MAX + 64];
	glob_t g;

	if (!base || !base[0])
		return;
	snprintf(pat, sizeof(pat), "%s/lib/python3*/*-packages", base);
	if (glob(pat, GLOB_NOSORT, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		add_site(s, g.gl_pathv[i]);
	globfree(&g);
}

/* The interpreter as invoked: a path resolved against cwd, or looked up in PATH. */
static bool python_path(const struct pkg_run *r, char *out, size_t len)
{
	const char *py = r->cmd.python, *path;
	char cand[PKG_PATH_MAX + PKG_NAME_MAX];

	if (!py[0])
		return false;
	if (strchr(py, '/')) {
		pkg_run_path(r, py, out, len);
		return true;
	}
	path = pkg_run_env(r, "PATH");
	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, path, py);
		if (access(cand, X_OK) == 0) {
			snprintf(out, len, "%s", cand);
			return true;
		}
		path += n + (path[n] == ':');
	}
	return false;
}

/* dirname(dirname(p)): /v/bin/python3 -> /v */
static void grandparent(const char *p, char *out, size_t len)
{
	char *s;

	snprintf(out, len, "%s", p);
	for (int k = 0; k < 2; k++) {
		s = strrchr(out, '/');
		if (!s) {
			out[0] = '\0';
			return;
		}
		*s = '\0';
	}
}

static void site_dirs(const struct pkg_run *r, struct sites *s)
{
	char p[PKG_PATH_MAX], base[PKG_PATH_MAX], home[PKG_PATH_MAX];
	const char *venv = pkg_run_env(r, "VIRTUAL_ENV");

	if (r->cmd.target[0]) {
		pkg_run_path(r, r->cmd.target, p, sizeof(p));
		if (r->cmd.target_is_prefix)
			add_prefix(s, p);
		else
			add_site(s, p);
		return;   /* pip writes nowhere else */
	}
	if (python_path(r, p, sizeof(p))) {
		grandparent(p, base, sizeof(base));
		add_prefix(s, base);
	}
	if (venv && venv[0] == '/')
		add_prefix(s, venv);
	if (strcmp(r->cmd.tool, "uv") == 0) {
		snprintf(p, sizeof(p), "%s/.venv", r->cwd);
		add_prefix(s, p);
	}
	pkg_run_home(r, home, sizeof(home));
	if (home[0]) {
		snprintf(p, sizeof(p), "%s/.local", home);
		add_prefix(s, p);
	}
	add_prefix(s, "/usr/local");
	add_site(s, "/usr/lib/python3/dist-packages");
}

static int read_small(const char *dir, const char *file, char **buf, size_t *len)
{
	char p[PKG_PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return pkg_read_file(p, META_MAX, buf, len);
}

/* direct_url.json: the exact source, and the archive's hash when pip recorded it. */
static void direct_url(const char *di, struct pkg_found *f)
{
	struct pkg_direct_url d;
	char *buf;
	size_t len;

	if (read_small(di, "direct_url.json", &buf, &len) != 0)
		return;
	if (pkg_direct_url_parse(buf, len, &d) == 0) {
		snprintf(f->source, sizeof(f->source), "%s", d.url);
		f->source_exact = true;
		if (d.algo[0]) {
			snprintf(f->algo, sizeof(f->algo), "%s", d.algo);
			snprintf(f->value, sizeof(f->value), "%s", d.value);
			f->hash_kind = "archive";
			snprintf(f->hash_from, sizeof(f->hash_from), "%s/direct_url.json", di);
		}
	}
	free(buf);
}

static int one_dist_info(const char *di, pkg_found_fn fn, void *ctx)
{
	struct pkg_found f;
	char *buf;
	size_t len;
	int ret;

	memset(&f, 0, sizeof(f));
	if (read_small(di, "METADATA", &buf, &len) != 0)
		return 0;   /* half-written or not a wheel install: nothing to say */
	ret = pkg_metadata_parse(buf, len, f.name, sizeof(f.name), f.version, sizeof(f.version));
	free(buf);
	if (ret != 0)
		return 0;
	snprintf(f.location, sizeof(f.location), "%s", di);
	direct_url(di, &f);
	if (!f.algo[0]) {
		char rec[PKG_PATH_MAX + 16];

		snprintf(rec, sizeof(rec), "%s/RECORD", di);
		if (pkg_sha256_file(rec, f.value) == 0) {
			snprintf(f.algo, sizeof(f.algo), "sha256");
			f.hash_kind = "installed_metadata";
			snprintf(f.hash_from, sizeof(f.hash_from), "%s", rec);
		}
	}
	return fn(ctx, &f);
}

static int scan_site(const struct pkg_run *r, const char *dir, pkg_found_fn fn, void *ctx)
{
	char di[PKG_PATH_MAX + 256];
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d)
		return 0;
	while (ret == 0 && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n <= 10 || strcmp(de->d_name + n - 10, ".dist-info") != 0)
			continue;
		snprintf(di, sizeof(di), "%s/%s", dir, de->d_name);
		if (pkg_changed_since(di, &r->start))
			ret = one_dist_info(di, fn, ctx);
	}
	closedir(d);
	return ret;
}

int pkg_collect_pip(const struct pkg_run *r, pkg_found_fn fn, void *ctx)
{
	struct sites *s = calloc(1, sizeof(*s));
	int ret = 0;

	if (!s)
		return -ENOMEM;
	site_dirs(r, s);
	for (size_t i = 0; ret == 0 && i < s->n; i++)
		ret = scan_site(r, s->dir[i], fn, ctx);
	free(s);
	return ret;
}
