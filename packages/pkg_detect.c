/*
 * Is this exec an install? From argv alone (pure): the program after interpreters and
 * wrappers, its subcommand, and what the arguments ask for (specs, indexes, targets).
 * Options that take a value are listed per manager so a value is never read as a spec.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "packages/pkg.h"

#define ARGS_MAX 512

struct argv_view {
	const char *a[ARGS_MAX];
	size_t n;
};

const char *pkg_manager_name(enum pkg_manager m)
{
	static const char *const names[] = { NULL, "pip", "npm", "apt", "dpkg", "cargo" };

	return (unsigned)m < sizeof(names) / sizeof(names[0]) ? names[m] : NULL;
}

/* Arguments beyond ARGS_MAX are not looked at (specs_truncated says so for specs). */
static void split(const char *buf, size_t len, struct argv_view *v)
{
	size_t off = 0;

	v->n = 0;
	while (off < len && v->n < ARGS_MAX) {
		const char *nul = memchr(buf + off, '\0', len - off);

		if (!nul)
			break;   /* the caller NUL-terminates; an unterminated tail is dropped */
		v->a[v->n++] = buf + off;
		off = (size_t)(nul - buf) + 1;
	}
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* name, or name followed by digits and dots ("python3.11", "pip3"). */
static bool named(const char *s, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(s, name, n) != 0)
		return false;
	for (s += n; *s; s++)
		if (!((*s >= '0' && *s <= '9') || *s == '.'))
			return false;
	return true;
}

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src);
}

/*
 * Option handling shared by the managers: at a[*i], when it is opt or --opt=VALUE,
 * returns its value (and advances *i past a separate value); NULL otherwise.
 */
static const char *opt_value(const struct argv_view *v, size_t *i, const char *opt)
{
	size_t n = strlen(opt);
	const char *s = v->a[*i];

	if (strcmp(s, opt) == 0)
		return *i + 1 < v->n ? v->a[++*i] : "";
	if (strncmp(s, opt, n) == 0 && s[n] == '=' && opt[1] == '-')
		return s + n + 1;
	/* short options glued to their value: -ihttps://x */
	if (opt[1] != '-' && strncmp(s, opt, 2) == 0 && s[2] != '\0' && n == 2)
		return s + 2;
	return NULL;
}

static bool add_spec(struct pkg_cmd *c, struct pkg_spec **out)
{
	if (c->n_specs == PKG_MAX_SPECS) {
		c->specs_truncated = true;
		return false;
	}
	*out = &c->specs[c->n_specs++];
	memset(*out, 0, sizeof(**out));
	return true;
}

static void add_extra(struct pkg_cmd *c, const char *url)
{
	if (c->n_extra < PKG_MAX_EXTRA)
		copy(c->extra[c->n_extra++], PKG_URL_MAX, url);
}

static bool looks_like_url_or_file(const char *s)
{
	size_t n = strlen(s);

	return strstr(s, "://") || s[0] == '/' || s[0] == '.' || strncmp(s, "file:", 5) == 0 ||
	       (n > 4 && (strcmp(s + n - 4, ".whl") == 0 || strcmp(s + n - 4, ".tgz") == 0 ||
			  strcmp(s + n - 4, ".deb") == 0 || strcmp(s + n - 4, ".zip") == 0)) ||
	       (n > 7 && strcmp(s + n - 7, ".tar.gz") == 0);
}

/* ---- pip ------------------------------------------------------------------------- */

static const char *const pip_valued[] = {
	"-c", "--constraint", "--platform", "--python-version",
	"--implementation", "--abi", "--root", "--src", "--upgrade-strategy",
	"--install-option", "--global-option", "--config-settings", "-C", "--no-binary",
	"--only-binary", "--progress-bar", "--report", "--log", "--proxy", "--retries",
	"--timeout", "--exists-action", "--trusted-host", "--cert", "--client-cert",
	"--cache-dir", "--python", "--keyring-provider", "--root-user-action", NULL
};

