/*
 * package.install and, for a source the session's policy does not approve, an alert.
 * The body's "registry" is the package's index, registry or URL (the contract's name;
 * until 2026-12 it was a second "source", which repeated the envelope's key).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packages/pkg_int.h"
#include "journal/event.h"

#define REQ_MAX (1u << 20)

static bool spec_names(const struct pkg_run *r, const struct pkg_spec *sp, const char *name)
{
	char a[PKG_NAME_MAX], b[PKG_NAME_MAX];

	if (!sp->name[0])
		return false;
	if (r->cmd.mgr != PKG_PIP)
		return strcmp(sp->name, name) == 0;
	pkg_pep503(sp->name, a, sizeof(a));
	pkg_pep503(name, b, sizeof(b));
	return strcmp(a, b) == 0;
}

/* A URL or file spec that is the package's exact source (files compared absolute). */
static bool spec_is_source(const struct pkg_run *r, const struct pkg_spec *sp,
			   const struct pkg_found *f)
{
	char abs[PATH_MAX + 8], path[PKG_URL_MAX], real[PATH_MAX];

	size_t rl = strcspn(sp->raw, "#");   /* pip keeps the URL, not its #sha256= */

	if (!sp->is_url || !f->source_exact)
		return false;
	if (strncmp(sp->raw, f->source, rl) == 0 && f->source[rl] == '\0')
		return true;
	if (strstr(sp->raw, "://") && strncmp(sp->raw, "file:", 5) != 0)
		return false;
	pkg_run_path(r, sp->raw, path, sizeof(path));
	snprintf(abs, sizeof(abs), "file://%s", realpath(path, real) ? real : path);
	return strcmp(abs, f->source) == 0;
}

static bool from_reqfile(const struct pkg_run *r, const char *file, const struct pkg_found *f,
			 struct pkg_spec *out)
{
	char path[PKG_PATH_MAX * 2], *buf, *line, *save = NULL;
	bool hit = false;
	size_t len;

	pkg_run_path(r, file, path, sizeof(path));
	if (pkg_read_file(path, REQ_MAX, &buf, &len) != 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line && !hit; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');

		if (hash)
			*hash = '\0';
		line += strspn(line, " \t");
		for (size_t n = strlen(line); n && (line[n - 1] == ' ' || line[n - 1] == '\t' ||
						   line[n - 1] == '\r'); n--)
			line[n - 1] = '\0';
		if (!*line || *line == '-')
			continue;
		memset(out, 0, sizeof(*out));
		snprintf(out->raw, sizeof(out->raw), "%s", line);
		hit = pkg_pip_spec(line, strlen(line), out) == 0 && spec_names(r, out, f->name);
	}
	free(buf);
	return hit;
}

bool pkg_requested(const struct pkg_run *r, const struct pkg_found *f, struct pkg_spec *out)
{
	for (size_t i = 0; i < r->cmd.n_specs; i++) {
		const struct pkg_spec *sp = &r->cmd.specs[i];

		if (spec_names(r, sp, f->name) || spec_is_source(r, sp, f)) {
			*out = *sp;
			return true;
		}
	}
	for (size_t i = 0; i < r->cmd.n_reqfiles; i++)
		if (from_reqfile(r, r->cmd.reqfiles[i], f, out))
			return true;
	return false;
}

/* approved: the exact source, or every source the run could have used. */
static bool approved(const struct pkg_sources *s, const struct pkg_found *f,
		     const struct pkg_policy *pol)
{
	if (f->source_exact)
		return pkg_source_approved(f->source, pol->approved, pol->n_approved);
	if (!pkg_source_approved(s->primary, pol->approved, pol->n_approved))
		return false;
	for (size_t i = 0; i < s->n_other; i++)
		if (!pkg_source_approved(s->other[i], pol->approved, pol->n_approved))
			return false;
	return true;
}

static void put_str_or_null(struct event *e, const char *k, const char *v)
{
	event_str(e, k, v && v[0] ? v : NULL);
}

