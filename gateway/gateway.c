/*
 * The gateway's lifecycle: tables, the namespace handle, the conntrack thread and one
 * NFQUEUE worker per queue, started in that order and stopped in the reverse one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gateway/gw_int.h"

int gw_enter_netns(struct gateway *g)
{
	if (g->nsfd < 0)
		return 0;
	/* Only the calling thread moves: the audit sensors stay in the initial one. */
	return setns(g->nsfd, CLONE_NEWNET) == 0 ? 0 : -errno;
}

void gw_started(struct gateway *g, int *slot, int err)
{
	pthread_mutex_lock(&g->start_lock);
	*slot = err;
	g->started++;
	pthread_cond_broadcast(&g->start_cond);
	pthread_mutex_unlock(&g->start_lock);
}

static int open_netns(struct gateway *g)
{
	char path[PATH_MAX];

	g->nsfd = -1;
	if (!g->netns)
		return 0;
	if (g->netns[0] == '/')
		snprintf(path, sizeof(path), "%s", g->netns);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", g->netns);
	g->nsfd = open(path, O_RDONLY | O_CLOEXEC);
	return g->nsfd < 0 ? -errno : 0;
}

static int make_tables(struct gateway *g)
{
	int ret = marktab_new(&g->marks);

	if (ret == 0)
		ret = flowtab_new(GW_FLOWS_MAX, &g->flows);
	if (ret == 0)
		ret = dnsbind_new(GW_BINDS_MAX, &g->binds);
	if (ret == 0)
		ret = dnspend_new(GW_PENDING_MAX, &g->pend);
	if (ret == 0)
		ret = gw_synth_new(&g->synth);
	if (ret == 0)
		ret = gw_blocksum_new(g->cfg.blocked_budget, g->cfg.blocked_summary_ms, &g->bsum);
	if (ret == 0 && g->cfg.blocked_budget)   /* no budget: nothing is past it */
		ret = gw_flood_new(g->cfg.flood_rate, &g->flood);
	return ret;
}

int gateway_new(const struct gw_config *c, struct gateway **out)
{
	struct gateway *g = calloc(1, sizeof(*g));
	int ret = -ENOMEM;

	if (!g)
		return -ENOMEM;
	g->cfg = *c;
	g->flow_seq = (uint64_t)time_wall_us();   /* ids stay unique across restarts */
	g->start_wall_ns = g->flow_seq * 1000;
	g->nsfd = g->viol_fd = -1;
	pthread_mutex_init(&g->lock, NULL);
	pthread_mutex_init(&g->start_lock, NULL);
	pthread_rwlock_init(&g->pkg_lock, NULL);
	pthread_cond_init(&g->start_cond, NULL);
	if (c->netns && !(g->netns = strdup(c->netns)))
		goto out;
	g->cfg.netns = g->netns;
	ret = open_netns(g);
	if (ret == 0)
		ret = make_tables(g);
	if (ret == 0)
		ret = gw_policy_init(g);
	if (ret == 0 && (g->w = calloc(c->queues, sizeof(*g->w))) == NULL)
		ret = -ENOMEM;
out:
	if (ret) {
		gateway_free(g);
		return ret;
	}
	*out = g;
	return 0;
}

/* Waits until n threads have reported their start. */
static void wait_started(struct gateway *g, unsigned n)
{
	pthread_mutex_lock(&g->start_lock);
	while (g->started < n)
		pthread_cond_wait(&g->start_cond, &g->start_lock);
	pthread_mutex_unlock(&g->start_lock);
}

static int start_ct(struct gateway *g)
{
	int ret = sg_thread_new(&g->ct_t, "sg-conntrack");

	if (ret == 0)
		ret = sg_thread_start(g->ct_t, gw_ct_main, g);
	if (ret)
		return ret;
	wait_started(g, 1);
	return g->ct_start_err;
}

static int start_worker(struct gateway *g, unsigned i)
{
	struct gw_worker *w = &g->w[i];
	char name[16];
	int ret;

	w->g = g;
	w->idx = i;
	w->qnum = (uint16_t)(g->cfg.queue_base + i);
	w->raw4 = w->raw6 = -1;   /* opened at the first synthesised answer */
	/* Named for ps/top and the bench's per-thread CPU. */
	snprintf(name, sizeof(name), "sg-nfq%u", (unsigned)w->qnum);
	ret = sg_thread_new(&w->t, name);
	if (ret == 0)
		ret = sg_thread_start(w->t, gw_worker_main, w);
	g->nw = i + 1;   /* freed by gateway_stop() whether it started or not */
	return ret;
}

int gateway_start(struct gateway *g)
{
	int ret = start_ct(g);
	unsigned i;

	if (ret == 0 && !g->nft)
		gw_kbind_open(g);

	for (i = 0; ret == 0 && i < g->cfg.queues; i++)
		ret = start_worker(g, i);
	if (ret == 0)
		wait_started(g, 1 + g->cfg.queues);
	for (i = 0; ret == 0 && i < g->nw; i++)
		ret = g->w[i].start_err;
	if (ret)
		gateway_stop(g);
	return ret;
}

void gateway_stop(struct gateway *g)
{
	if (!g)
		return;
	/* One at a time, workers first: each stops and is joined before the next. */
	for (unsigned i = 0; i < g->nw; i++) {
		sg_thread_free(g->w[i].t);
		g->w[i].t = NULL;
	}
	g->nw = 0;
	sg_thread_free(g->ct_t);
	g->ct_t = NULL;
}

void gateway_free(struct gateway *g)
{
	if (!g)
		return;
	gateway_stop(g);
	gw_blocksum_flush(g, true);   /* the counts of the last interval are not lost */
	gw_blocksum_free(g->bsum);
	gw_synth_free(g->synth);
	gw_kbind_close(g);
	gw_flood_free(g->flood);
	flowtab_free(g->flows);
	dnsbind_free(g->binds);
	dnspend_free(g->pend);
	marktab_free(g->marks);
	gw_policy_fini(g);
	free(g->w);
	if (g->nsfd >= 0)
		close(g->nsfd);
	free(g->netns);
	pthread_mutex_destroy(&g->lock);
	pthread_mutex_destroy(&g->start_lock);
	pthread_rwlock_destroy(&g->pkg_lock);
	pthread_cond_destroy(&g->start_cond);
	free(g);
}

int gateway_session_bind(struct gateway *g, uint32_t mark_id, const char *sid,
			 const char *cgdir)
{
	return marktab_set(g->marks, mark_id, sid, cgdir);
}

int gateway_session_since(struct gateway *g, uint32_t mark_id, int64_t created_us)
{
	return marktab_set_since(g->marks, mark_id, created_us > 0 ? created_us * 1000 : 0);
}

void gateway_session_unbind(struct gateway *g, uint32_t mark_id)
{
	struct gw_evlist l = { 0 };

	gw_blocksum_forget(g, mark_id);
	gw_flood_forget(g, mark_id, &l);
	gw_evlist_flush(g, &l);
	(void)marktab_del(g->marks, mark_id);
	pthread_mutex_lock(&g->lock);
	dnsbind_forget(g->binds, mark_id);
	gw_blocks_forget(g->blocks, mark_id);
	pthread_mutex_unlock(&g->lock);
}
