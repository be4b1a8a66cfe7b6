/*
 * Package installs (package.install): recognising an installer from its exec's argv,
 * and the parsers of what installers leave behind (pip's METADATA / direct_url.json,
 * npm's node_modules/.package-lock.json, dpkg's status file, config files). Everything
 * here is pure: bytes in, structs out, no I/O; the parsers read bytes a sandbox controls
 * and are fuzzed (tests/fuzz/fuzz_pkg_*.c). The tracker that uses them is
 * packages/pkg_track.c; design and limits: docs/packages.md.
 */
#ifndef SANDGATE_PACKAGES_PKG_H
#define SANDGATE_PACKAGES_PKG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PKG_NAME_MAX 256
#define PKG_VER_MAX 128
#define PKG_URL_MAX 1024
#define PKG_PATH_MAX 1024
#define PKG_MAX_SPECS 64
#define PKG_MAX_EXTRA 4       /* extra indexes / find-links / requirement files kept */

enum pkg_manager { PKG_NONE, PKG_PIP, PKG_NPM, PKG_APT, PKG_DPKG, PKG_CARGO };

/* "pip", "npm", "apt", "dpkg", "cargo" (the event's manager field); NULL for PKG_NONE. */
const char *pkg_manager_name(enum pkg_manager m);

/* One thing the command asked for. */
struct pkg_spec {
	char raw[PKG_URL_MAX];       /* the argument as written */
	char name[PKG_NAME_MAX];     /* "" when the argument is a URL or file */
	char version[PKG_VER_MAX];   /* "==1.0", "^2", "1.2-1": the constraint; "" none */
	bool is_url;                 /* a direct URL or local archive/path (raw) */
};

/* An installer invocation, as far as its arguments tell. */
struct pkg_cmd {
	enum pkg_manager mgr;
	char tool[16];               /* what ran: pip, uv, npm, yarn, pnpm, apt-get, ... */
	char python[PKG_PATH_MAX];   /* pip: the interpreter as invoked ("" unknown) */
	char index[PKG_URL_MAX];     /* -i/--index-url, --registry, --index; "" none */
	char extra[PKG_MAX_EXTRA][PKG_URL_MAX];  /* --extra-index-url, -f/--find-links */
	size_t n_extra;
	bool no_index;               /* pip --no-index */
	char target[PKG_PATH_MAX];   /* pip --target, npm/pip --prefix, cargo --root */
	bool target_is_prefix;       /* target is a prefix (pip --prefix), not a site dir */
	bool global;                 /* npm -g */
	bool user;                   /* pip --user */
	char reqfiles[PKG_MAX_EXTRA][PKG_PATH_MAX];  /* pip -r FILE (as written) */
	size_t n_reqfiles;
	char admindir[PKG_PATH_MAX]; /* dpkg --admindir; "" default */
	struct pkg_spec specs[PKG_MAX_SPECS];
	size_t n_specs;
	bool specs_truncated;        /* more than PKG_MAX_SPECS */
};

/*
 * Recognises an install from a NUL-separated argv (a /proc/PID/cmdline). Interpreters
 * and wrappers are looked through: `env [VAR=x] node npm-cli.js install`, `python3 -m
 * pip install`, `python3 /v/bin/pip install` (a script's exec), `uv pip install`. Returns
 * 1 when argv installs packages (c filled), 0 when it does not, -EINVAL when argv is
 * empty. c must not be NULL; it is fully overwritten.
 */
int pkg_detect(const char *argv, size_t len, struct pkg_cmd *c);

/* A cheap pre-check (argv[0] or argv[1] names a known program) so the common exec costs
 * no allocation: false means pkg_detect() would return 0. */
bool pkg_detect_maybe(const char *argv, size_t len);

/*
 * PEP 503 normalisation (lowercase, runs of '-', '_', '.' become one '-') of name into
 * out (size outlen, always NUL-terminated).
 */
void pkg_pep503(const char *name, char *out, size_t outlen);

/* Splits a pip requirement ("Name[extra] >= 1.0 ; marker") into name and constraint.
 * URL forms ("name @ URL") fill the name and set spec->is_url. 0, or -EINVAL when no
 * name could be read. */
int pkg_pip_spec(const char *s, size_t len, struct pkg_spec *spec);

/* ---- pip: the installed metadata ------------------------------------------------- */

