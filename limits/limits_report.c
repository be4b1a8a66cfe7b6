/*
 * resource.limit: what rose in a session's counters, reported at a bounded rate (one
 * event per session and limit per report_interval, carrying the counts of the whole
 * window), OOM kills matched with their victim from the kernel log, and the disk quota.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "limits/limits_int.h"
#include "nft/nft.h"

struct lim_report {
	const char *limit, *action;
	int64_t measured;          /* < 0: null */
	int64_t configured;        /* <= 0: null */
	pid_t pid;                 /* 0: null */
	int64_t count;             /* < 0: null */
	int64_t window_ms;         /* < 0: null */
};

static void emit(const struct session *s, const struct lim_report *r, const char *comm,
		 int truncated)
{
	struct event *e = event_new("resource.limit", s->id, EVENT_SRC_KERNEL);

	if (!e)
		return;
	event_str(e, "limit", r->limit);
	if (r->measured >= 0)
		event_int(e, "measured", r->measured);
	else
		event_null(e, "measured");
	if (strcmp(r->limit, "cpu_throttle") == 0 && s->lim.millicpus > 0)
		event_double(e, "configured", (double)s->lim.millicpus / 1000.0);
	else if (r->configured > 0)
		event_int(e, "configured", r->configured);
	else
		event_null(e, "configured");
	event_str(e, "action", r->action);
	if (r->pid > 0)
		event_int(e, "pid", r->pid);
	else
		event_null(e, "pid");
	if (r->count >= 0)
		event_int(e, "count", r->count);
	else
		event_null(e, "count");
	if (r->window_ms >= 0)
		event_int(e, "window_ms", r->window_ms);
	else
		event_null(e, "window_ms");
	if (strcmp(r->limit, "memory_oom") == 0)
		event_str(e, "comm", comm);
	if (truncated >= 0) {
		event_bool(e, "truncated", truncated);
		e->source = EVENT_SRC_SANDGATE;
	}
	if (event_emit(e))
		log_warnx("session %s: resource.limit %s not recorded", s->id, r->limit);
}

/* A counter that went down was reset (cgroup re-created): count from the new value. */
static uint64_t rose(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;
}

/*
 * An amount may come without a count: the kernel books a CPU period's throttled time
 * when the period ends (unthrottle), after it counted the period. It is kept for the
 * next report, not dropped.
 */
static void acc_add(struct lim_acc *a, uint64_t count, uint64_t amount, int64_t since)
{
	if (!count && !amount)
		return;
	if (!a->count && !a->amount)
		a->since_ms = since;
	a->count += count;
	a->amount += amount;
}

/* The counters through the kept fds, or by path when the session has none. */
static int read_mem(struct limits *L, struct lim_entry *e, struct cg_mem_counters *c)
{
	char buf[1024];
	size_t got = 0;
	int ret;

	if (e->fd_mem < 0)
		return cg_read_memory(L->cg, e->s->cgroup, e->s->v1_mask, c);
	memset(c, 0, sizeof(*c));
	ret = cg_pread(e->fd_mem, buf, sizeof(buf), &got);
	if (ret == 0 && !e->mem_v1)
		return cg_parse_memory_events(buf, got, c);
	if (ret == 0)
		ret = cg_parse_kv(buf, got, "oom_kill", &c->oom_kill);
	if (ret == 0)
		ret = cg_pread(e->fd_fail, buf, sizeof(buf), &got);
	return ret ? ret : cg_parse_value(buf, got, &c->max_hits);
}

static int read_cpu(struct limits *L, struct lim_entry *e, struct cg_cpu_counters *c)
{
	char buf[1024];
	size_t got = 0;
	int ret;

	if (e->fd_cpu < 0)
		return cg_read_cpu(L->cg, e->s->cgroup, e->s->v1_mask, c);
	ret = cg_pread(e->fd_cpu, buf, sizeof(buf), &got);
	return ret ? ret : cg_parse_cpu_stat(buf, got, c);
}

static int read_pids(struct limits *L, struct lim_entry *e, struct cg_pids_counters *c)
{
	char buf[256];
	size_t got = 0;
	int ret;

	if (e->fd_pids < 0)
		return cg_read_pids(L->cg, e->s->cgroup, e->s->v1_mask, c);
	ret = cg_pread(e->fd_pids, buf, sizeof(buf), &got);
	return ret ? ret : cg_parse_pids_events(buf, got, &c->max_hits);
}

void lim_sample_memory(struct limits *L, struct lim_entry *e, int64_t now)
{
	struct cg_mem_counters c;
	uint64_t kills;
	int ret;

	if (!e->have_mem)
		return;
	ret = read_mem(L, e, &c);
	if (ret) {
		log_debug("session %s: memory counters unreadable: %s", e->s->id, strerror(-ret));
		return;
	}
	kills = rose(c.oom_kill, e->mem.oom_kill);
	if (kills && !e->oom_pending)
		e->oom_due_ms = now + LIMITS_OOM_WAIT_MS;
	e->oom_pending += kills;
	acc_add(&e->acc_mem, rose(c.max_hits, e->mem.max_hits), 0, e->last_sample_ms);
	c.peak = e->mem.peak;
	/* The peak only matters for a report: read it only when there will be one. */
	if ((kills || c.max_hits != e->mem.max_hits) &&
	    cg_read_peak(L->cg, e->s->cgroup, e->s->v1_mask, CG_MEMORY, &c.peak) < 0)
		c.peak = 0;
	e->mem = c;
}

