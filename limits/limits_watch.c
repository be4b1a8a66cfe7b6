/*
 * The resource limits watcher: per session, the event files the kernel announces are
 * watched (v2 memory.events and pids.events with inotify, v1 memory.oom_control with an
 * eventfd through cgroup.event_control); cpu.stat, and the v1 counters the kernel does
 * not announce (memory.failcnt, pids.events: no inotify on v1, measured), are read every
 * sample_interval; OOM victims come from the kernel log (/dev/kmsg). docs/limits.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/loop.h"
#include "limits/limits_int.h"

static struct lim_entry *find_entry(struct limits *L, const struct session *s, size_t *at)
{
	size_t i;

	for (i = 0; i < L->n; i++) {
		if (L->v[i]->s == s) {
			if (at)
				*at = i;
			return L->v[i];
		}
	}
	return NULL;
}

static bool live(const struct session *s)
{
	return s->state == SESSION_RUNNING || s->state == SESSION_PAUSED;
}

static void on_efd(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct lim_entry *e = ctx;
	int64_t now = time_mono_ms();
	uint64_t n;

	(void)l;
	(void)events;
	/* Also signalled when the cgroup is removed: the counters tell which it was. */
	if (read(fd, &n, sizeof(n)) != sizeof(n) || !live(e->s))
		return;
	/* The announcement can come before the kill is counted: look again on the ticks. */
	e->oom_recheck = 5;
	lim_sample_memory(e->L, e, now);
	lim_report_due(e->L, e, now, false);
}

/* v1: an eventfd the kernel signals on every OOM in the memory cgroup. */
static int watch_v1_oom(struct limits *L, struct lim_entry *e, const char *dir)
{
	char path[700], line[64];
	int cfd, wfd, n, ret = 0;

	e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (e->efd < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/memory.oom_control", dir);
	cfd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/cgroup.event_control", dir);
	wfd = open(path, O_WRONLY | O_CLOEXEC);
	n = snprintf(line, sizeof(line), "%d %d", e->efd, cfd);
	if (cfd < 0 || wfd < 0 || write(wfd, line, (size_t)n) != n)
		ret = -errno;
	if (cfd >= 0)
		close(cfd);
	if (wfd >= 0)
		close(wfd);
	if (ret == 0)
		ret = loop_add(L->loop, e->efd, EPOLLIN, on_efd, e);
	if (ret) {
		close(e->efd);
		e->efd = -1;
	}
	return ret;
}

static int watch_v2_file(struct limits *L, const char *dir, const char *file, int *wd)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	*wd = inotify_add_watch(L->ifd, path, IN_MODIFY);
	return *wd < 0 ? -errno : 0;
}

/* file kept open for pread while the budget allows; -1: read by path. */
static int keep(struct limits *L, const struct session *s, unsigned ctrl, const char *file)
{
	int fd;

	if (L->fds_held >= LIMITS_FD_BUDGET)
		return -1;
	fd = cg_open_ctrl(L->cg, s->cgroup, s->v1_mask, ctrl, file);
	if (fd < 0)
		return -1;
	L->fds_held++;
	return fd;
}

static void unkeep(struct limits *L, int *fd)
{
	if (*fd < 0)
		return;
	close(*fd);
	L->fds_held--;
	*fd = -1;
}

/* The files the tick reads (see on_tick: only those of configured limits). */
static void keep_sampled(struct limits *L, struct lim_entry *e)
{
	const struct session *s = e->s;

	if (e->have_cpu && (s->lim.millicpus > 0 || s->adopted))
		e->fd_cpu = keep(L, s, CG_CPU, "cpu.stat");
	if (e->have_mem && e->mem_v1 && (s->lim.memory > 0 || s->adopted)) {
		e->fd_mem = keep(L, s, CG_MEMORY, "memory.oom_control");
		e->fd_fail = keep(L, s, CG_MEMORY, "memory.failcnt");
		if (e->fd_mem < 0 || e->fd_fail < 0) {   /* both or neither */
			unkeep(L, &e->fd_mem);
			unkeep(L, &e->fd_fail);
		}
	}
	if (e->have_pids && e->pids_v1 && (s->lim.pids > 0 || s->adopted))
		e->fd_pids = keep(L, s, CG_PIDS, "pids.events");
}

