/*
 * The gateway in the daemon: with gateway.enabled, start the packet path (conntrack
 * thread, one worker bound to each queue); the sessions then bind their marks
 * (daemon_sessions_init → sessions/ → the bind hook → daemon_gateway_session_bind); then the ruleset goes in with
 * every session's elements in one batch (daemon_gateway_install), so no queue is ever
 * without its reader and no session packet is ever unclassified while the daemon runs. At stop the threads end and the ruleset
 * stays: session traffic is dropped until the next daemon binds the queues (fail closed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "common/log.h"
#include "common/paths.h"
#include "common/timeutil.h"
#include "common/loop.h"
#include "daemon/daemon.h"
#include "gateway/gateway.h"
#include "journal/event.h"
#include "nft/nft.h"
#include "policy/policy.h"
#include "sessions/sessions.h"


static void nft_opts(const struct sg_config *c, struct nft_options *o)
{
	const struct sg_gateway_config *g = &c->gateway;

	nft_options_init(o);
	o->netns = g->netns;
	o->queue_base = (uint16_t)g->queue_base;
	o->queue_count = (uint16_t)g->queues;
	o->fail_open = g->fail_open;
	o->fanout = g->queue_fanout;
	o->cgroup_mode = g->mode != SG_GW_MODE_INTERFACE;
	o->iface_mode = g->mode != SG_GW_MODE_CGROUP;
	o->cgroup_level = config_cgroup_level(c);
}

/*
 * The compiled policies of c with its DoH list (gateway.doh_list, or the shipped
 * DATADIR/doh-endpoints.txt, common/paths.h: missing is an error naming the path). Errors (FILE:LINE) appended to errs. 0 or -errno.
 */
int daemon_policy_build(const struct sg_config *c, struct policy_set **out,
			struct config_errors *errs)
{
	const char *path = c->gateway.doh_list;
	struct doh_list *doh = NULL;
	char shipped[4096];
	int ret;

	if (!path) {
		snprintf(shipped, sizeof(shipped), "%s/doh-endpoints.txt", sg_data_dir());
		path = shipped;
	}
	/* The shipped list missing is a broken install: refused like a named one (18.2). */
	ret = doh_list_load(path, &doh, errs);
	if (ret == 0)
		ret = policy_set_build(c->policies, c->n_policies, doh, out);
	doh_list_free(doh);
	return ret;
}

static void gw_opts(const struct sg_gateway_config *g, struct gw_config *o)
{
	memset(o, 0, sizeof(*o));
	o->netns = g->netns;
	o->queue_base = g->queue_base;
	o->queues = g->queues;
	o->queue_len = g->queue_len;
	o->fail_open = g->fail_open;
	o->dns_ttl_min_ms = g->dns_ttl_min_ms;
	o->dns_ttl_max_ms = g->dns_ttl_max_ms;
	o->flow_interim_ms = g->flow_interim_ms;
	o->dns_timeout_ms = g->dns_timeout_ms;
	o->enforce = g->enforce;
	o->resolvers = g->resolvers;
	o->n_resolvers = g->n_resolvers;
	o->geoip_db = g->geoip_db;
	o->block_burst = g->block_burst;
	o->block_window_ms = g->block_window_ms;
	o->ct_event_buffer = g->ct_event_buffer;
	o->blocked_budget = g->blocked_budget;
	o->blocked_summary_ms = g->blocked_summary_ms;
	o->flood_rate = g->flood_rate;
	o->worker_priority = g->worker_priority;
	o->flood_worker_priority = g->flood_worker_priority;
	o->flood_worker_realtime = g->flood_worker_realtime;
}

/* gateway.start: what was installed where, and whether it fails open (said loudly). */
static void emit_start(const struct nft_options *o, enum nft_qimpl impl)
{
	static const char *const modes[] = { "both", "cgroup", "interface" };
	struct event *e = event_new("gateway.start", NULL, EVENT_SRC_SANDGATE);

	if (!e)
		return;
	event_str(e, "netns", o->netns);
	event_uint(e, "queue_base", o->queue_base);
	event_uint(e, "queues", o->queue_count);
	event_str(e, "queue_impl", nft_qimpl_name(impl));
	event_str(e, "mode", modes[o->cgroup_mode && o->iface_mode ? 0 : o->cgroup_mode ? 1 : 2]);
	event_uint(e, "cgroup_level", o->cgroup_level);
	event_bool(e, "fail_open", o->fail_open);
	if (event_emit(e) != 0)
		log_warnx("gateway: gateway.start not recorded");
}

int daemon_gateway_install(struct daemon *d)
{
	struct nft_session *sessions = NULL;
	struct nft_options o;
	struct nft_handle *h = NULL;
	size_t n = 0;
	int ret;

	if (!d->gateway)
		return 0;
	nft_opts(d->cfg, &o);
	ret = sessions_nft_list(d->sessions, &sessions, &n);
	if (ret == 0)
		ret = nft_open(&o, &h);
	if (ret == 0)
		ret = nft_install(h, sessions, n);
	free(sessions);
	if (ret) {
		log_errno(ret, "gateway: cannot install the ruleset");
		nft_close(h);
		return ret;
	}
	d->nft = h;
	sessions_set_nft(d->sessions, h);   /* sessions add and remove their elements in it */
	emit_start(&o, nft_installed_qimpl(h));
	log_info("gateway: ruleset installed in %s (queues %u..%u, %s, %s)",
		 o.netns ? o.netns : "the daemon's namespace", o.queue_base,
		 o.queue_base + o.queue_count - 1, nft_qimpl_name(nft_installed_qimpl(h)),
		 o.fail_open ? "FAIL-OPEN" : "fail closed");
	/* Not fatal: the packet path works without its counters being scraped. */
	ret = daemon_metrics_init(d);
	if (ret)
		log_errno(ret, "metrics: cannot listen on %s", d->cfg->metrics_listen);
	return 0;
}

