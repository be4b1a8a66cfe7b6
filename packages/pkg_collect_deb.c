/*
 * What a dpkg or apt run installed: the packages of dpkg's status file whose file list
 * (info/NAME[:ARCH].list) was written since the run's exec. The hash is the .deb's
 * SHA-256 where the archive is still there (the file given to dpkg -i, or apt's cache
 * /var/cache/apt/archives/NAME_VERSION_ARCH.deb), else the SHA-256 of the installed
 * md5sums (or file list): installed metadata, and the event says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "packages/pkg_int.h"

#define STATUS_MAX (64u << 20)
#define DEB_FOUND_MAX 2048

struct deb_list {
	const struct pkg_run *r;
	const char *admin;
	struct pkg_dpkg_ent *v;
	size_t n;
};

/* info/NAME:ARCH.FILE or info/NAME.FILE, whichever exists. */
static bool info_file(const char *admin, const struct pkg_dpkg_ent *e, const char *what,
		      char *out, size_t len)
{
	snprintf(out, len, "%s/info/%s:%s.%s", admin, e->name, e->arch, what);
	if (access(out, F_OK) == 0)
		return true;
	snprintf(out, len, "%s/info/%s.%s", admin, e->name, what);
	return access(out, F_OK) == 0;
}

static int on_status(void *arg, const struct pkg_dpkg_ent *e)
{
	struct deb_list *l = arg;
	char list[PKG_PATH_MAX];

	if (strstr(e->status, "not-installed") || strstr(e->status, "config-files") ||
	    !info_file(l->admin, e, "list", list, sizeof(list)) ||
	    !pkg_changed_since(list, &l->r->start))
		return 0;
	if (l->n == DEB_FOUND_MAX)
		return 0;
	l->v[l->n++] = *e;
	return 0;
}

/* raw resolved against the run's cwd, symlinks and ".." resolved when it exists. */
static void abs_file(const struct pkg_run *r, const char *raw, char *out, size_t len)
{
	char path[PKG_PATH_MAX * 2], real[PATH_MAX];

	pkg_run_path(r, raw, path, sizeof(path));
	snprintf(out, len, "%s", realpath(path, real) ? real : path);
}

/* The .deb a dpkg -i / apt install FILE argument named for package e, or "". */
static void deb_given(const struct pkg_run *r, const struct pkg_dpkg_ent *e, size_t found,
		      char *out, size_t len)
{
	size_t nl = strlen(e->name), files = 0;
	const char *only = NULL;

	out[0] = '\0';
	for (size_t i = 0; i < r->cmd.n_specs; i++) {
		const char *raw = r->cmd.specs[i].raw, *b = strrchr(raw, '/');

		if (!r->cmd.specs[i].is_url)
			continue;
		files++;
		only = raw;
		b = b ? b + 1 : raw;
		/* Debian's file naming: NAME_VERSION_ARCH.deb */
		if (strncmp(b, e->name, nl) == 0 && b[nl] == '_') {
			abs_file(r, raw, out, len);
			return;
		}
	}
	if (files == 1 && found == 1)
		abs_file(r, only, out, len);
}

/* apt's cache name: the version's ':' (epoch) is written %3a. */
static void apt_cached(const struct pkg_dpkg_ent *e, char *out, size_t len)
{
	char ver[PKG_VER_MAX * 3];
	size_t o = 0;

	for (const char *p = e->version; *p && o + 4 < sizeof(ver); p++) {
		if (*p == ':') {
			memcpy(ver + o, "%3a", 3);
			o += 3;
		} else
			ver[o++] = *p;
	}
	ver[o] = '\0';
	snprintf(out, len, "/var/cache/apt/archives/%s_%s_%s.deb", e->name, ver, e->arch);
}

static void deb_hash(const struct deb_list *l, const struct pkg_dpkg_ent *e,
		     struct pkg_found *f)
{
	char deb[PKG_PATH_MAX];

	deb_given(l->r, e, l->n, deb, sizeof(deb));
	if (deb[0]) {
		char url[PKG_PATH_MAX + 8];

		snprintf(url, sizeof(url), "file://%s", deb);
		snprintf(f->source, sizeof(f->source), "%s", url);
		f->source_exact = true;
	} else if (l->r->cmd.mgr == PKG_APT)
		apt_cached(e, deb, sizeof(deb));
	if (deb[0] && pkg_sha256_file(deb, f->value) == 0) {
		f->hash_kind = "archive";
		snprintf(f->hash_from, sizeof(f->hash_from), "%s", deb);
	} else if ((info_file(l->admin, e, "md5sums", deb, sizeof(deb)) ||
		    info_file(l->admin, e, "list", deb, sizeof(deb))) &&
		   pkg_sha256_file(deb, f->value) == 0) {
		f->hash_kind = "installed_metadata";
		snprintf(f->hash_from, sizeof(f->hash_from), "%s", deb);
	} else
		return;
	snprintf(f->algo, sizeof(f->algo), "sha256");
}

int pkg_collect_dpkg(const struct pkg_run *r, pkg_found_fn fn, void *ctx)
{
	const char *admin = r->cmd.admindir[0] ? r->cmd.admindir : "/var/lib/dpkg";
	struct deb_list l = { .r = r, .admin = admin };
	char path[PKG_PATH_MAX + 16], *buf;
	struct pkg_found f;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "%s/status", admin);
	ret = pkg_read_file(path, STATUS_MAX, &buf, &len);
	if (ret)
		return ret;
	l.v = calloc(DEB_FOUND_MAX, sizeof(*l.v));
	ret = l.v ? pkg_dpkg_status_parse(buf, len, on_status, &l) : -ENOMEM;
	free(buf);
	for (size_t i = 0; ret == 0 && i < l.n; i++) {
		memset(&f, 0, sizeof(f));
		snprintf(f.name, sizeof(f.name), "%s", l.v[i].name);
		snprintf(f.version, sizeof(f.version), "%s", l.v[i].version);
		snprintf(f.location, sizeof(f.location), "%s/status", admin);
		deb_hash(&l, &l.v[i], &f);
		ret = fn(ctx, &f);
	}
	free(l.v);
	return ret;
}
