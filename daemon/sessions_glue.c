/*
 * Sessions in the daemon: opens the part (sessions/sessions.h) with the config in force
 * and the hooks through which it tells the gateway (mark bind, unbind) and the audit
 * (attaches) about its sessions and registers its verbs on the control socket; installs
 * its peer test on the socket. The part itself includes nothing of daemon/.
 */
#include <errno.h>

#include "daemon/daemon.h"
#include "sessions/sessions.h"

static int hook_bind(void *ctx, uint32_t mark_id, const char *sid, const char *cgroup,
		     const char *policy, int64_t created_us)
{
	struct daemon *d = ctx;
	int ret = daemon_gateway_session_bind(d, mark_id, sid, cgroup, policy);

	if (ret == 0)
		daemon_gateway_session_since(d, mark_id, created_us);
	return ret;
}

static void hook_unbind(void *ctx, uint32_t mark_id)
{
	daemon_gateway_session_unbind(ctx, mark_id);
}

static void hook_attached(void *ctx, pid_t pid, const char *sid)
{
	daemon_audit_attached(ctx, pid, sid);
}

static int hook_add_verb(void *ctx, const char *verb, control_verb_fn fn, void *fn_ctx)
{
	struct daemon *d = ctx;

	return control_register(d->control, verb, fn, fn_ctx);
}

static void fill_conf(const struct daemon *d, struct sessions_conf *c)
{
	const struct sg_config *cfg = d->cfg;

	*c = (struct sessions_conf){
		.state_dir = cfg->state_dir,
		.control_socket = cfg->control_socket,
		.config_path = d->opts.config_path,
		.host = cfg->host,
		.cgroup_root = d->cgroup_root,
		.session_prefix = d->session_prefix,
		.gateway_enabled = cfg->gateway.enabled,
		.policies = cfg->policies,
		.n_policies = cfg->n_policies,
		.limits = &cfg->limits,
	};
}

int daemon_sessions_init(struct daemon *d)
{
	const struct session_hooks hooks = {
		.ctx = d,
		.bind = hook_bind,
		.unbind = hook_unbind,
		.attached = hook_attached,
		.add_verb = hook_add_verb,
	};
	struct sessions_conf conf;
	int ret;

	fill_conf(d, &conf);
	ret = sessions_open(&d->sessions, &conf, d->loop, &hooks);
	if (ret == 0)
		control_set_peer_check(d->control, sessions_peer_check, d->sessions);
	return ret;
}

void daemon_sessions_configure(struct daemon *d)
{
	struct sessions_conf conf;

	fill_conf(d, &conf);
	sessions_configure(d->sessions, &conf);
}

void daemon_sessions_fini(struct daemon *d)
{
	sessions_close(d->sessions);
	d->sessions = NULL;
}
