/*
 * The flood limit in the kernel (docs/gateway.md "Flood limit", nft/nft_flood.c). A
 * session whose blocked attempts go past its budget (blocksum.c folds them) gets a
 * limit in the ruleset at once: from then on its DNS queries and its undecided flows'
 * packets reach the queue only within gateway.flood_rate packets/second, and the rest
 * is rejected in the kernel and counted there. Without it one session's flood filled
 * the queues every session's DNS goes through (another session's DNS p99 went from
 * 1 ms to 95-860 ms) and the daemon read and decided every attempt.
 *
 * Nothing goes uncounted: every summary interval (and when the session goes) the
 * counters are read and what the kernel rejected since is written as a
 * net.blocked_summary of kind "flood" (no destination: the kernel's counter has none).
 * A session that made no blocked attempt past its budget and had nothing rejected for
 * a whole interval loses its limit (after a last read).
 *
 * Locks: fl->lock guards the table and g->nft (the nft socket); it is taken with or
 * without g->lock held and takes no other lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "gateway/gw_int.h"
#include "journal/event.h"
#include "nft/nft.h"

#define FL_BUCKETS 64u

struct fl_sess {
	struct fl_sess *next;
	uint32_t id;
	char sid[MARKTAB_ID_MAX + 1];
	uint64_t seen;                 /* the kernel counter at the last read */
	struct timespec since;         /* wall time of the last read (or of the limit) */
	uint64_t hits;                 /* attempts past the budget since the last read */
};

struct gw_flood {
	pthread_mutex_t lock;
	uint32_t rate;                 /* packets/second; 0: no limit */
	struct fl_sess *b[FL_BUCKETS];
	uint64_t errors;               /* failed nft calls (logged once each kind) */
};

int gw_flood_new(uint32_t rate, struct gw_flood **out)
{
	struct gw_flood *fl = calloc(1, sizeof(*fl));

	if (!fl)
		return -ENOMEM;
	pthread_mutex_init(&fl->lock, NULL);
	fl->rate = rate;
	*out = fl;
	return 0;
}

void gw_flood_free(struct gw_flood *fl)
{
	struct fl_sess *n, *next;

	if (!fl)
		return;
	for (size_t i = 0; i < FL_BUCKETS; i++)
		for (n = fl->b[i]; n; n = next) {
			next = n->next;
			free(n);
		}
	pthread_mutex_destroy(&fl->lock);
	free(fl);
}

static struct fl_sess **slot(struct gw_flood *fl, uint32_t id)
{
	struct fl_sess **pp = &fl->b[id % FL_BUCKETS];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	return pp;
}

void gw_flood_lock_nft(struct gateway *g)
{
	if (g->flood)
		pthread_mutex_lock(&g->flood->lock);
}

void gw_flood_unlock_nft(struct gateway *g)
{
	if (g->flood)
		pthread_mutex_unlock(&g->flood->lock);
}

void gw_flood_engage(struct gateway *g, uint32_t id, const char *sid)
{
	struct gw_flood *fl = g->flood;
	struct fl_sess **pp, *n;
	int ret;

	if (!fl || fl->rate == 0 || id == 0)
		return;
	pthread_mutex_lock(&fl->lock);
	pp = slot(fl, id);
	if (*pp) {
		(*pp)->hits++;
		goto out;
	}
	if (!g->nft || (n = calloc(1, sizeof(*n))) == NULL)
		goto out;   /* no limit: the attempts are still all read and counted */
	ret = nft_flood_add(g->nft, nft_mark_make(id), fl->rate);
	if (ret == -EEXIST) {
		/* Left by an earlier daemon: start from a known 0. */
		(void)nft_flood_del(g->nft, nft_mark_make(id));
		ret = nft_flood_add(g->nft, nft_mark_make(id), fl->rate);
	}
	if (ret) {
		if (fl->errors++ == 0)
			log_errno(ret, "gateway: flood limit of session %s not installed", sid);
		free(n);
		goto out;
	}
	n->id = id;
	snprintf(n->sid, sizeof(n->sid), "%s", sid ? sid : "");
	clock_gettime(CLOCK_REALTIME, &n->since);
	n->hits = 1;
	*pp = n;
	atomic_fetch_add_explicit(&g->st.flood_limits, 1, memory_order_relaxed);
	if (atomic_fetch_add_explicit(&g->flood_on, 1, memory_order_relaxed) == 0)
		gw_workers_renice(g);
out:
	pthread_mutex_unlock(&fl->lock);
}

bool gw_flood_engaged(struct gateway *g, uint32_t id)
{
	struct gw_flood *fl = g->flood;
	bool yes;

	if (!fl || id == 0)
		return false;
	pthread_mutex_lock(&fl->lock);
	yes = *slot(fl, id) != NULL;
	pthread_mutex_unlock(&fl->lock);
	return yes;
}

static void ts_field(struct event *e, const char *key, const struct timespec *ts)
{
	char b[RFC3339_LEN + 1];

	time_format_rfc3339(ts, b);
	event_str(e, key, b);
}