/* The pip options that matter; 1 when a[*i] was one (consumed), 0 otherwise. */
static int pip_option(struct pkg_cmd *c, const struct argv_view *v, size_t *i)
{
	const char *s = v->a[*i], *val;

	if ((val = opt_value(v, i, "-i")) || (val = opt_value(v, i, "--index-url")) ||
	    (val = opt_value(v, i, "--index")))
		copy(c->index, sizeof(c->index), val);
	else if ((val = opt_value(v, i, "--extra-index-url")) ||
		 (val = opt_value(v, i, "-f")) || (val = opt_value(v, i, "--find-links")))
		add_extra(c, val);
	else if ((val = opt_value(v, i, "-r")) || (val = opt_value(v, i, "--requirement"))) {
		if (c->n_reqfiles < PKG_MAX_EXTRA)
			copy(c->reqfiles[c->n_reqfiles++], PKG_PATH_MAX, val);
	} else if ((val = opt_value(v, i, "-t")) || (val = opt_value(v, i, "--target")))
		copy(c->target, sizeof(c->target), val);
	else if ((val = opt_value(v, i, "--prefix"))) {
		copy(c->target, sizeof(c->target), val);
		c->target_is_prefix = true;
	} else if ((val = opt_value(v, i, "-e")) || (val = opt_value(v, i, "--editable"))) {
		struct pkg_spec *sp;

		if (add_spec(c, &sp)) {   /* a local project or VCS URL, installed in place */
			copy(sp->raw, sizeof(sp->raw), val);
			sp->is_url = true;
		}
	} else if (strcmp(s, "--no-index") == 0)
		c->no_index = true;
	else if (strcmp(s, "--user") == 0)
		c->user = true;
	else
		return 0;
	return 1;
}

/* args a[from..]: [global options] install [options] specs. 1 when an install. */
static int pip_args(struct pkg_cmd *c, const struct argv_view *v, size_t from)
{
	bool install = false;
	struct pkg_spec *sp;

	for (size_t i = from; i < v->n; i++) {
		const char *s = v->a[i];

		if (pip_option(c, v, &i))
			continue;
		if (s[0] == '-') {
			if (in_list(s, pip_valued))
				i++;
			continue;
		}
		if (!install) {
			if (strcmp(s, "install") != 0)
				return 0;   /* download, wheel, list, ...: nothing installed */
			install = true;
			continue;
		}
		if (!add_spec(c, &sp))
			continue;
		copy(sp->raw, sizeof(sp->raw), s);
		if (looks_like_url_or_file(s) && !strstr(s, " @ "))
			sp->is_url = true;
		else if (pkg_pip_spec(s, strlen(s), sp) != 0)
			c->n_specs--;
	}
	return install ? 1 : 0;
}

/* ---- npm, yarn, pnpm --------------------------------------------------------------- */

static const char *const npm_valued[] = {
	"--tag", "--cache", "--userconfig", "--globalconfig", "-w", "--workspace",
	"--save-prefix", "--omit", "--include", "--install-strategy", "--loglevel", NULL
};

static int npm_args(struct pkg_cmd *c, const struct argv_view *v, size_t from)
{
	static const char *const subs[] = { "install", "i", "in", "ins", "inst", "insta",
					    "instal", "isnt", "isntall", "add", "ci", NULL };
	bool yarn = strcmp(c->tool, "yarn") == 0, sub = false;
	struct pkg_spec *sp;
	const char *val;

	for (size_t i = from; i < v->n; i++) {
		const char *s = v->a[i];

		if ((val = opt_value(v, &i, "--registry"))) {
			copy(c->index, sizeof(c->index), val);
			continue;
		}
		if ((val = opt_value(v, &i, "--prefix")) || (val = opt_value(v, &i, "-C")) ||
		    (val = opt_value(v, &i, "--dir"))) {
			copy(c->target, sizeof(c->target), val);
			continue;
		}
		if (strcmp(s, "-g") == 0 || strcmp(s, "--global") == 0 ||
		    strcmp(s, "--location=global") == 0) {
			c->global = true;
			continue;
		}
		if (s[0] == '-') {
			if (in_list(s, npm_valued))
				i++;
			continue;
		}
		if (!sub) {
			if (!in_list(s, subs))
				return 0;
			sub = true;
			continue;
		}
		if (!add_spec(c, &sp))
			continue;
		copy(sp->raw, sizeof(sp->raw), s);
		if (looks_like_url_or_file(s)) {
			sp->is_url = true;
			continue;
		}
		/* name@range, @scope/name@range */
		const char *at = strchr(s + (s[0] == '@'), '@');
		size_t nl = at ? (size_t)(at - s) : strlen(s);

		snprintf(sp->name, sizeof(sp->name), "%.*s", (int)nl, s);
		if (at)
			copy(sp->version, sizeof(sp->version), at + 1);
	}
	/* A bare `yarn` installs the project's dependencies. */
	return sub || (yarn && v->n == from) ? 1 : 0;
}

/* ---- apt, dpkg ------------------------------------------------------------------------ */