/* Which controllers s has, where, and a first reading of each (the baseline). */
static int setup_entry(struct limits *L, struct lim_entry *e)
{
	const struct session *s = e->s;
	char dir[600];
	int v1, ret = 0;

	v1 = cg_ctrl_dir(L->cg, s->cgroup, s->v1_mask, CG_MEMORY, dir, sizeof(dir));
	e->have_mem = v1 >= 0 && cg_read_memory(L->cg, s->cgroup, s->v1_mask, &e->mem) == 0;
	e->mem_v1 = v1 == 1;
	if (e->have_mem && !v1)
		ret = watch_v2_file(L, dir, "memory.events", &e->wd_mem);
	else if (e->have_mem && L->fds_held < LIMITS_FD_BUDGET &&
		 (ret = watch_v1_oom(L, e, dir)) == 0)
		L->fds_held++;
	v1 = cg_ctrl_dir(L->cg, s->cgroup, s->v1_mask, CG_PIDS, dir, sizeof(dir));
	e->have_pids = v1 >= 0 && cg_read_pids(L->cg, s->cgroup, s->v1_mask, &e->pids) == 0;
	e->pids_v1 = v1 == 1;
	if (ret == 0 && e->have_pids && !v1)
		ret = watch_v2_file(L, dir, "pids.events", &e->wd_pids);
	e->have_cpu = cg_read_cpu(L->cg, s->cgroup, s->v1_mask, &e->cpu) == 0;
	e->last_sample_ms = time_mono_ms();
	keep_sampled(L, e);
	return ret;
}

static void drop_entry(struct limits *L, size_t at)
{
	struct lim_entry *e = L->v[at];

	if (e->efd >= 0) {
		loop_del(L->loop, e->efd);
		unkeep(L, &e->efd);
	}
	unkeep(L, &e->fd_cpu);
	unkeep(L, &e->fd_mem);
	unkeep(L, &e->fd_fail);
	unkeep(L, &e->fd_pids);
	if (e->wd_mem >= 0)
		inotify_rm_watch(L->ifd, e->wd_mem);
	if (e->wd_pids >= 0)
		inotify_rm_watch(L->ifd, e->wd_pids);
	free(e);
	L->v[at] = L->v[L->n - 1];
	L->n--;
}