/* net.blocked_summary of what the kernel rejected for n since its last read. */
static struct event *flood_event(const struct gateway *g, const struct fl_sess *n,
				 uint64_t count, const struct timespec *now)
{
	struct event *e = event_new("net.blocked_summary", n->sid[0] ? n->sid : NULL,
				    EVENT_SRC_GATEWAY);

	if (!e)
		return NULL;
	event_str(e, "kind", "flood");
	event_null(e, "proto");
	event_null(e, "dst");
	event_null(e, "name");
	event_null(e, "qtype");
	event_str(e, "reason", "flood_limit");
	event_str(e, "verdict", "blocked");
	event_uint(e, "count", count);
	ts_field(e, "first_ts", &n->since);
	ts_field(e, "last_ts", now);
	event_bool(e, "overflow", false);
	event_uint(e, "budget", g->cfg.blocked_budget);
	event_uint(e, "interval_ms", g->cfg.blocked_summary_ms ? g->cfg.blocked_summary_ms
							       : 5000);
	event_uint(e, "flood_rate", g->flood->rate);
	return e;
}

/* The counter of n in v (what the dump found), or n->seen when it is not there. */
static uint64_t counter_of(const struct fl_sess *n, const struct nft_rate_drops *v, size_t nv)
{
	for (size_t i = 0; i < nv; i++)
		if (v[i].mark == nft_mark_make(n->id))
			return v[i].pkts;
	return n->seen;
}

/* Reads n's counter (v: the dump) into an event on l; true when it rejected anything. */
static bool account(struct gateway *g, struct fl_sess *n, const struct nft_rate_drops *v,
		    size_t nv, struct gw_evlist *l)
{
	uint64_t c = counter_of(n, v, nv);
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (c <= n->seen)
		return false;
	gw_evlist_push(l, flood_event(g, n, c - n->seen, &now));
	atomic_fetch_add_explicit(&g->st.flood_rejected, c - n->seen, memory_order_relaxed);
	n->seen = c;
	n->since = now;
	return true;
}

/* Reads every counter; fl->lock held. *v malloc'ed (NULL when none). False: unread. */
static bool dump(struct gateway *g, struct nft_rate_drops **v, size_t *nv)
{
	int ret = g->nft ? nft_flood_drops_all(g->nft, v, nv) : -ENOTCONN;

	if (ret) {
		*v = NULL;
		*nv = 0;
		if (g->flood->errors++ == 0)
			log_errno(ret, "gateway: flood limit counters not read");
	}
	return ret == 0;
}

void gw_flood_tick(struct gateway *g, struct gw_evlist *l)
{
	struct gw_flood *fl = g->flood;
	struct nft_rate_drops *v;
	struct fl_sess **pp, *n;
	size_t nv;
	bool read;

	if (!fl)
		return;
	pthread_mutex_lock(&fl->lock);
	read = dump(g, &v, &nv);
	for (size_t i = 0; i < FL_BUCKETS; i++)
		for (pp = &fl->b[i]; (n = *pp) != NULL;) {
			bool busy = account(g, n, v, nv, l) || n->hits;

			n->hits = 0;
			/* A quiet interval ends the limit; an unread counter keeps it. */
			if (busy || !read || nft_flood_del(g->nft, nft_mark_make(n->id)) != 0) {
				pp = &n->next;
				continue;
			}
			*pp = n->next;
			free(n);
			if (atomic_fetch_sub_explicit(&g->flood_on, 1, memory_order_relaxed) == 1)
				gw_workers_renice(g);
		}
	pthread_mutex_unlock(&fl->lock);
	free(v);
}

void gw_flood_forget(struct gateway *g, uint32_t id, struct gw_evlist *l)
{
	struct gw_flood *fl = g->flood;
	struct nft_rate_drops *v;
	struct fl_sess **pp, *n;
	size_t nv;

	if (!fl)
		return;
	pthread_mutex_lock(&fl->lock);
	pp = slot(fl, id);
	n = *pp;
	if (n) {
		(void)dump(g, &v, &nv);   /* its last count goes out with it */
		account(g, n, v, nv, l);
		free(v);
		if (g->nft)
			(void)nft_flood_del(g->nft, nft_mark_make(id));
		*pp = n->next;
		free(n);
		if (atomic_fetch_sub_explicit(&g->flood_on, 1, memory_order_relaxed) == 1)
			gw_workers_renice(g);
	}
	pthread_mutex_unlock(&fl->lock);
}

int gw_flood_restore(struct gateway *g, size_t *restored)
{
	struct gw_flood *fl = g->flood;
	int ret = 0;

	if (!fl)
		return 0;
	/* The table was replaced: the counters are gone with it (what they held since the
	 * last read is lost; the restore is journaled as gateway.tamper). */
	pthread_mutex_lock(&fl->lock);
	for (size_t i = 0; i < FL_BUCKETS; i++)
		for (struct fl_sess *n = fl->b[i]; n; n = n->next) {
			int r = g->nft ? nft_flood_add(g->nft, nft_mark_make(n->id), fl->rate)
				       : -ENOTCONN;

			n->seen = 0;
			if (r == 0)
				(*restored)++;
			else if (ret == 0)
				ret = r;
		}
	pthread_mutex_unlock(&fl->lock);
	return ret;
}
