/*
 * Inside packages/: the package tracker. The proc connector thread recognises an
 * installer's exec (pkgtrack_exec) and its exit (pkgtrack_exit); a worker thread then
 * works out what the run installed (pkg_collect_*), where from (pkg_source_*), and
 * emits package.install (+ alert) events (pkg_emit). docs/packages.md.
 */
#ifndef SANDGATE_PACKAGES_PKG_INT_H
#define SANDGATE_PACKAGES_PKG_INT_H

#include <limits.h>
#include <sys/types.h>
#include <time.h>

#include "attribution/attribution.h"
#include "packages/pkg.h"

#define PKG_ENV_MAX (64 * 1024)      /* bytes of /proc/PID/environ kept */
#define PKG_RUNS_MAX 64              /* installer runs in progress at once */
#define PKG_SOURCES_MAX 8
#define PKG_NET_MAX 16               /* names and addresses a run's tree contacted, kept */
#define PKG_NET_NAME 256

/* One installer run: what its exec said, kept until its exit. */
struct pkg_run {
	pid_t pid;
	uint32_t uid;
	bool uid_known;
	char sid[SESSION_ID_MAX + 1];
	struct timespec start;       /* wall time of the exec */
	char cwd[PATH_MAX];
	char *env;                   /* NUL-separated environ, NULL when unreadable */
	size_t envlen;
	struct pkg_cmd cmd;
	/* What the gateway saw the run's process tree resolve and connect to (under the
	 * tracker's mutex while the run is active; the worker's alone after). */
	char net[PKG_NET_MAX][PKG_NET_NAME];
	size_t n_net;
	bool net_seen;               /* any net.dns / net.connect of the tree */
	struct pkg_run *next;        /* the worker's queue */
};

/* Where a run's packages came from, as far as arguments, environment and config say. */
struct pkg_sources {
	char primary[PKG_URL_MAX];   /* "" unknown */
	char from[PKG_PATH_MAX];     /* "argument", "environment", "default", "config:FILE" */
	char other[PKG_SOURCES_MAX][PKG_URL_MAX];   /* extra indexes, find-links */
	size_t n_other;
};

/* One package the run installed. */
struct pkg_found {
	char name[PKG_NAME_MAX];
	char version[PKG_VER_MAX];
	char source[PKG_URL_MAX];    /* exact when source_exact; else "" = the run's sources */
	bool source_exact;           /* from installed metadata (direct_url, resolved, file) */
	char algo[16];               /* "" no hash */
	char value[160];
	const char *hash_kind;       /* "archive" or "installed_metadata" */
	char hash_from[PKG_PATH_MAX];
	char location[PKG_PATH_MAX];
};

/* Called once per package found; 0 or -errno (stops the collection). */
typedef int (*pkg_found_fn)(void *ctx, const struct pkg_found *f);

/* The value of NAME in the run's environment, or NULL. */
const char *pkg_run_env(const struct pkg_run *r, const char *name);
/* path resolved against the run's cwd into out (absolute paths copied). */
void pkg_run_path(const struct pkg_run *r, const char *path, char *out, size_t len);
/* The run's home directory: HOME, else the uid's passwd entry, else "". */
void pkg_run_home(const struct pkg_run *r, char *out, size_t len);

/* Reads a whole file (at most max bytes) into a malloc'd NUL-terminated buffer. 0 or
 * -errno (-EFBIG when larger). */
int pkg_read_file(const char *path, size_t max, char **out, size_t *len);
/* SHA-256 of a file as lowercase hex (65 bytes). 0 or -errno. */
int pkg_sha256_file(const char *path, char hex[65]);
/* Whether path's ctime is at or after t (minus the clock's coarseness). */
bool pkg_changed_since(const char *path, const struct timespec *t);

/* Per manager: what the run installed. 0 or -errno (nothing could be read). */
int pkg_collect_pip(const struct pkg_run *r, pkg_found_fn fn, void *ctx);
int pkg_collect_npm(const struct pkg_run *r, pkg_found_fn fn, void *ctx);
int pkg_collect_dpkg(const struct pkg_run *r, pkg_found_fn fn, void *ctx);
int pkg_collect_cargo(const struct pkg_run *r, pkg_found_fn fn, void *ctx);

/* The npm project directory: --prefix, else the nearest ancestor of cwd with a
 * package.json (npm's own rule), else cwd. */
void pkg_npm_project(const struct pkg_run *r, char *out, size_t len);

/* The run's configured sources (arguments, environment, config files, default). */
void pkg_sources_of(const struct pkg_run *r, struct pkg_sources *s);

/*
 * The request behind an installed package: a spec of the command line naming it (PEP
 * 503 names for pip), a URL/file spec equal to its exact source, or a line of a -r
 * requirements file. True with *out filled; false: a dependency nobody asked for.
 */
bool pkg_requested(const struct pkg_run *r, const struct pkg_found *f, struct pkg_spec *out);

/* The approved-sources policy of one session (copied in; audit_session_policy). */
struct pkg_policy {
	char sid[SESSION_ID_MAX + 1];
	char **approved;
	size_t n_approved;
	bool block;
	bool alert;      /* emit the tracker's own alert (detection is off) */
	bool enforced;               /* the gateway refuses the installer's other hosts */
};

/*
 * Whether the gateway saw the run's tree contact url's host: 1 yes, 0 it contacted other
 * hosts only, -1 unknown (no gateway event for the tree, or a file:// source).
 */
int pkg_source_confirmed(const struct pkg_run *r, const char *url);

/* The host of scheme://[user@]host[:port]/... lowercase, without brackets, into out;
 * "" when there is none (file: URLs included). */
void pkg_url_host(const char *url, char *out, size_t len);

/*
 * Emits package.install for f (and an alert when its source is not approved under
 * pol and pol->alert; pol NULL: the session's policy is unknown, approved_source null).
 * 0 or -errno.
 */
int pkg_emit(const struct pkg_run *r, const struct pkg_sources *s, const struct pkg_found *f,
	     const struct pkg_policy *pol);

#endif