void lim_sample_pids(struct limits *L, struct lim_entry *e, int64_t now)
{
	struct cg_pids_counters c = { 0, 0 };
	int ret;

	(void)now;
	if (!e->have_pids)
		return;
	ret = read_pids(L, e, &c);
	if (ret) {
		log_debug("session %s: pids counters unreadable: %s", e->s->id, strerror(-ret));
		return;
	}
	acc_add(&e->acc_pids, rose(c.max_hits, e->pids.max_hits), 0, e->last_sample_ms);
	c.peak = e->pids.peak;
	if (c.max_hits != e->pids.max_hits &&
	    cg_read_peak(L->cg, e->s->cgroup, e->s->v1_mask, CG_PIDS, &c.peak) < 0)
		c.peak = 0;
	e->pids = c;
}

void lim_sample_cpu(struct limits *L, struct lim_entry *e, int64_t now)
{
	struct cg_cpu_counters c;
	int ret;

	(void)now;
	if (!e->have_cpu)
		return;
	ret = read_cpu(L, e, &c);
	if (ret) {
		log_debug("session %s: cpu.stat unreadable: %s", e->s->id, strerror(-ret));
		return;
	}
	acc_add(&e->acc_cpu, rose(c.nr_throttled, e->cpu.nr_throttled),
		rose(c.throttled_us, e->cpu.throttled_us), e->last_sample_ms);
	e->cpu = c;
}

static void net_count(struct lim_entry *e, uint64_t pkts, uint64_t bytes)
{
	acc_add(&e->acc_net, rose(pkts, e->net_pkts), rose(bytes, e->net_bytes),
		e->last_sample_ms);
	e->net_pkts = pkts;
	e->net_bytes = bytes;
}

void lim_sample_net(struct limits *L, struct lim_entry *e, int64_t now)
{
	uint64_t pkts = 0, bytes = 0;
	int ret;

	(void)now;
	if (e->s->lim.net_rate <= 0 || !L->nft)
		return;
	ret = nft_rate_drops(L->nft, nft_mark_make(e->s->mark), &pkts, &bytes);
	if (ret) {
		log_debug("session %s: net_rate drop counter unreadable: %s", e->s->id,
			  strerror(-ret));
		return;
	}
	net_count(e, pkts, bytes);
}

static int by_mark(const void *a, const void *b)
{
	uint32_t x = ((const struct nft_rate_drops *)a)->mark;
	uint32_t y = ((const struct nft_rate_drops *)b)->mark;

	return x < y ? -1 : x > y;
}

void lim_sample_net_all(struct limits *L, bool (*live)(const struct session *))
{
	struct nft_rate_drops *v = NULL, key, *d;
	size_t i, n = 0;
	bool any = false;
	int ret;

	for (i = 0; i < L->n && !any; i++)
		any = L->v[i]->s->lim.net_rate > 0 && live(L->v[i]->s);
	if (!any || !L->nft)
		return;
	/* One dump for all sessions: a request per session would cost a round trip each. */
	ret = nft_rate_drops_all(L->nft, &v, &n);
	if (ret) {
		log_debug("net_rate drop counters unreadable: %s", strerror(-ret));
		return;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), by_mark);
	for (i = 0; i < L->n; i++) {
		struct lim_entry *e = L->v[i];

		if (e->s->lim.net_rate <= 0 || !live(e->s) || n == 0)
			continue;
		key.mark = nft_mark_make(e->s->mark);
		d = bsearch(&key, v, n, sizeof(*v), by_mark);
		if (d)
			net_count(e, d->pkts, d->bytes);
	}
	free(v);
}

/* One bounded report: nothing counted, or the last one too recent, means no event. */
static void report_acc(struct lim_entry *e, struct lim_acc *a, const char *limit,
		       int64_t measured, int64_t configured, int64_t now, int64_t interval,
		       bool force)
{
	struct lim_report r = { limit, "throttle", measured, configured, 0, 0, 0 };

	if (!a->count || (!force && a->last_report_ms && now - a->last_report_ms < interval))
		return;
	r.count = (int64_t)a->count;
	r.window_ms = a->since_ms ? now - a->since_ms : -1;
	if (strcmp(limit, "cpu_throttle") == 0 || strcmp(limit, "net_rate") == 0)
		r.measured = (int64_t)a->amount;
	emit(e->s, &r, NULL, -1);
	a->count = a->amount = 0;
	a->since_ms = 0;
	a->last_report_ms = now;
}

