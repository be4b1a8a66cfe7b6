/*
 * Where a run's packages come from, by the installer's own precedence: arguments, then
 * environment, then config files (later files override earlier ones), then the
 * manager's default registry. Per-package metadata (pip direct_url.json, npm
 * "resolved", a .deb file) is more exact and wins in the collectors.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packages/pkg_int.h"

#define CONF_MAX (256 * 1024)

static void set_primary(struct pkg_sources *s, const char *url, const char *from)
{
	snprintf(s->primary, sizeof(s->primary), "%s", url);
	snprintf(s->from, sizeof(s->from), "%s", from);
}

static void add_other(struct pkg_sources *s, const char *url)
{
	if (url[0] && s->n_other < PKG_SOURCES_MAX)
		snprintf(s->other[s->n_other++], PKG_URL_MAX, "%s", url);
}

/* A find-links directory is a place too: file://ABS. */
static void add_place(const struct pkg_run *r, struct pkg_sources *s, const char *url)
{
	char path[PKG_URL_MAX], u[PKG_URL_MAX + 8];

	if (strstr(url, "://") || !url[0]) {
		add_other(s, url);
		return;
	}
	pkg_run_path(r, url, path, sizeof(path));
	snprintf(u, sizeof(u), "file://%s", path);
	add_other(s, u);
}

/* Space-separated URLs (PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS). */
static void add_others(const struct pkg_run *r, struct pkg_sources *s, const char *list)
{
	char one[PKG_URL_MAX];

	while (list && *list) {
		size_t n = strcspn(list, " \t\n");

		if (n && n < sizeof(one)) {
			memcpy(one, list, n);
			one[n] = '\0';
			add_place(r, s, one);
		}
		list += n;
		list += strspn(list, " \t\n");
	}
}

/* Looks key up in one config file; on a hit sets the primary source. */
static void from_conf(struct pkg_sources *s, const char *path, const char *const *sections,
		      const char *key)
{
	char *buf, val[PKG_URL_MAX], from[PKG_PATH_MAX];
	size_t len;

	if (pkg_read_file(path, CONF_MAX, &buf, &len) != 0)
		return;
	if (pkg_conf_get(buf, len, sections, key, val, sizeof(val)) == 0) {
		snprintf(from, sizeof(from), "config:%s", path);
		set_primary(s, val, from);
	}
	free(buf);
}

static void pip_sources(const struct pkg_run *r, struct pkg_sources *s)
{
	static const char *const sect[] = { "global", "install", NULL };
	const char *venv = pkg_run_env(r, "VIRTUAL_ENV"), *v;
	bool uv = strcmp(r->cmd.tool, "uv") == 0;
	char home[PKG_PATH_MAX], p[PKG_PATH_MAX + 32];

	set_primary(s, "https://pypi.org/simple", "default");
	pkg_run_home(r, home, sizeof(home));
	from_conf(s, "/etc/xdg/pip/pip.conf", sect, "index-url");
	from_conf(s, "/etc/pip.conf", sect, "index-url");
	if (home[0]) {
		snprintf(p, sizeof(p), "%s/.pip/pip.conf", home);
		from_conf(s, p, sect, "index-url");
		snprintf(p, sizeof(p), "%s/.config/pip/pip.conf", home);
		from_conf(s, p, sect, "index-url");
	}
	if (venv) {
		snprintf(p, sizeof(p), "%s/pip.conf", venv);
		from_conf(s, p, sect, "index-url");
	}
	if ((v = pkg_run_env(r, "PIP_CONFIG_FILE")))
		from_conf(s, v, sect, "index-url");
	if ((v = pkg_run_env(r, uv ? "UV_INDEX_URL" : "PIP_INDEX_URL")) && *v)
		set_primary(s, v, "environment");
	if (r->cmd.index[0])
		set_primary(s, r->cmd.index, "argument");
	add_others(r, s, pkg_run_env(r, uv ? "UV_EXTRA_INDEX_URL" : "PIP_EXTRA_INDEX_URL"));
	add_others(r, s, pkg_run_env(r, "PIP_FIND_LINKS"));
	for (size_t i = 0; i < r->cmd.n_extra; i++)
		add_place(r, s, r->cmd.extra[i]);
	if (r->cmd.no_index || pkg_run_env(r, "PIP_NO_INDEX")) {
		/* only find-links: the first becomes the primary source */
		s->primary[0] = '\0';
		snprintf(s->from, sizeof(s->from), "argument");
		if (s->n_other) {
			snprintf(s->primary, sizeof(s->primary), "%s", s->other[0]);
			memmove(s->other[0], s->other[1], (s->n_other - 1) * sizeof(s->other[0]));
			s->n_other--;
		}
	}
}

