/*
 * The audit sensors' wiring: settings from the config's audit: section, then the
 * processes already inside sessions (a restarted daemon, adopted cgroups) seeded into
 * the pid table, since the fork events that made them are in the past.
 */
#include <stdlib.h>

#include "audit/audit.h"
#include "daemon/config.h"
#include "common/log.h"
#include "daemon/daemon.h"
#include "attribution/attribution.h"
#include "sessions/sessions.h"
#include "gateway/gateway.h"
#include "journal/event.h"

/* The session's package policy for package.install's approved_source (docs/packages.md). */
static void pkg_policy(struct daemon *d, const struct session *s)
{
	const struct sg_policy *p = config_policy(d->cfg, s->policy);
	int ret;

	if (!p)
		return;   /* sessions are created with a policy that exists */
	ret = audit_session_policy(d->audit, s->id, (const char *const *)p->approved_sources,
				   p->n_approved_sources, p->unapproved == SG_UNAPPROVED_BLOCK);
	if (ret)
		log_errno(ret, "audit: package policy of session %s", s->id);
}

static void seed_sessions(struct daemon *d)
{
	struct session_reg *reg = sessions_registry(d->sessions);

	for (size_t i = 0; reg && i < sessions_count(reg); i++) {
		struct session *s = sessions_at(reg, i);
		pid_t *pids = NULL;
		size_t n = 0;

		if (s->state == SESSION_TERMINATED)
			continue;
		pkg_policy(d, s);
		if (sessions_pids(d->sessions, s, &pids, &n) != 0)
			continue;
		for (size_t k = 0; k < n; k++)
			(void)audit_seed(d->audit, pids[k], s->id);   /* gone meanwhile: fine */
		free(pids);
	}
}

/* `unapproved: block`: the gateway asks the package tracker whose flows are an installer's. */
static bool guard_active(void *ctx, const char *sid)
{
	return audit_pkg_blocking(ctx, sid);
}

static int guard_hosts(void *ctx, const char *sid, pid_t pid, char (*out)[GW_PKG_HOST_MAX],
		       size_t max)
{
	return audit_pkg_hosts(ctx, sid, pid, out[0], GW_PKG_HOST_MAX, max);
}

static void guard_seen(void *ctx, const char *sid, pid_t pid, const char *const *names,
		       size_t n)
{
	audit_pkg_net_seen(ctx, sid, pid, names, n);
}

/*
 * The gateway tells the package tracker what an installer's tree named (source_confirmed);
 * with an enforcing gateway, installers under block are also held to their approved hosts.
 */
static void pkg_guard(struct daemon *d)
{
	struct gw_pkg_guard g = { .seen = guard_seen, .ctx = d->audit };
	bool enforce = d->cfg->gateway.enabled && d->cfg->gateway.enforce;

	if (!d->gateway)
		return;
	if (enforce) {
		g.active = guard_active;
		g.hosts = guard_hosts;
	}
	gateway_set_pkg_guard(d->gateway, &g);
	if (enforce)
		audit_pkg_enforced(d->audit, true);
}

int daemon_audit_init(struct daemon *d)
{
	const struct sg_audit_config *c = &d->cfg->audit;
	struct audit_settings s = {
		.session_prefix = d->session_prefix,
		.proc = true,
		.files = c->files,
		.file_modify = c->file_modify,
		.marks = c->file_marks,
		.n_marks = c->n_file_marks,
		.sensitive = c->sensitive_paths,
		.n_sensitive = c->n_sensitive_paths,
		.packages = c->packages,
		/* With detection on, the rule package-unapproved-source alerts, with refs to
		 * the package.install line (docs/packages.md): one alert, not two. */
		.package_alerts = !d->cfg->detect.enabled,
		.exec_audit = c->exec_source == SG_EXEC_AUDIT,
		.proc_rcvbuf = c->proc_rcvbuf,
		.file_mounts = c->file_mounts,
		.read_repeat_ms = c->read_repeat_ms,
	};
	char off[32];
	int ret;

	if (!c->enabled)
		return 0;
	ret = audit_start(&d->audit, &s, off, sizeof(off));
	if (ret) {
		/* Not fatal: sessions and the gateway still work; the gap is logged. */
		log_errno(ret, "audit: no sensor could start (audit events off)");
		d->audit = NULL;
		return 0;
	}
	if (off[0])
		log_warnx("audit: sensors off: %s (the kernel refused them)", off);
	snprintf(d->health.sensors_off, sizeof(d->health.sensors_off), "%s", off);
	seed_sessions(d);
	pkg_guard(d);
	return 0;
}

void daemon_audit_attached(struct daemon *d, pid_t pid, const char *sid)
{
	int ret;

	struct session *s;

	if (!d->audit)
		return;
	ret = audit_seed(d->audit, pid, sid);
	if (ret)
		log_errno(ret, "audit: tracking attached pid %d", (int)pid);
	/* Each attach refreshes it: a reload may have changed the policy. */
	s = d->sessions ? sessions_find(sessions_registry(d->sessions), sid) : NULL;
	if (s)
		pkg_policy(d, s);
	if (s && s->workdir)
		audit_session_workdir(d->audit, sid, s->workdir);   /* its reads are logged */
}

void daemon_audit_fini(struct daemon *d)
{
	/* The gateway stops calling into the tracker before it is freed. */
	if (d->gateway && d->audit)
		gateway_set_pkg_guard(d->gateway, NULL);
	audit_stop(d->audit);
	d->audit = NULL;
}

void daemon_audit_start_fields(struct daemon *d, struct event *e)
{
	const struct sg_audit_config *c = &d->cfg->audit;
	char why[200];
	const char *src;

	if (!c->enabled) {
		event_null(e, "exec_source");
		event_str(e, "exec_source_why", "audit.enabled: false");
		return;
	}
	src = audit_exec_probe(c->exec_source == SG_EXEC_AUDIT, why, sizeof(why));
	event_str(e, "exec_source", src);
	event_str(e, "exec_source_why", why);
}