static void put_source(struct event *e, const struct pkg_run *r, const struct pkg_sources *s,
		       const struct pkg_found *f)
{
	put_str_or_null(e, "registry", f->source_exact ? f->source : s->primary);
	event_str(e, "source_from", f->source_exact ? "package_metadata"
				    : s->from[0] ? s->from : NULL);
	event_array_begin(e, "other_sources");
	for (size_t i = 0; !f->source_exact && i < s->n_other; i++)
		event_str(e, NULL, s->other[i]);
	event_array_end(e);
	int conf = pkg_source_confirmed(r, f->source_exact ? f->source : s->primary);

	if (conf < 0)
		event_null(e, "source_confirmed");
	else
		event_bool(e, "source_confirmed", conf);
}

static void put_hash(struct event *e, const struct pkg_found *f)
{
	if (!f->algo[0]) {
		event_null(e, "hash");
		return;
	}
	event_object_begin(e, "hash");
	event_str(e, "algo", f->algo);
	event_str(e, "value", f->value);
	event_str(e, "kind", f->hash_kind);
	event_str(e, "from", f->hash_from);
	event_object_end(e);
}

static int emit_install(const struct pkg_run *r, const struct pkg_sources *s,
			const struct pkg_found *f, const struct pkg_policy *pol, int ok)
{
	struct event *e = event_new("package.install", r->sid, EVENT_SRC_KERNEL);
	struct pkg_spec req;
	bool asked = pkg_requested(r, f, &req);

	if (!e)
		return -ENOMEM;
	event_str(e, "manager", pkg_manager_name(r->cmd.mgr));
	event_str(e, "tool", r->cmd.tool);
	event_str(e, "name", f->name);
	put_str_or_null(e, "requested_version", asked ? req.version : NULL);
	put_str_or_null(e, "requested", asked ? req.raw : NULL);
	event_bool(e, "dependency", !asked);
	put_str_or_null(e, "resolved_version", f->version);
	put_source(e, r, s, f);
	put_hash(e, f);
	if (ok < 0)
		event_null(e, "approved_source");
	else
		event_bool(e, "approved_source", ok);
	if (pol && ok == 0)
		event_str(e, "unapproved_action", pol->block ? "block" : "flag");
	event_int(e, "pid", r->pid);
	if (r->uid_known)
		event_uint(e, "uid", r->uid);
	else
		event_null(e, "uid");
	put_str_or_null(e, "location", f->location);
	return event_emit(e);
}

static int emit_alert(const struct pkg_run *r, const struct pkg_sources *s,
		      const struct pkg_found *f, const struct pkg_policy *pol)
{
	struct event *e = event_new("alert", r->sid, EVENT_SRC_SANDGATE);
	const char *src = f->source_exact ? f->source : s->primary;
	char sum[PKG_URL_MAX + PKG_NAME_MAX + PKG_VER_MAX + 96];

	if (!e)
		return -ENOMEM;
	snprintf(sum, sizeof(sum), "%s installed %s %s from %s, not an approved source",
		 pkg_manager_name(r->cmd.mgr), f->name, f->version, src[0] ? src : "(unknown)");
	event_str(e, "rule", "package.unapproved_source");
	event_str(e, "severity", pol->block ? "high" : "medium");
	event_str(e, "summary", sum);
	/* The install's seq is the journal's to give, after this is built: see the
	 * package object, which names it (docs/packages.md). */
	event_array_begin(e, "refs");
	event_array_end(e);
	event_object_begin(e, "package");
	event_str(e, "event", "package.install");
	event_str(e, "manager", pkg_manager_name(r->cmd.mgr));
	event_str(e, "name", f->name);
	put_str_or_null(e, "resolved_version", f->version);
	put_str_or_null(e, "registry", src);
	event_int(e, "pid", r->pid);
	event_object_end(e);
	event_str(e, "action", !pol->block ? "flag" : pol->enforced ? "block" : "block_not_enforced");
	return event_emit(e);
}

int pkg_emit(const struct pkg_run *r, const struct pkg_sources *s, const struct pkg_found *f,
	     const struct pkg_policy *pol)
{
	int ok = pol ? approved(s, f, pol) : -1;
	int ret = emit_install(r, s, f, pol, ok);

	if (ret == 0 && ok == 0 && pol->alert)
		ret = emit_alert(r, s, f, pol);
	return ret;
}
