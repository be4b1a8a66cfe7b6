/*
 * The gateway's policy state: the compiled policy set and the resolver list (swapped
 * under g->lock by a reload), the GeoIP database, the per-session blocked-attempt
 * counters and the sessions a burst of them asks to terminate (taken by the main thread,
 * which owns the sessions, woken by an eventfd).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gateway/gw_int.h"
#include "journal/event.h"
#include "nft/nft.h"

static void set_resolvers(struct gateway *g, const struct sg_resolver *res, size_t n)
{
	if (n > CONFIG_MAX_RESOLVERS)
		n = CONFIG_MAX_RESOLVERS;
	if (n)
		memcpy(g->res, res, n * sizeof(*res));
	g->n_res = n;
}

int gw_policy_init(struct gateway *g)
{
	int ret;

	g->viol_fd = -1;
	if (g->cfg.policies)
		policy_set_ref(g->cfg.policies);
	g->pset = g->cfg.policies;
	g->cfg.policies = NULL;
	set_resolvers(g, g->cfg.resolvers, g->cfg.n_resolvers);
	g->cfg.resolvers = NULL;
	ret = gw_blocks_new(&g->blocks);
	if (ret)
		return ret;
	g->viol_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g->viol_fd < 0)
		return -errno;
	if (g->cfg.geoip_db && (ret = geo_open(g->cfg.geoip_db, &g->geo)) != 0)
		return ret;
	g->cfg.geoip_db = NULL;
	return 0;
}

void gw_policy_fini(struct gateway *g)
{
	policy_set_unref(g->pset);
	g->pset = NULL;
	geo_close(g->geo);
	g->geo = NULL;
	gw_blocks_free(g->blocks);
	g->blocks = NULL;
	if (g->viol_fd >= 0)
		close(g->viol_fd);
	g->viol_fd = -1;
}

int gateway_session_policy(struct gateway *g, uint32_t mark_id, const char *policy)
{
	return marktab_set_policy(g->marks, mark_id, policy);
}

void gateway_set_policies(struct gateway *g, struct policy_set *set,
			  const struct sg_resolver *res, size_t n_res)
{
	struct policy_set *old;

	if (set)
		policy_set_ref(set);
	pthread_mutex_lock(&g->lock);
	old = g->pset;
	g->pset = set;
	set_resolvers(g, res, n_res);
	pthread_mutex_unlock(&g->lock);
	/* Every reader of the old set held g->lock: none is left. */
	policy_set_unref(old);
}

int gateway_take_violation(struct gateway *g, char *sid, size_t cap)
{
	uint64_t v;
	int ret = -ENOENT;

	if (g->viol_fd >= 0 && read(g->viol_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&g->lock);
	if (g->n_viol > 0) {
		g->n_viol--;
		snprintf(sid, cap, "%s", g->viol[g->n_viol]);
		ret = 0;
	}
	pthread_mutex_unlock(&g->lock);
	return ret;
}

int gateway_violation_fd(struct gateway *g)
{
	return g->viol_fd;
}

static struct event *violation_event(struct gateway *g, const char *sid, const char *reason,
				     bool terminate)
{
	struct event *e = event_new("policy.violation", sid, EVENT_SRC_GATEWAY);

	if (!e)
		return NULL;
	event_uint(e, "blocked", g->cfg.block_burst + 1);
	event_uint(e, "burst", g->cfg.block_burst);
	event_uint(e, "window_ms", g->cfg.block_window_ms);
	event_str(e, "last_reason", reason);
	event_str(e, "action", terminate ? "terminate" : "none");
	return e;
}

void gw_blocked(struct gateway *g, uint32_t mark_id, const char *sid, const char *reason,
		struct gw_evlist *l)
{
	const struct policy *p;
	bool term;
	uint64_t one = 1;

	if (!gw_blocks_hit(g->blocks, mark_id, sid, time_mono_ms(), g->cfg.block_burst,
			   (int64_t)g->cfg.block_window_ms))
		return;
	atomic_fetch_add_explicit(&g->st.violations, 1, memory_order_relaxed);
	p = gw_policy_of(g, nft_mark_make(mark_id));
	term = p && policy_settings(p)->terminate_on_violation;
	gw_evlist_push(l, violation_event(g, sid, reason, term));
	if (!term || g->n_viol >= GW_VIOL_MAX)
		return;
	snprintf(g->viol[g->n_viol++], sizeof(g->viol[0]), "%s", sid);
	if (write(g->viol_fd, &one, sizeof(one)) != sizeof(one))
		return;   /* the main loop also polls the list on its next turn */
}