static int apt_args(struct pkg_cmd *c, const struct argv_view *v, size_t from)
{
	static const char *const valued[] = { "-o", "--option", "-t", "--target-release",
					      "-c", "--config-file", NULL };
	bool sub = false;
	struct pkg_spec *sp;

	for (size_t i = from; i < v->n; i++) {
		const char *s = v->a[i];

		if (s[0] == '-') {
			if (in_list(s, valued))
				i++;
			continue;
		}
		if (!sub) {
			if (strcmp(s, "install") != 0 && strcmp(s, "reinstall") != 0)
				return 0;
			sub = true;
			continue;
		}
		if (!add_spec(c, &sp))
			continue;
		copy(sp->raw, sizeof(sp->raw), s);
		if (looks_like_url_or_file(s)) {
			sp->is_url = true;
			continue;
		}
		/* name=version, name/release */
		size_t nl = strcspn(s, "=/");

		snprintf(sp->name, sizeof(sp->name), "%.*s", (int)nl, s);
		if (s[nl] == '=')
			copy(sp->version, sizeof(sp->version), s + nl + 1);
	}
	return sub ? 1 : 0;
}

static int dpkg_args(struct pkg_cmd *c, const struct argv_view *v, size_t from)
{
	bool install = false;
	struct pkg_spec *sp;
	const char *val;

	for (size_t i = from; i < v->n; i++) {
		const char *s = v->a[i];

		if (strcmp(s, "-i") == 0 || strcmp(s, "--install") == 0) {
			install = true;
			continue;
		}
		if ((val = opt_value(v, &i, "--admindir"))) {
			copy(c->admindir, sizeof(c->admindir), val);
			continue;
		}
		if (s[0] == '-') {
			/* grouped short actions: -iR, -Ei */
			if (s[1] != '-' && strchr(s, 'i'))
				install = true;
			continue;
		}
		if (!install || !add_spec(c, &sp))
			continue;
		copy(sp->raw, sizeof(sp->raw), s);
		sp->is_url = true;
	}
	return install ? 1 : 0;
}

/* ---- cargo -------------------------------------------------------------------------- */

static int cargo_args(struct pkg_cmd *c, const struct argv_view *v, size_t from)
{
	static const char *const valued[] = { "--features", "-F", "--target", "--profile",
					      "-j", "--jobs", "--bin", "--example", "--branch",
					      "--tag", "--rev", "--target-dir", NULL };
	bool sub = false;
	struct pkg_spec *sp = NULL;
	const char *val;

	for (size_t i = from; i < v->n; i++) {
		const char *s = v->a[i];

		if ((val = opt_value(v, &i, "--index")) || (val = opt_value(v, &i, "--registry")) ||
		    (val = opt_value(v, &i, "--git"))) {
			copy(c->index, sizeof(c->index), val);
			continue;
		}
		if ((val = opt_value(v, &i, "--root"))) {
			copy(c->target, sizeof(c->target), val);
			continue;
		}
		if ((val = opt_value(v, &i, "--version")) || (val = opt_value(v, &i, "--vers"))) {
			if (sp)
				copy(sp->version, sizeof(sp->version), val);
			continue;
		}
		if ((val = opt_value(v, &i, "--path"))) {
			if (add_spec(c, &sp)) {
				copy(sp->raw, sizeof(sp->raw), val);
				sp->is_url = true;
			}
			continue;
		}
		if (s[0] == '-') {
			if (in_list(s, valued))
				i++;
			continue;
		}
		if (!sub) {
			if (strcmp(s, "install") != 0)
				return 0;
			sub = true;
			continue;
		}
		if (!add_spec(c, &sp))
			continue;
		copy(sp->raw, sizeof(sp->raw), s);
		size_t nl = strcspn(s, "@");

		snprintf(sp->name, sizeof(sp->name), "%.*s", (int)nl, s);
		if (s[nl] == '@')
			copy(sp->version, sizeof(sp->version), s + nl + 1);
	}
	return sub ? 1 : 0;
}

/* ---- the program behind interpreters and wrappers ------------------------------------ */

/* Skips `env [-i] [VAR=x]...`; returns the index of the program. */
static size_t skip_env(const struct argv_view *v, size_t i)
{
	if (i >= v->n || strcmp(base(v->a[i]), "env") != 0)
		return i;
	for (i++; i < v->n; i++) {
		const char *s = v->a[i];

		if (strcmp(s, "-u") == 0 || strcmp(s, "-C") == 0 || strcmp(s, "-S") == 0 ||
		    strcmp(s, "--unset") == 0 || strcmp(s, "--chdir") == 0) {
			i++;   /* the option's value */
			continue;
		}
		if (s[0] == '-' || strchr(s, '='))
			continue;
		break;
	}
	return i;
}