/* A burst of blocked attempts in a policy that says terminate_on_violation. */
static void on_violation(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct daemon *d = ctx;
	char sid[128];

	(void)l;
	(void)fd;
	(void)events;
	while (d->gateway && gateway_take_violation(d->gateway, sid, sizeof(sid)) == 0) {
		log_info("session %s: terminated for a policy violation", sid);
		(void)sessions_terminate_id(d->sessions, sid, "policy_violation");
	}
}

int daemon_gateway_init(struct daemon *d)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct policy_set *set = NULL;
	struct gw_config gc;
	struct gateway *g = NULL;
	int ret;

	if (!d->cfg->gateway.enabled)
		return 0;
	if (d->cfg->gateway.fail_open)
		log_warnx("gateway: fail_open is set: session traffic passes when the "
			  "daemon cannot decide");
	ret = daemon_policy_build(d->cfg, &set, &errs);
	if (ret) {
		config_errors_print(&errs, stderr);
		config_errors_free(&errs);
		log_errno(ret, "gateway: cannot compile the policies");
		return ret;
	}
	config_errors_free(&errs);
	gw_opts(&d->cfg->gateway, &gc);
	gc.policies = set;
	ret = gateway_new(&gc, &g);
	policy_set_unref(set);   /* the gateway holds its own reference */
	if (ret == 0)
		ret = gateway_start(g);
	if (ret) {
		log_errno(ret, "gateway");
		gateway_free(g);
		return ret;
	}
	d->gateway = g;
	ret = loop_add(d->loop, gateway_violation_fd(g), EPOLLIN, on_violation, d);
	if (ret < 0) {
		log_errno(ret, "gateway: cannot watch policy violations");
		return ret;
	}
	return 0;
}

void daemon_gateway_fini(struct daemon *d)
{
	daemon_metrics_fini(d);   /* before the counters it reads are freed */
	if (d->gateway && d->loop)
		loop_del(d->loop, gateway_violation_fd(d->gateway));
	gateway_free(d->gateway);
	d->gateway = NULL;
	/* The table stays installed: without the daemon session traffic is dropped. */
	sessions_set_nft(d->sessions, NULL);
	nft_close(d->nft);
	d->nft = NULL;
}

int daemon_gateway_session_bind(struct daemon *d, uint32_t mark_id, const char *sid,
				const char *cgroup, const char *policy)
{
	char dir[1024];
	int ret;

	if (!d->gateway)
		return 0;
	snprintf(dir, sizeof(dir), "%s%s", d->cgroup_root, cgroup ? cgroup : "");
	/* Without a cgroup the flow's pid stays null; attribution by mark still works. */
	ret = gateway_session_bind(d->gateway, mark_id, sid,
				   cgroup && cgroup[0] && strlen(dir) <= 512 ? dir : NULL);
	return ret ? ret : gateway_session_policy(d->gateway, mark_id, policy);
}

void daemon_gateway_session_unbind(struct daemon *d, uint32_t mark_id)
{
	if (d->gateway)
		gateway_session_unbind(d->gateway, mark_id);
}

void daemon_gateway_session_since(struct daemon *d, uint32_t mark_id, int64_t created_us)
{
	/* A session being created has no creation time yet: it begins now. */
	if (d->gateway)
		(void)gateway_session_since(d->gateway, mark_id,
					    created_us > 0 ? created_us : time_wall_us());
}

int daemon_gateway_reload(struct daemon *d, const struct sg_config *fresh, char *err,
			  size_t errlen)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct policy_set *set = NULL;
	int64_t t0 = time_mono_us();
	int ret;

	if (!d->gateway)
		return 0;
	ret = daemon_policy_build(fresh, &set, &errs);
	if (ret) {
		if (config_errors_count(&errs) > 0)
			config_error_format(config_errors_at(&errs, 0), err, errlen);
		else
			snprintf(err, errlen, "cannot compile the policies: %s", strerror(-ret));
		config_errors_free(&errs);
		return ret;
	}
	config_errors_free(&errs);
	gateway_set_policies(d->gateway, set, fresh->gateway.resolvers,
			     fresh->gateway.n_resolvers);
	policy_set_unref(set);
	log_info("gateway: policies reloaded in %lld us",
		 (long long)(time_mono_us() - t0));
	if (fresh->gateway.revoke_on_reload) {
		size_t n = 0;

		ret = gateway_revoke(d->gateway, &n);
		if (ret)
			log_errno(ret, "gateway: revoking flows the new policy blocks");
		else if (n)
			log_info("gateway: %zu established flows revoked", n);
	}
	return 0;
}