/*
 * Name and Version from a METADATA (or PKG-INFO) file: RFC 822 style headers, ending at
 * the first empty line. 0 when both were found, -EINVAL otherwise.
 */
int pkg_metadata_parse(const char *buf, size_t len, char *name, size_t nlen,
		       char *version, size_t vlen);

/* What a PEP 610 direct_url.json says: where the archive came from and its hash. */
struct pkg_direct_url {
	char url[PKG_URL_MAX];
	char algo[16];               /* "" when no hash was recorded */
	char value[160];             /* lowercase hex */
	bool is_dir;                 /* dir_info: a local directory */
	bool is_vcs;                 /* vcs_info */
};

/* Parses direct_url.json bytes. 0, or -EINVAL (not JSON, no url). */
int pkg_direct_url_parse(const char *buf, size_t len, struct pkg_direct_url *d);

/*
 * Counts the files a RECORD lists (CSV lines "path,hash,size"): a sanity check that
 * the RECORD is one. 0 with *files, -EINVAL when a line is not a RECORD line.
 */
int pkg_record_parse(const char *buf, size_t len, size_t *files);

/* ---- npm: node_modules/.package-lock.json ---------------------------------------- */

struct pkg_lock_ent {
	char path[PKG_PATH_MAX];     /* "node_modules/a/node_modules/b" */
	char name[PKG_NAME_MAX];     /* "name" when given, else the last path element(s) */
	char version[PKG_VER_MAX];
	char resolved[PKG_URL_MAX];  /* "" when absent */
	char algo[16];               /* from integrity ("sha512-BASE64"); "" when absent */
	char value[160];             /* hex */
	bool link;                   /* a symlink to elsewhere (workspaces, file: dirs) */
};

/*
 * Calls fn for each entry of "packages" below node_modules/ (the root "" entry is
 * skipped). Returns 0, -EINVAL (not a lockfile), or fn's non-zero return.
 */
int pkg_lock_parse(const char *buf, size_t len,
		   int (*fn)(void *ctx, const struct pkg_lock_ent *e), void *ctx);

/*
 * Decodes a Subresource Integrity string ("sha512-BASE64", the strongest of several
 * when space-separated) into algo and lowercase hex. 0 or -EINVAL.
 */
int pkg_sri_decode(const char *sri, char *algo, size_t alen, char *hex, size_t hlen);

/* ---- dpkg: the status file -------------------------------------------------------- */

struct pkg_dpkg_ent {
	char name[PKG_NAME_MAX];
	char version[PKG_VER_MAX];
	char arch[32];
	char status[64];             /* "install ok installed" */
};

/* Calls fn for every paragraph with a Package field. 0, -EINVAL, or fn's return. */
int pkg_dpkg_status_parse(const char *buf, size_t len,
			  int (*fn)(void *ctx, const struct pkg_dpkg_ent *e), void *ctx);

/* ---- cargo: $CARGO_HOME/.crates2.json ------------------------------------------------ */

#define PKG_CARGO_BINS 16

struct pkg_crate_ent {
	char name[PKG_NAME_MAX];
	char version[PKG_VER_MAX];
	char source[PKG_URL_MAX];    /* "registry+https://…", "path+file:///…", "git+…" */
	char bins[PKG_CARGO_BINS][PKG_NAME_MAX];   /* the binaries it put in ROOT/bin */
	size_t n_bins;
};

/* Calls fn for each "NAME VERSION (SOURCE)" key of "installs". 0, -EINVAL or fn's. */
int pkg_crates2_parse(const char *buf, size_t len,
		      int (*fn)(void *ctx, const struct pkg_crate_ent *e), void *ctx);

/* ---- config files ---------------------------------------------------------------- */

/*
 * The value of key in an INI file (pip.conf: sections [global] and [install] only, the
 * later winning) or a flat "key=value" file (.npmrc, section NULL). Copies it into out
 * and returns 0; -ENOENT when the key is not set.
 */
int pkg_conf_get(const char *buf, size_t len, const char *const *sections, const char *key,
		 char *out, size_t outlen);

/*
 * Whether url lies under one of the approved prefixes: scheme and host compared
 * case-insensitively, the prefix's trailing '/' ignored, and the match ending at a path
 * boundary ('/', '?', '#' or the end): "https://pypi.org/simple" approves
 * "https://pypi.org/simple/x/" but not "https://pypi.org/simplex".
 */
bool pkg_source_approved(const char *url, char *const *prefixes, size_t n);

#endif