/* python [-flags] -m pip ARGS, or python SCRIPT ARGS where SCRIPT is pip. */
static int from_python(struct pkg_cmd *c, const struct argv_view *v, size_t i)
{
	copy(c->python, sizeof(c->python), v->a[i]);
	for (i++; i < v->n; i++) {
		const char *s = v->a[i];

		if (strcmp(s, "-m") == 0 || strcmp(s, "-mpip") == 0) {
			if (strcmp(s, "-m") == 0 && (i + 1 >= v->n || strcmp(v->a[i + 1], "pip") != 0))
				return 0;
			i += strcmp(s, "-m") == 0 ? 2 : 1;
			copy(c->tool, sizeof(c->tool), "pip");
			c->mgr = PKG_PIP;
			return pip_args(c, v, i);
		}
		if (strcmp(s, "-W") == 0 || strcmp(s, "-X") == 0) {
			i++;   /* -W ignore, -X utf8: an option's value, not the script */
			continue;
		}
		if (s[0] == '-' && s[1] != '-' && s[1] != '\0' && strcmp(s, "-c") != 0)
			continue;   /* -I, -s, -u, -B, ... */
		break;
	}
	if (i >= v->n || !named(base(v->a[i]), "pip"))
		return 0;
	copy(c->tool, sizeof(c->tool), "pip");
	c->mgr = PKG_PIP;
	return pip_args(c, v, i + 1);
}

static int from_program(struct pkg_cmd *c, const struct argv_view *v, size_t i)
{
	const char *b = base(v->a[i]);

	if (named(b, "python") || named(b, "python3"))
		return from_python(c, v, i);
	if (strcmp(b, "node") == 0 || strcmp(b, "nodejs") == 0) {
		while (++i < v->n && v->a[i][0] == '-')
			;
		if (i >= v->n)
			return 0;
		b = base(v->a[i]);
	}
	copy(c->tool, sizeof(c->tool), b);
	if (named(b, "pip")) {
		copy(c->tool, sizeof(c->tool), "pip");
		c->mgr = PKG_PIP;
		return pip_args(c, v, i + 1);
	}
	if (strcmp(b, "uv") == 0) {
		c->mgr = PKG_PIP;
		return i + 1 < v->n && strcmp(v->a[i + 1], "pip") == 0 ? pip_args(c, v, i + 2) : 0;
	}
	if (strcmp(b, "npm") == 0 || strcmp(b, "npm-cli.js") == 0 || strcmp(b, "yarn") == 0 ||
	    strcmp(b, "yarn.js") == 0 || strcmp(b, "yarnpkg") == 0 || strcmp(b, "pnpm") == 0 ||
	    strcmp(b, "pnpm.cjs") == 0) {
		copy(c->tool, sizeof(c->tool), b[0] == 'y' ? "yarn" : b[0] == 'p' ? "pnpm" : "npm");
		c->mgr = PKG_NPM;
		return npm_args(c, v, i + 1);
	}
	if (strcmp(b, "apt") == 0 || strcmp(b, "apt-get") == 0) {
		c->mgr = PKG_APT;
		return apt_args(c, v, i + 1);
	}
	if (strcmp(b, "dpkg") == 0) {
		c->mgr = PKG_DPKG;
		return dpkg_args(c, v, i + 1);
	}
	if (strcmp(b, "cargo") == 0) {
		c->mgr = PKG_CARGO;
		return cargo_args(c, v, i + 1);
	}
	return 0;
}

int pkg_detect(const char *argv, size_t len, struct pkg_cmd *c)
{
	struct argv_view view, *v = &view;   /* 4 KiB of pointers into argv */
	size_t i;
	int ret;

	memset(c, 0, sizeof(*c));
	split(argv, len, v);
	if (v->n == 0)
		return -EINVAL;
	i = skip_env(v, 0);
	if (i >= v->n)
		return 0;
	ret = from_program(c, v, i);
	if (ret != 1) {
		memset(c, 0, sizeof(*c));
		return 0;
	}
	return 1;
}

bool pkg_detect_maybe(const char *argv, size_t len)
{
	static const char *const progs[] = { "pip", "python", "uv", "npm", "node", "yarn",
					     "pnpm", "apt", "dpkg", "cargo", "env", NULL };
	size_t off = 0;

	/* argv[0], and argv[1] for interpreters: the program is among the first two */
	for (int k = 0; k < 2 && off < len; k++) {
		const char *a = argv + off, *nul = memchr(a, '\0', len - off);
		const char *b;

		if (!nul)
			return false;
		b = base(a);
		for (size_t i = 0; progs[i]; i++)
			if (strncmp(b, progs[i], strlen(progs[i])) == 0)
				return true;
		off = (size_t)(nul - argv) + 1;
	}
	return false;
}