static int grow(struct limits *L)
{
	struct lim_entry **v;
	size_t cap = L->cap ? L->cap * 2 : 16;

	v = realloc(L->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	L->v = v;
	L->cap = cap;
	return 0;
}

void limits_watch(struct limits *L, struct session *s)
{
	struct lim_entry *e;
	int ret;

	if (!L || s->state == SESSION_TERMINATED || find_entry(L, s, NULL))
		return;
	if (L->n == L->cap && grow(L) < 0) {
		log_warnx("session %s: resource limits not watched: out of memory", s->id);
		return;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		log_warnx("session %s: resource limits not watched: out of memory", s->id);
		return;
	}
	*e = (struct lim_entry){ .L = L, .s = s, .wd_mem = -1, .wd_pids = -1, .efd = -1,
				 .fd_cpu = -1, .fd_mem = -1, .fd_fail = -1, .fd_pids = -1 };
	L->v[L->n++] = e;
	ret = setup_entry(L, e);
	if (ret)
		log_errno(ret, "session %s: limit events not watched (counters still sampled)",
			  s->id);
}

void limits_unwatch(struct limits *L, struct session *s)
{
	size_t at;

	if (L && find_entry(L, s, &at))
		drop_entry(L, at);
}

uint64_t limits_flush(struct limits *L, struct session *s)
{
	int64_t now = time_mono_ms();
	struct lim_entry *e;
	uint64_t reported;
	size_t at;

	if (!L || !(e = find_entry(L, s, &at)))
		return 0;
	lim_sample_memory(L, e, now);
	lim_sample_pids(L, e, now);
	lim_sample_cpu(L, e, now);
	lim_sample_net(L, e, now);
	lim_report_due(L, e, now, true);
	reported = e->oom_reported;
	/* Ended: nothing more to report, and its descriptors go back to the budget. */
	drop_entry(L, at);
	return reported;
}

static struct lim_entry *entry_by_wd(struct limits *L, int wd)
{
	size_t i;

	for (i = 0; i < L->n; i++)
		if (L->v[i]->wd_mem == wd || L->v[i]->wd_pids == wd)
			return L->v[i];
	return NULL;
}

/* One drain of the inotify fd: its events are sampled at one time. */
struct wd_batch {
	struct limits *L;
	int64_t now;
};

static void on_wd(int wd, void *ctx)
{
	struct wd_batch *b = ctx;
	struct lim_entry *e = entry_by_wd(b->L, wd);

	if (!e || !live(e->s))
		return;
	if (wd == e->wd_mem)
		lim_sample_memory(b->L, e, b->now);
	else
		lim_sample_pids(b->L, e, b->now);
	lim_report_due(b->L, e, b->now, false);
}

static void on_inotify(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct wd_batch b = { .L = ctx, .now = time_mono_ms() };

	(void)l;
	(void)events;
	loop_inotify_drain(fd, on_wd, &b);
}

static void on_kmsg(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct limits *L = ctx;
	struct kmsg_oom k;
	char rec[8192];
	int64_t now = time_mono_ms();
	ssize_t n;
	size_t i;
	bool any = false;

	(void)l;
	(void)events;
	/* One record per read; EPIPE: records overwritten before we got them, go on. */
	while ((n = read(fd, rec, sizeof(rec))) > 0 || (n < 0 && errno == EPIPE)) {
		if (n > 0 && kmsg_parse_oom(rec, (size_t)n, &k) == 0) {
			lim_add_victim(L, &k, now);
			any = true;
		}
	}
	for (i = 0; any && i < L->n; i++)
		if (L->v[i]->oom_pending)
			lim_report_due(L, L->v[i], now, false);
}

static int arm(struct limits *L)
{
	int64_t ms = (int64_t)lim_cfg(L)->sample_interval_ms;
	struct itimerspec its = {
		.it_interval = { ms / 1000, (ms % 1000) * 1000000L },
		.it_value = { ms / 1000, (ms % 1000) * 1000000L },
	};

	if (timerfd_settime(L->tfd, 0, &its, NULL) < 0)
		return -errno;
	L->armed_ms = (uint64_t)ms;
	return 0;
}

static void on_tick(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct limits *L = ctx;
	int64_t now = time_mono_ms();
	uint64_t exp;
	size_t i;

	(void)l;
	(void)events;
	if (read(fd, &exp, sizeof(exp)) != sizeof(exp))
		return;
	if (L->armed_ms != lim_cfg(L)->sample_interval_ms && arm(L) < 0)
		log_warn("limits: cannot re-arm the sample timer");
	lim_sample_net_all(L, live);   /* before the loop: it uses each last_sample_ms */
	/* lim_check_disk may terminate a session, which drops its entry and moves the last
	 * one into its slot: walking down, that one has been seen already. */
	for (i = L->n; i-- > 0;) {
		struct lim_entry *e = L->v[i];

		if (!live(e->s))
			continue;
		/* No quota, no throttling; no limit, no limit hits (an adopted cgroup's owner
		 * may have set its own). OOM kills without a limit (a host-wide OOM) are
		 * announced: re-read for a few ticks after the announcement. */
		if (e->s->lim.millicpus > 0 || e->s->adopted)
			lim_sample_cpu(L, e, now);
		if ((e->mem_v1 || e->wd_mem < 0) &&
		    (e->s->lim.memory > 0 || e->s->adopted || e->oom_recheck))
			lim_sample_memory(L, e, now);
		if ((e->pids_v1 || e->wd_pids < 0) && (e->s->lim.pids > 0 || e->s->adopted))
			lim_sample_pids(L, e, now);
		if (e->oom_recheck)
			e->oom_recheck--;
		e->last_sample_ms = now;
		lim_report_due(L, e, now, false);
		lim_check_disk(L, e, now);
	}
}

static void open_kmsg(struct limits *L)
{
	L->kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (L->kfd < 0) {
		log_warn("/dev/kmsg: OOM victims will be reported without a pid");
		return;
	}
	/* Only kills from now on: the history belongs to earlier runs. */
	if (lseek(L->kfd, 0, SEEK_END) < 0 ||
	    loop_add(L->loop, L->kfd, EPOLLIN, on_kmsg, L) < 0) {
		log_warn("/dev/kmsg: OOM victims will be reported without a pid");
		close(L->kfd);
		L->kfd = -1;
	}
}

int limits_new(struct limits **out, const struct sg_limits_config *cfg, struct loop *loop,
	       const struct cg_host *cg, const struct limits_hooks *hooks)
{
	struct limits *L;
	int ret;

	*out = NULL;
	if (!cfg->enabled)
		return 0;
	L = calloc(1, sizeof(*L));
	if (!L)
		return -ENOMEM;
	L->cfg = cfg;
	L->loop = loop;
	L->cg = cg;
	L->hooks = *hooks;
	L->kfd = -1;
	L->ifd = L->tfd = -1;
	*out = L;
	L->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	L->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (L->ifd < 0 || L->tfd < 0)
		return -errno;
	ret = arm(L);
	if (ret == 0)
		ret = loop_add(L->loop, L->ifd, EPOLLIN, on_inotify, L);
	if (ret == 0)
		ret = loop_add(L->loop, L->tfd, EPOLLIN, on_tick, L);
	if (ret == 0 && cfg->kmsg)
		open_kmsg(L);
	return ret;
}

void limits_free(struct limits *L)
{
	int fds[3];
	size_t i;

	if (!L)
		return;
	while (L->n)
		drop_entry(L, L->n - 1);
	fds[0] = L->ifd;
	fds[1] = L->tfd;
	fds[2] = L->kfd;
	for (i = 0; i < 3; i++) {
		if (fds[i] < 0)
			continue;
		loop_del(L->loop, fds[i]);
		close(fds[i]);
	}
	free(L->v);
	free(L);
}

void limits_configure(struct limits *L, const struct sg_limits_config *cfg)
{
	if (L)
		L->cfg = cfg;
}

void limits_set_nft(struct limits *L, struct nft_handle *h)
{
	if (L)
		L->nft = h;
}
