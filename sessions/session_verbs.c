/*
 * The session lifecycle verbs: start, pause, resume, terminate, cleanup, list, show.
 * Each checks the transition first (docs/sessions.md has the table), then acts on the
 * kernel, then persists and logs. A refused request changes nothing.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "sessions/session_int.h"

#define VERB_ARGS struct sessions *ss = ctx; struct session *s = NULL; struct actor a; \
	int ret

static const char *const id_keys[] = { "id", "session_id", NULL };
static const char *const reason_keys[] = { "id", "session_id", "reason", NULL };
static const char *const cleanup_keys[] = { "id", "session_id", "fs", NULL };

static int refuse(const struct session *s, const char *verb, const char *need, char *err,
		  size_t errlen)
{
	snprintf(err, errlen, "session %s is %s: cannot %s (%s)", s->id,
		 session_state_name(s->state), verb, need);
	return -EINVAL;
}

/* Common prologue: known keys, the session, the actor. */
static int prologue(struct sessions *ss, const struct control_peer *peer,
		    const struct control_request *req, const char *const *keys,
		    struct session **s, struct actor *a, char *err, size_t errlen)
{
	int ret = args_only(req->args, keys, err, errlen);

	if (ret == 0)
		ret = arg_session(ss, req->args, s, err, errlen);
	actor_from(a, peer, req);
	return ret;
}

static int one_of(const char *v, const char *const *set)
{
	size_t i;

	for (i = 0; set[i]; i++)
		if (strcmp(v, set[i]) == 0)
			return 0;
	return -EINVAL;
}

static void emit_start(struct sessions *ss, const struct session *s, const struct actor *a)
{
	struct event *e = event_new("session.start", s->id, EVENT_SRC_ORCHESTRATOR);
	const struct session_limits *l = &s->lim;

	if (!e)
		return;
	event_str(e, "host_id", ss->conf.host);
	event_object_begin(e, "limits");
	if (l->memory > 0) event_int(e, "memory_max", l->memory); else event_null(e, "memory_max");
	if (l->millicpus > 0) event_double(e, "cpus", (double)l->millicpus / 1000.0);
	else event_null(e, "cpus");
	if (l->pids > 0) event_int(e, "pids_max", l->pids); else event_null(e, "pids_max");
	if (l->timeout_s > 0) event_int(e, "timeout_s", l->timeout_s);
	else event_null(e, "timeout_s");
	if (l->disk > 0) event_int(e, "disk", l->disk); else event_null(e, "disk");
	if (l->net_rate > 0) event_int(e, "net_rate", l->net_rate);
	else event_null(e, "net_rate");
	event_bool(e, "disk_enforced", false);
	event_str(e, "controllers", (ss->cg.v1_mask & s->v1_mask) ? "v1" : "v2");
	event_object_end(e);
	event_str(e, "cgroup", s->cgroup);
	event_actor(e, a);
	event_emit(e);
}

static int verb_start(void *ctx, const struct control_peer *peer,
		      const struct control_request *req, json_t **result, char *err,
		      size_t errlen)
{
	bool frozen;
	VERB_ARGS;

	ret = prologue(ss, peer, req, id_keys, &s, &a, err, errlen);
	if (ret)
		return ret;
	if (s->state != SESSION_CREATED)
		return refuse(s, "start", "only a created session can start", err, errlen);
	s->state = SESSION_RUNNING;
	s->started_us = time_wall_us();
	ret = sessions_save(ss->reg, s);
	if (ret) {
		s->state = SESSION_CREATED;
		s->started_us = 0;
		snprintf(err, errlen, "cannot persist session %s: %s", s->id, strerror(-ret));
		return ret;
	}
	emit_start(ss, s, &a);
	/* An adopted cgroup that emptied before the start: the watch saw it while created. */
	if (s->end_when_empty && s->populated && cg_events(&ss->cg, s->cgroup, &s->populated,
							   &frozen) == 0 && !s->populated)
		s->end_due_ms = time_mono_ms() + SESSION_END_GRACE_MS;
	*result = session_to_json(s);
	return 0;
}