static void npm_sources(const struct pkg_run *r, struct pkg_sources *s)
{
	char home[PKG_PATH_MAX], proj[PKG_PATH_MAX], p[PKG_PATH_MAX + 32];
	const char *v;

	set_primary(s, "https://registry.npmjs.org/", "default");
	if (strcmp(r->cmd.tool, "yarn") == 0)
		set_primary(s, "https://registry.yarnpkg.com/", "default");
	from_conf(s, "/etc/npmrc", NULL, "registry");
	from_conf(s, "/usr/etc/npmrc", NULL, "registry");
	from_conf(s, "/usr/local/etc/npmrc", NULL, "registry");
	pkg_run_home(r, home, sizeof(home));
	if ((v = pkg_run_env(r, "npm_config_userconfig")) ||
	    (v = pkg_run_env(r, "NPM_CONFIG_USERCONFIG")))
		from_conf(s, v, NULL, "registry");
	else if (home[0]) {
		snprintf(p, sizeof(p), "%s/.npmrc", home);
		from_conf(s, p, NULL, "registry");
	}
	pkg_npm_project(r, proj, sizeof(proj));
	snprintf(p, sizeof(p), "%s/.npmrc", proj);
	from_conf(s, p, NULL, "registry");
	if (((v = pkg_run_env(r, "npm_config_registry")) ||
	     (v = pkg_run_env(r, "NPM_CONFIG_REGISTRY"))) && *v)
		set_primary(s, v, "environment");
	if (r->cmd.index[0])
		set_primary(s, r->cmd.index, "argument");
}

/* "deb [opts] URI suite..." lines and deb822 "URIs:" fields. */
static void apt_file(struct pkg_sources *s, const char *path)
{
	char *buf, *line, *save = NULL;
	size_t len;

	if (pkg_read_file(path, CONF_MAX, &buf, &len) != 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tok, *s2 = NULL;

		line += strspn(line, " \t");
		if (strncmp(line, "deb ", 4) != 0 && strncmp(line, "URIs:", 5) != 0)
			continue;
		for (tok = strtok_r(line + 4 + (line[0] == 'U'), " \t", &s2); tok;
		     tok = strtok_r(NULL, " \t", &s2)) {
			if (tok[0] == '[') {   /* [arch=amd64 signed-by=...] */
				while (tok && !strchr(tok, ']'))
					tok = strtok_r(NULL, " \t", &s2);
				continue;
			}
			if (strstr(tok, ":/")) {
				if (!s->primary[0])
					set_primary(s, tok, "config:/etc/apt");
				else
					add_other(s, tok);
			}
			if (line[0] != 'U')
				break;   /* one URI per one-line entry */
		}
	}
	free(buf);
}

static void apt_sources(struct pkg_sources *s)
{
	static const char *const dir = "/etc/apt/sources.list.d";
	char p[PKG_PATH_MAX];
	struct dirent *de;
	DIR *d;

	apt_file(s, "/etc/apt/sources.list");
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if ((n > 5 && strcmp(de->d_name + n - 5, ".list") == 0) ||
		    (n > 8 && strcmp(de->d_name + n - 8, ".sources") == 0)) {
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			apt_file(s, p);
		}
	}
	if (d)
		closedir(d);
}

void pkg_sources_of(const struct pkg_run *r, struct pkg_sources *s)
{
	memset(s, 0, sizeof(*s));
	switch (r->cmd.mgr) {
	case PKG_PIP:
		pip_sources(r, s);
		break;
	case PKG_NPM:
		npm_sources(r, s);
		break;
	case PKG_APT:
		apt_sources(s);
		break;
	case PKG_CARGO:
		set_primary(s, r->cmd.index[0] ? r->cmd.index
				: "https://github.com/rust-lang/crates.io-index",
			    r->cmd.index[0] ? "argument" : "default");
		break;
	default:
		break;   /* dpkg: each package's own file */
	}
}
