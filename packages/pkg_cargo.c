/*
 * cargo install: $CARGO_INSTALL_ROOT (or --root, $CARGO_HOME, ~/.cargo)/.crates2.json
 * lists every installed crate with its binaries; the ones whose binary in ROOT/bin was
 * written since the run's exec are what this run installed. A registry crate's archive
 * is in $CARGO_HOME/registry/cache/INDEX/NAME-VERSION.crate: its SHA-256 is the registry's
 * checksum (the one Cargo.lock records).
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "packages/pkg_int.h"

#define CRATES2_MAX (16u << 20)

/* "NAME VERSION (SOURCE)" */
static int split_key(const char *key, struct pkg_crate_ent *e)
{
	const char *sp1 = strchr(key, ' '), *sp2, *open, *close;

	if (!sp1 || sp1 == key)
		return -EINVAL;
	sp2 = strchr(sp1 + 1, ' ');
	open = sp2 ? sp2 + 1 : NULL;
	close = open ? strrchr(open, ')') : NULL;
	if (!sp2 || *open != '(' || !close || close[1] != '\0')
		return -EINVAL;
	snprintf(e->name, sizeof(e->name), "%.*s", (int)(sp1 - key), key);
	snprintf(e->version, sizeof(e->version), "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
	snprintf(e->source, sizeof(e->source), "%.*s", (int)(close - open - 1), open + 1);
	return 0;
}

int pkg_crates2_parse(const char *buf, size_t len,
		      int (*fn)(void *ctx, const struct pkg_crate_ent *e), void *ctx)
{
	json_t *root = json_loadb(buf, len, 0, NULL), *in, *v, *bins, *b;
	struct pkg_crate_ent *e = malloc(sizeof(*e));
	const char *key;
	size_t i;
	int ret = 0;

	in = json_object_get(root, "installs");
	if (!root || !e || !json_is_object(in)) {
		ret = e ? -EINVAL : -ENOMEM;
		goto out;
	}
	json_object_foreach(in, key, v) {
		memset(e, 0, sizeof(*e));
		if (split_key(key, e) != 0)
			continue;
		bins = json_object_get(v, "bins");
		json_array_foreach(bins, i, b) {
			if (json_is_string(b) && e->n_bins < PKG_CARGO_BINS)
				snprintf(e->bins[e->n_bins++], PKG_NAME_MAX, "%s",
					 json_string_value(b));
		}
		ret = fn(ctx, e);
		if (ret)
			break;
	}
out:
	free(e);
	json_decref(root);
	return ret;
}

struct cargo_ctx {
	const struct pkg_run *r;
	char root[PKG_PATH_MAX];
	char home[PKG_PATH_MAX];
	pkg_found_fn fn;
	void *ctx;
};

/* The .crate in cargo's download cache (any registry directory). */
static void crate_hash(const struct cargo_ctx *c, const struct pkg_crate_ent *e,
		       struct pkg_found *f)
{
	char pat[PKG_PATH_MAX * 2];
	glob_t g;

	snprintf(pat, sizeof(pat), "%s/registry/cache/*/%s-%s.crate", c->home, e->name,
		 e->version);
	if (glob(pat, GLOB_NOSORT, NULL, &g) != 0)
		return;
	if (g.gl_pathc >= 1 && pkg_sha256_file(g.gl_pathv[0], f->value) == 0) {
		snprintf(f->algo, sizeof(f->algo), "sha256");
		f->hash_kind = "archive";
		snprintf(f->hash_from, sizeof(f->hash_from), "%s", g.gl_pathv[0]);
	}
	globfree(&g);
}

static int on_crate(void *arg, const struct pkg_crate_ent *e)
{
	struct cargo_ctx *c = arg;
	char bin[PKG_PATH_MAX + PKG_NAME_MAX + 8];
	struct pkg_found f;
	bool fresh = false;

	for (size_t i = 0; i < e->n_bins && !fresh; i++) {
		snprintf(bin, sizeof(bin), "%s/bin/%s", c->root, e->bins[i]);
		fresh = pkg_changed_since(bin, &c->r->start);
	}
	if (!fresh)
		return 0;
	memset(&f, 0, sizeof(f));
	snprintf(f.name, sizeof(f.name), "%s", e->name);
	snprintf(f.version, sizeof(f.version), "%s", e->version);
	/* path+file:///x -> file:///x; registry+URL -> URL; git+URL stays */
	if (strncmp(e->source, "path+", 5) == 0 || strncmp(e->source, "registry+", 9) == 0)
		snprintf(f.source, sizeof(f.source), "%s", strchr(e->source, '+') + 1);
	else
		snprintf(f.source, sizeof(f.source), "%s", e->source);
	f.source_exact = f.source[0] != '\0';
	snprintf(f.location, sizeof(f.location), "%s/.crates2.json", c->root);
	crate_hash(c, e, &f);
	return c->fn(c->ctx, &f);
}

int pkg_collect_cargo(const struct pkg_run *r, pkg_found_fn fn, void *ctx)
{
	struct cargo_ctx *c = calloc(1, sizeof(*c));
	const char *h = pkg_run_env(r, "CARGO_HOME"), *ir = pkg_run_env(r, "CARGO_INSTALL_ROOT");
	char path[PKG_PATH_MAX + 32], *buf;
	size_t len;
	int ret;

	if (!c)
		return -ENOMEM;
	c->r = r;
	c->fn = fn;
	c->ctx = ctx;
	if (h && h[0] == '/')
		snprintf(c->home, sizeof(c->home), "%s", h);
	else {
		pkg_run_home(r, path, sizeof(path));
		snprintf(c->home, sizeof(c->home), "%s/.cargo", path);
	}
	if (r->cmd.target[0])
		pkg_run_path(r, r->cmd.target, c->root, sizeof(c->root));
	else
		snprintf(c->root, sizeof(c->root), "%s", ir && ir[0] == '/' ? ir : c->home);
	snprintf(path, sizeof(path), "%s/.crates2.json", c->root);
	ret = pkg_read_file(path, CRATES2_MAX, &buf, &len);
	if (ret == 0) {
		ret = pkg_crates2_parse(buf, len, on_crate, c);
		free(buf);
	}
	free(c);
	return ret == -ENOENT ? 0 : ret;
}
