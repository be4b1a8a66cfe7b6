/*
 * Sessions in the daemon: load the registry, adopt the sessions that outlived the
 * previous run (same marks, same cgroups), register the verbs, and watch the kernel:
 * inotify on each cgroup.events for "populated 0", a 100 ms timer for timeouts and
 * for the short grace that lets `sandgate run` report an exit status first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/log.h"
#include "attribution/cgmap.h"
#include "common/loop.h"
#include "sessions/session_int.h"

static void emit_adopt(const struct session *s, const char *outcome)
{
	struct event *e = event_new("session.adopt", s->id, EVENT_SRC_SANDGATE);

	if (!e)
		return;
	event_str(e, "outcome", outcome);
	event_str(e, "state", session_state_name(s->state));
	event_uint(e, "mark", sess_nft_mark(s->mark));
	event_str(e, "cgroup", s->cgroup);
	event_uint(e, "cgroup_id", s->cgroup_id);
	event_null(e, "actor");
	event_emit(e);
}

/* Its cgroup vanished while we were down: ended, for a reason nobody observed. */
static int set_lost(struct session *s)
{
	char *r = strdup("unknown");

	if (!r)
		return -ENOMEM;
	free(s->end_reason);
	s->end_reason = r;
	s->state = SESSION_TERMINATED;
	s->ended_us = time_wall_us();
	return 0;
}

/* One session from the registry file: is its cgroup the one we made? */
static void adopt(struct sessions *ss, struct session *s)
{
	uint64_t id = 0;
	bool frozen = false;
	int ret;

	ret = cg_id(&ss->cg, s->cgroup, &id);
	if (ret < 0 || id != s->cgroup_id) {
		/* Gone (or replaced) while we were down: nothing of it to attribute. */
		if (s->state != SESSION_TERMINATED && set_lost(s) == 0)
			sess_save(ss, s);
		emit_adopt(s, "cgroup_lost");
		return;
	}
	if (sess_watch(ss, s) < 0 || sess_nft_add(ss, s) < 0)
		log_warnx("session %s: not fully re-registered after restart", s->id);
	cg_oom_kills(&ss->cg, s->cgroup, s->v1_mask, &s->oom_base);
	cg_events(&ss->cg, s->cgroup, &s->populated, &frozen);
	sess_holder_adopt(ss, s);
	emit_adopt(s, "adopted");
	/* Its processes ended while we were down: the kernel's answer stands. */
	if (s->state == SESSION_RUNNING && !s->populated && s->started_us &&
	    s->attached && s->end_when_empty)
		sess_end_observed(ss, s);
}

static void on_wd(int wd, void *ctx)
{
	struct sessions *ss = ctx;
	struct session *s = sessions_find_wd(ss->reg, wd);
	bool populated, frozen;

	if (!s || s->state != SESSION_RUNNING ||
	    cg_events(&ss->cg, s->cgroup, &populated, &frozen) < 0)
		return;
	if (populated) {
		s->populated = true;
		s->end_due_ms = 0;
	} else if (!s->end_when_empty) {
		s->populated = false;        /* the orchestrator ends it, not its emptiness */
	} else if (s->populated && !s->end_due_ms) {
		s->end_due_ms = time_mono_ms() + SESSION_END_GRACE_MS;
	}
}

static void on_inotify(struct loop *l, int fd, uint32_t events, void *ctx)
{
	(void)l;
	(void)events;
	loop_inotify_drain(fd, on_wd, ctx);
}

static void tick_one(struct sessions *ss, struct session *s, int64_t ms, int64_t us)
{
	bool populated = true, frozen;
	char err[256];

	if (s->state == SESSION_TERMINATED)
		return;
	if (s->lim.timeout_s > 0 && s->started_us &&
	    us - s->started_us >= s->lim.timeout_s * 1000000) {
		if (sess_terminate(ss, s, "timeout", NULL, EVENT_SRC_SANDGATE, err, sizeof(err)))
			log_warnx("%s", err);
		return;
	}
	if (s->end_due_ms && ms >= s->end_due_ms) {
		s->end_due_ms = 0;
		if (cg_events(&ss->cg, s->cgroup, &populated, &frozen) == 0 && !populated)
			sess_end_observed(ss, s);
	}
}

