/*
 * The transitions that end a session, shared by the terminate verb, the timeout timer
 * and the kernel's "populated 0", plus the small helpers every session file uses.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>

#include "common/log.h"
#include "sessions/session_int.h"

void actor_from(struct actor *a, const struct control_peer *peer,
		const struct control_request *req)
{
	a->uid = peer->uid;
	a->pid = peer->pid;
	a->name = req->actor;
}

void event_actor(struct event *e, const struct actor *a)
{
	if (!a) {
		event_null(e, "actor");
		return;
	}
	event_object_begin(e, "actor");
	event_int(e, "uid", a->uid);
	event_int(e, "pid", a->pid);
	event_str(e, "name", a->name);
	event_object_end(e);
}

void sess_save(struct sessions *ss, const struct session *s)
{
	int ret = sessions_save(ss->reg, s);

	if (ret)
		log_errno(ret, "session %s: cannot persist its state", s->id);
}

int sess_watch(struct sessions *ss, struct session *s)
{
	char path[600];

	cg_path(&ss->cg, s->cgroup, "cgroup.events", path, sizeof(path));
	s->wd = inotify_add_watch(ss->ifd, path, IN_MODIFY);
	if (s->wd < 0)
		return -errno;
	limits_watch(ss->limits, s);
	return 0;
}

void sess_unwatch(struct sessions *ss, struct session *s)
{
	if (s->wd >= 0)
		inotify_rm_watch(ss->ifd, s->wd);
	s->wd = -1;
	limits_unwatch(ss->limits, s);
}

/* cgroup.kill is asynchronous: the processes are gone once "populated 0". */
static int wait_empty(struct sessions *ss, const struct session *s, int timeout_ms)
{
	struct timespec pause = { 0, 1000000 };
	bool populated = true, frozen;
	int waited, ret;

	for (waited = 0; waited <= timeout_ms; waited++) {
		ret = cg_events(&ss->cg, s->cgroup, &populated, &frozen);
		if (ret)
			return ret;
		if (!populated)
			return 0;
		if (waited % 100 == 99)
			cg_kill(&ss->cg, s->cgroup);   /* pre-5.14 fallback races new forks */
		nanosleep(&pause, NULL);
	}
	return -ETIMEDOUT;
}

static void emit_terminate(struct session *s, enum event_source src, const struct actor *a)
{
	struct event *e = event_new("session.terminate", s->id, src);

	if (!e)
		return;
	event_str(e, "reason", s->end_reason);
	if (s->exit_status >= 0)
		event_int(e, "exit_status", s->exit_status);
	else
		event_null(e, "exit_status");
	if (s->last_signal > 0)
		event_int(e, "signal", s->last_signal);
	else
		event_null(e, "signal");
	event_int(e, "duration_ms", s->started_us ? (s->ended_us - s->started_us) / 1000 : 0);
	event_actor(e, a);
	if (event_emit(e))
		log_warnx("session %s: session.terminate not recorded", s->id);
}

static void emit_limit(struct session *s, const char *limit, int64_t measured,
		       int64_t configured)
{
	struct event *e = event_new("resource.limit", s->id, EVENT_SRC_KERNEL);

	if (!e)
		return;
	event_str(e, "limit", limit);
	if (measured >= 0)
		event_int(e, "measured", measured);
	else
		event_null(e, "measured");
	if (configured > 0)
		event_int(e, "configured", configured);
	else
		event_null(e, "configured");
	event_str(e, "action", "kill");
	event_null(e, "pid");
	if (strcmp(limit, "timeout") == 0)
		e->source = EVENT_SRC_SANDGATE;
	event_emit(e);
}

static int set_ended(struct session *s, const char *reason)
{
	char *r = strdup(reason);

	if (!r)
		return -ENOMEM;
	free(s->end_reason);
	s->end_reason = r;
	s->state = SESSION_TERMINATED;
	s->ended_us = time_wall_us();
	s->end_due_ms = 0;
	if (s->last_exit >= 0)
		s->exit_status = s->last_exit;
	else if (s->last_signal > 0)
		s->exit_status = 128 + s->last_signal;
	return 0;
}

int sess_terminate(struct sessions *ss, struct session *s, const char *reason,
		   const struct actor *a, enum event_source src, char *err, size_t errlen)
{
	int ret;

	/* pid 1 of its namespaces first: the kernel then kills everything in them. */
	sess_holder_stop(ss, s);
	ret = cg_kill(&ss->cg, s->cgroup);
	if (ret == 0 && s->state == SESSION_PAUSED)
		ret = cg_freeze(&ss->cg, s->cgroup, false, SESSION_FREEZE_MS);
	if (ret == 0)
		ret = wait_empty(ss, s, SESSION_KILL_WAIT_MS);
	if (ret == 0)
		ret = set_ended(s, reason);
	if (ret) {
		snprintf(err, errlen, "session %s: cannot kill its processes: %s", s->id,
			 strerror(-ret));
		return ret;
	}
	snapshot_free(s->snap);
	s->snap = NULL;
	sess_save(ss, s);
	limits_flush(ss->limits, s);   /* what the session hit before it was killed comes first */
	if (strcmp(reason, "timeout") == 0)
		emit_limit(s, "timeout", (s->ended_us - s->started_us) / 1000000,
			   s->lim.timeout_s);
	emit_terminate(s, src, a);
	return 0;
}

void sess_end_observed(struct sessions *ss, struct session *s)
{
	uint64_t ooms = 0, reported = limits_flush(ss->limits, s);
	const char *reason = "normal";

	if (cg_oom_kills(&ss->cg, s->cgroup, s->v1_mask, &ooms) == 0 && ooms > s->oom_base)
		reason = "oom";
	else if (s->last_signal > 0)
		reason = "signal";
	if (set_ended(s, reason) < 0) {
		log_warnx("session %s: out of memory recording its end", s->id);
		return;
	}
	sess_holder_stop(ss, s);
	sess_save(ss, s);
	/* The watcher reported each kill with its victim; these are the ones it missed
	 * (killed while the daemon was down, or no watcher). */
	if (strcmp(reason, "oom") == 0 && ooms - s->oom_base > reported)
		emit_limit(s, "memory_oom", -1, s->lim.memory);
	emit_terminate(s, EVENT_SRC_KERNEL, NULL);
}