/* True when memcg (a v1 or v2 path, same relative layout) lies in session cgroup cg. */
static bool in_cgroup(const char *memcg, const char *cg)
{
	size_t n = strlen(cg);

	return strncmp(memcg, cg, n) == 0 && (memcg[n] == '\0' || memcg[n] == '/');
}

/*
 * The victim of one of e's kills: a logged kill in its cgroup; else, when e is the only
 * session waiting for one, a "Killed process" line without a cgroup (the summary line
 * is rate-limited by the kernel, that one is not).
 */
static struct lim_victim *find_victim(struct limits *L, const struct lim_entry *e,
				      int64_t now)
{
	struct lim_victim *anon = NULL;
	size_t i, waiting = 0;

	for (i = 0; i < L->n; i++)
		waiting += L->v[i]->oom_pending > 0;
	for (i = 0; i < LIMITS_VICTIMS; i++) {
		struct lim_victim *v = &L->victims[i];

		if (v->claimed || !v->k.pid || now - v->at_ms > LIMITS_VICTIM_TTL_MS)
			continue;
		if (v->k.memcg[0] && in_cgroup(v->k.memcg, e->s->cgroup))
			return v;
		if (!v->k.memcg[0] && !anon && waiting == 1)
			anon = v;
	}
	return anon;
}

static void report_ooms(struct limits *L, struct lim_entry *e, int64_t now, bool force)
{
	struct lim_report r = { "memory_oom", "kill", 0, e->s->lim.memory, 0, 1, -1 };
	struct lim_victim *v;

	r.measured = e->mem.peak ? (int64_t)e->mem.peak : -1;
	while (e->oom_pending) {
		v = find_victim(L, e, now);
		if (!v && !force && now < e->oom_due_ms)
			return;   /* its log line may still be on the way */
		r.pid = v ? v->k.pid : 0;
		if (v)
			v->claimed = true;
		emit(e->s, &r, v ? v->k.comm : NULL, -1);
		e->oom_pending--;
		e->oom_reported++;
	}
}

void lim_report_due(struct limits *L, struct lim_entry *e, int64_t now, bool force)
{
	int64_t iv = (int64_t)lim_cfg(L)->report_interval_ms;

	report_acc(e, &e->acc_mem, "memory_max", e->mem.peak ? (int64_t)e->mem.peak : -1,
		   e->s->lim.memory, now, iv, force);
	report_acc(e, &e->acc_pids, "pids_max", e->pids.peak ? (int64_t)e->pids.peak : -1,
		   e->s->lim.pids, now, iv, force);
	/* A sample taken inside a throttled period sees its count and not yet its time:
	 * the report waits for the time, at most as long as the longest period (1 s). */
	if (force || e->acc_cpu.amount || !e->acc_cpu.since_ms ||
	    now - e->acc_cpu.since_ms >= LIMITS_CPU_TIME_WAIT_MS)
		report_acc(e, &e->acc_cpu, "cpu_throttle", -1, 0, now, iv, force);
	report_acc(e, &e->acc_net, "net_rate", -1, e->s->lim.net_rate, now, iv, force);
	report_ooms(L, e, now, force);
}

void lim_add_victim(struct limits *L, const struct kmsg_oom *k, int64_t now)
{
	size_t last = (L->next_victim + LIMITS_VICTIMS - 1) % LIMITS_VICTIMS;
	struct lim_victim *prev = &L->victims[last];

	/* The summary and the "Killed process" line name the same kill: keep the first. */
	if (prev->k.pid == k->pid && now - prev->at_ms <= LIMITS_VICTIM_TTL_MS)
		return;
	L->victims[L->next_victim] = (struct lim_victim){ *k, now, false };
	L->next_victim = (L->next_victim + 1) % LIMITS_VICTIMS;
}

void lim_check_disk(struct limits *L, struct lim_entry *e, int64_t now)
{
	struct session *s = e->s;
	struct lim_report r = { "disk_quota", "warn", 0, s->lim.disk, 0, -1, -1 };
	bool truncated = false, kill = lim_cfg(L)->disk_action == SG_DISK_KILL;
	uint64_t bytes = 0;
	char err[256];
	int ret;

	if (s->lim.disk <= 0 || !s->workdir || now < e->disk_due_ms)
		return;
	e->disk_due_ms = now + (int64_t)lim_cfg(L)->disk_interval_ms;
	ret = dir_usage(s->workdir, lim_cfg(L)->disk_max_entries, &bytes, &truncated);
	if (ret) {
		log_errno(ret, "session %s: cannot measure %s", s->id, s->workdir);
		return;
	}
	if (bytes <= (uint64_t)s->lim.disk) {
		e->disk_over = false;   /* back under: the next crossing is reported again */
		return;
	}
	if (e->disk_over)
		return;
	e->disk_over = true;
	r.measured = (int64_t)bytes;
	r.action = kill ? "kill" : "warn";
	emit(s, &r, NULL, truncated);
	if (kill && L->hooks.terminate &&
	    L->hooks.terminate(L->hooks.ctx, s, "disk_quota", err, sizeof(err)))
		log_warnx("%s", err);
}