static void on_tick(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct sessions *ss = ctx;
	int64_t ms = time_mono_ms(), us = time_wall_us();
	uint64_t expirations;
	size_t i;

	(void)l;
	(void)events;
	if (read(fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	for (i = 0; i < sessions_count(ss->reg); i++)
		tick_one(ss, sessions_at(ss->reg, i), ms, us);
}

static int open_watchers(struct sessions *ss)
{
	struct itimerspec its = {
		.it_interval = { 0, SESSION_TICK_MS * 1000000L },
		.it_value = { 0, SESSION_TICK_MS * 1000000L },
	};
	int ret;

	ss->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ss->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ss->ifd < 0 || ss->tfd < 0)
		return -errno;
	if (timerfd_settime(ss->tfd, 0, &its, NULL) < 0)
		return -errno;
	ret = loop_add(ss->loop, ss->ifd, EPOLLIN, on_inotify, ss);
	if (ret == 0)
		ret = loop_add(ss->loop, ss->tfd, EPOLLIN, on_tick, ss);
	return ret;
}

static int load_and_adopt(struct sessions *ss)
{
	size_t i, bad = 0;
	int ret = sessions_load(ss->reg, &bad);

	if (ret)
		return ret;
	if (bad)
		log_warnx("%zu unreadable session files set aside as *.bad", bad);
	for (i = 0; i < sessions_count(ss->reg); i++)
		adopt(ss, sessions_at(ss->reg, i));
	return 0;
}

/* The limits watcher's disk_quota kill: the daemon ends the session, no actor. */
static int limits_terminate(void *ctx, struct session *s, const char *reason, char *err,
			    size_t errlen)
{
	return sess_terminate(ctx, s, reason, NULL, EVENT_SRC_SANDGATE, err, errlen);
}

static int start_limits(struct sessions *ss)
{
	const struct limits_hooks lh = { .ctx = ss, .terminate = limits_terminate };
	int ret = limits_new(&ss->limits, ss->conf.limits, ss->loop, &ss->cg, &lh);

	if (ret < 0) {
		/* Sessions still work without it; their limits still apply, unreported. */
		log_errno(ret, "resource limits watcher not started");
		limits_free(ss->limits);
		ss->limits = NULL;
	}
	return 0;
}

int sessions_open(struct sessions **out, const struct sessions_conf *conf, struct loop *loop,
		  const struct session_hooks *hooks)
{
	struct sessions *ss = calloc(1, sizeof(*ss));
	char dir[512];
	int ret;

	*out = NULL;
	if (!ss)
		return -ENOMEM;
	ss->conf = *conf;
	ss->loop = loop;
	ss->hooks = *hooks;
	ss->ifd = ss->tfd = -1;
	snprintf(dir, sizeof(dir), "%s/sessions", conf->state_dir);
	snprintf(ss->detail_dir, sizeof(ss->detail_dir), "%s/detail", conf->state_dir);
	snprintf(ss->snapshot_dir, sizeof(ss->snapshot_dir), "%s/snapshots", conf->state_dir);
	ret = cg_host_detect(&ss->cg, conf->cgroup_root);
	if (ret == 0)
		cgmap_activate(ss->cg.v2root);
	if (ret == 0)
		ret = sessions_new(&ss->reg, dir);
	if (ret == 0)
		ret = pidcache_new(&ss->pids, 4096);
	if (ret == 0)
		ret = open_watchers(ss);
	if (ret == 0)
		ret = start_limits(ss);
	if (ret == 0)
		ret = load_and_adopt(ss);
	if (ret == 0)
		ret = session_verbs_register(ss);
	if (ret == 0)
		ret = session_run_verbs_register(ss);
	if (ret == 0)
		ret = session_tool_verbs_register(ss);
	if (ret) {
		sessions_close(ss);
		return ret;
	}
	*out = ss;
	return 0;
}

void sessions_close(struct sessions *ss)
{
	if (!ss)
		return;
	/* Sessions live on: their files stay, the next daemon adopts them. */
	limits_free(ss->limits);
	if (ss->ifd >= 0) {
		loop_del(ss->loop, ss->ifd);
		close(ss->ifd);
	}
	if (ss->tfd >= 0) {
		loop_del(ss->loop, ss->tfd);
		close(ss->tfd);
	}
	sessions_free(ss->reg);
	pidcache_free(ss->pids);
	free(ss);
}

void sessions_configure(struct sessions *ss, const struct sessions_conf *conf)
{
	if (!ss)
		return;
	ss->conf = *conf;
	limits_configure(ss->limits, conf->limits);
}

void sessions_set_nft(struct sessions *ss, struct nft_handle *h)
{
	if (!ss)
		return;
	ss->nft = h;
	limits_set_nft(ss->limits, h);
}

struct session_reg *sessions_registry(const struct sessions *ss)
{
	return ss ? ss->reg : NULL;
}

int sessions_pids(struct sessions *ss, const struct session *s, pid_t **pids, size_t *n)
{
	return cg_pids(&ss->cg, s->cgroup, pids, n);
}

int sessions_terminate_id(struct sessions *ss, const char *sid, const char *reason)
{
	struct session *s;
	char err[256];
	int ret;

	if (!ss)
		return -ENOENT;
	s = sessions_find(ss->reg, sid);
	if (!s)
		return -ENOENT;
	if (s->state == SESSION_TERMINATED)
		return 0;
	ret = sess_terminate(ss, s, reason, NULL, EVENT_SRC_SANDGATE, err, sizeof(err));
	if (ret)
		log_warnx("%s", err);
	return ret;
}