static int verb_pause(void *ctx, const struct control_peer *peer,
		      const struct control_request *req, json_t **result, char *err,
		      size_t errlen)
{
	static const char *const reasons[] = { "api", "timeout", "auto", NULL };
	const char *reason = NULL;
	struct event *e;
	VERB_ARGS;

	ret = prologue(ss, peer, req, reason_keys, &s, &a, err, errlen);
	if (ret == 0)
		ret = arg_str(req->args, "reason", 32, &reason, err, errlen);
	if (ret)
		return ret;
	if (reason && one_of(reason, reasons) < 0) {
		snprintf(err, errlen, "pause reason must be api, timeout or auto");
		return -EINVAL;
	}
	if (s->state != SESSION_RUNNING)
		return refuse(s, "pause", "only a running session can pause", err, errlen);
	ret = cg_freeze(&ss->cg, s->cgroup, true, SESSION_FREEZE_MS);
	/* Files are read once everything is stopped: nothing moves under the snapshot. */
	if (ret == 0)
		ret = snapshot_take(&ss->cg, s->cgroup, s->workdir, &s->snap);
	if (ret) {
		cg_freeze(&ss->cg, s->cgroup, false, SESSION_FREEZE_MS);
		snprintf(err, errlen, "session %s: cannot freeze: %s", s->id, strerror(-ret));
		return ret;
	}
	s->state = SESSION_PAUSED;
	sess_save(ss, s);
	e = event_new("session.pause", s->id, EVENT_SRC_ORCHESTRATOR);
	if (e) {
		event_str(e, "reason", reason ? reason : "api");
		event_actor(e, &a);
		event_emit(e);
	}
	*result = session_to_json(s);
	return 0;
}

static int verb_resume(void *ctx, const struct control_peer *peer,
		       const struct control_request *req, json_t **result, char *err,
		       size_t errlen)
{
	size_t nfiles = 0, nprocs = 0;
	struct event *e;
	VERB_ARGS;

	ret = prologue(ss, peer, req, id_keys, &s, &a, err, errlen);
	if (ret)
		return ret;
	if (s->state != SESSION_PAUSED)
		return refuse(s, "resume", "only a paused session can resume", err, errlen);
	e = event_new("session.resume", s->id, EVENT_SRC_ORCHESTRATOR);
	if (!e)
		return -ENOMEM;
	/* Compared while still frozen: what differs was done by someone else. */
	if (s->snap)
		ret = snapshot_diff_emit(s->snap, &ss->cg, s->cgroup, s->workdir, e,
					 "changed_while_paused", &nfiles, &nprocs);
	else
		event_null(e, "changed_while_paused");   /* paused before a daemon restart */
	if (ret == 0)
		ret = cg_freeze(&ss->cg, s->cgroup, false, SESSION_FREEZE_MS);
	if (ret) {
		event_free(e);
		snprintf(err, errlen, "session %s: cannot thaw: %s", s->id, strerror(-ret));
		return ret;
	}
	s->state = SESSION_RUNNING;
	snapshot_free(s->snap);
	s->snap = NULL;
	sess_save(ss, s);
	event_actor(e, &a);
	event_emit(e);
	*result = json_pack("{s:s,s:s,s:I,s:I}", "id", s->id, "state", "running",
			    "files_changed", (json_int_t)nfiles, "processes_changed",
			    (json_int_t)nprocs);
	return 0;
}

static int verb_terminate(void *ctx, const struct control_peer *peer,
			  const struct control_request *req, json_t **result, char *err,
			  size_t errlen)
{
	static const char *const reasons[] = { "api", "policy_violation", "timeout", "normal",
					       "signal", "oom", NULL };
	const char *reason = NULL;
	VERB_ARGS;

	ret = prologue(ss, peer, req, reason_keys, &s, &a, err, errlen);
	if (ret == 0)
		ret = arg_str(req->args, "reason", 32, &reason, err, errlen);
	if (ret)
		return ret;
	if (reason && one_of(reason, reasons) < 0) {
		snprintf(err, errlen, "terminate reason must be one of api, policy_violation, "
			 "timeout, normal, signal, oom");
		return -EINVAL;
	}
	if (s->state == SESSION_TERMINATED)
		return refuse(s, "terminate", "it already ended", err, errlen);
	ret = sess_terminate(ss, s, reason ? reason : "api", &a, EVENT_SRC_ORCHESTRATOR, err,
			     errlen);
	if (ret == 0)
		*result = session_to_json(s);
	return ret;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

/* What becomes of the workdir: left, removed, or moved aside under STATE_DIR/snapshots. */
static int dispose_files(struct sessions *ss, const struct session *s, const char *fs,
			 char *where, size_t wlen)
{
	where[0] = '\0';
	if (!s->workdir || strcmp(fs, "preserved") == 0)
		return 0;
	if (strcmp(fs, "deleted") == 0)
		return nftw(s->workdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0 ? -errno
											: 0;
	snprintf(where, wlen, "%s/%s-%lld", ss->snapshot_dir, s->id, (long long)s->created_us);
	if (mkdir(ss->snapshot_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	return rename(s->workdir, where) < 0 ? -errno : 0;
}

static void emit_cleanup(const struct session *s, const char *fs, const char *where,
			 const struct actor *a)
{
	struct event *e = event_new("session.cleanup", s->id, EVENT_SRC_ORCHESTRATOR);

	if (!e)
		return;
	event_str(e, "fs_state", fs);
	event_str(e, "workdir", s->workdir);
	event_str(e, "snapshot", *where ? where : NULL);
	event_str(e, "cgroup", s->cgroup);
	event_bool(e, "cgroup_removed", !s->adopted);
	event_actor(e, a);
	event_emit(e);
}

static int verb_cleanup(void *ctx, const struct control_peer *peer,
			const struct control_request *req, json_t **result, char *err,
			size_t errlen)
{
	static const char *const kinds[] = { "preserved", "deleted", "snapshot", NULL };
	const char *fs = NULL;
	char where[1024];
	VERB_ARGS;

	ret = prologue(ss, peer, req, cleanup_keys, &s, &a, err, errlen);
	if (ret == 0)
		ret = arg_str(req->args, "fs", 16, &fs, err, errlen);
	if (ret)
		return ret;
	fs = fs ? fs : "preserved";
	if (one_of(fs, kinds) < 0) {
		snprintf(err, errlen, "\"fs\" must be preserved, deleted or snapshot");
		return -EINVAL;
	}
	if (s->state != SESSION_TERMINATED)
		return refuse(s, "clean up", "terminate it first", err, errlen);
	ret = cg_remove(&ss->cg, s->cgroup, s->v1_mask, s->adopted);
	if (ret) {
		snprintf(err, errlen, "session %s: cannot remove cgroup %s: %s", s->id, s->cgroup,
			 strerror(-ret));
		return ret;
	}
	ret = dispose_files(ss, s, fs, where, sizeof(where));
	if (ret)
		log_errno(ret, "session %s: workdir %s not %s", s->id, s->workdir, fs);
	if (ret)
		fs = "preserved";
	if (sess_nft_del(ss, s) < 0)
		log_warnx("session %s: nft elements not removed", s->id);
	sess_unwatch(ss, s);
	pidcache_forget_session(ss->pids, s->id);
	emit_cleanup(s, fs, where, &a);
	*result = json_pack("{s:s,s:s,s:s?}", "id", s->id, "fs_state", fs, "snapshot",
			    *where && ret == 0 ? where : NULL);
	sessions_remove(ss->reg, s);
	return 0;
}

static int verb_list(void *ctx, const struct control_peer *peer,
		     const struct control_request *req, json_t **result, char *err,
		     size_t errlen)
{
	static const char *const keys[] = { NULL };
	struct sessions *ss = ctx;
	json_t *arr = json_array();
	size_t i;

	(void)peer;
	if (!arr)
		return -ENOMEM;
	if (args_only(req->args, keys, err, errlen) < 0) {
		json_decref(arr);
		return -EINVAL;
	}
	for (i = 0; i < sessions_count(ss->reg); i++)
		json_array_append_new(arr, session_to_json(sessions_at(ss->reg, i)));
	*result = json_pack("{s:o}", "sessions", arr);
	return *result ? 0 : -ENOMEM;
}

static int verb_show(void *ctx, const struct control_peer *peer,
		     const struct control_request *req, json_t **result, char *err,
		     size_t errlen)
{
	bool populated = false, frozen = false;
	VERB_ARGS;

	ret = prologue(ss, peer, req, id_keys, &s, &a, err, errlen);
	if (ret)
		return ret;
	*result = session_to_json(s);
	if (!*result)
		return -ENOMEM;
	cg_events(&ss->cg, s->cgroup, &populated, &frozen);
	json_object_set_new(*result, "populated", json_boolean(populated));
	json_object_set_new(*result, "frozen", json_boolean(frozen));
	json_object_set_new(*result, "nft_mark", json_integer(sess_nft_mark(s->mark)));
	return 0;
}

int session_verbs_register(struct sessions *ss)
{
	static const struct {
		const char *name;
		control_verb_fn fn;
	} verbs[] = {
		{ "session.create", verb_session_create }, { "session.start", verb_start },
		{ "session.pause", verb_pause }, { "session.resume", verb_resume },
		{ "session.terminate", verb_terminate }, { "session.cleanup", verb_cleanup },
		{ "session.list", verb_list }, { "session.show", verb_show },
	};
	size_t i;
	int ret = 0;

	for (i = 0; ret == 0 && i < sizeof(verbs) / sizeof(verbs[0]); i++)
		ret = sess_add_verb(ss, verbs[i].name, verbs[i].fn);
	return ret;
}
