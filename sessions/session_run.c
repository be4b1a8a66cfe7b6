/*
 * The verbs behind `sandgate run`. The CLI forks; the child asks session.contain (the
 * session's holder is made at the first run), joins the holder's namespaces and drops
 * its capabilities (contain/contain.h), then asks session.attach on the same connection
 * and is moved into the session's cgroups. session.attach checks from /proc that the
 * caller is contained unless the session (or this run) is privileged, so a client that
 * skips containment is refused. Only the caller itself (SO_PEERCRED pid) is ever moved,
 * so the verb cannot be used to pull another process (or the daemon) into a session.
 * Once inside, the child can no longer reach this socket; it forks the command into the
 * session's PID namespace. The parent, still outside, waits and reports the exit status
 * with session.report_exit, which the session's end (populated 0) then carries.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sessions/session_int.h"

static void emit_containment(struct event *e, const struct session *s, bool privileged)
{
	event_object_begin(e, "containment");
	event_str(e, "mode", privileged ? "privileged" : "contained");
	if (privileged) {
		event_null(e, "holder_pid");
		event_null(e, "pidns");
	} else {
		event_int(e, "holder_pid", s->holder.pid);
		event_uint(e, "pidns", s->holder.pidns);
	}
	event_object_end(e);
}

/*
 * session.contain: makes the session's holder if it has none and says what a contained
 * command of it does: join holder_pid's namespaces (checked against holder_start) and
 * keep only the capabilities in keep (a mask of capability numbers).
 */
static int verb_contain(void *ctx, const struct control_peer *peer,
			const struct control_request *req, json_t **result, char *err,
			size_t errlen)
{
	static const char *const keys[] = { "id", "session_id", NULL };
	struct sessions *ss = ctx;
	struct session *s = NULL;
	int ret = args_only(req->args, keys, err, errlen);

	(void)peer;
	if (ret == 0)
		ret = arg_session(ss, req->args, &s, err, errlen);
	if (ret)
		return ret;
	if (s->state != SESSION_RUNNING) {
		snprintf(err, errlen, "session %s is %s: commands run only in a running session",
			 s->id, session_state_name(s->state));
		return -EINVAL;
	}
	if (!s->privileged && (ret = sess_holder_ensure(ss, s, err, errlen)) < 0)
		return ret;
	/* A run is under way: an end pending since the last command exited waits for its
	 * attach (which cancels it), as the grace meant to; without one it still comes. */
	if (s->end_due_ms)
		s->end_due_ms = time_mono_ms() + SESSION_CONTAIN_GRACE_MS;
	*result = s->privileged
		? json_pack("{s:s,s:b}", "id", s->id, "privileged", 1)
		: json_pack("{s:s,s:b,s:i,s:I,s:I}", "id", s->id, "privileged", 0, "holder_pid",
			    (int)s->holder.pid, "holder_start", (json_int_t)s->holder.start,
			    "keep", (json_int_t)sess_keep(s));
	return *result ? 0 : -ENOMEM;
}

static int verb_attach(void *ctx, const struct control_peer *peer,
		       const struct control_request *req, json_t **result, char *err,
		       size_t errlen)
{
	static const char *const keys[] = { "id", "session_id", "argv0", "privileged", NULL };
	struct sessions *ss = ctx;
	struct session *s = NULL;
	const char *argv0 = NULL;
	bool privileged;
	struct event *e;
	struct actor a;
	int ret = args_only(req->args, keys, err, errlen);

	if (ret == 0)
		ret = arg_session(ss, req->args, &s, err, errlen);
	if (ret == 0)
		ret = arg_str(req->args, "argv0", 4096, &argv0, err, errlen);
	if (ret)
		return ret;
	privileged = s->privileged || json_is_true(json_object_get(req->args, "privileged"));
	if (s->state != SESSION_RUNNING) {
		snprintf(err, errlen, "session %s is %s: commands run only in a running session",
			 s->id, session_state_name(s->state));
		return -EINVAL;
	}
	if (peer->pid <= 1 || peer->pid == getpid()) {
		snprintf(err, errlen, "pid %d cannot be attached", (int)peer->pid);
		return -EPERM;
	}
	if (!privileged && (ret = sess_contain_check(ss, s, peer->pid, err, errlen)) < 0)
		return ret;
	ret = cg_attach(&ss->cg, s->cgroup, s->v1_mask, peer->pid);
	if (ret) {
		snprintf(err, errlen, "cannot move pid %d into %s: %s", (int)peer->pid, s->cgroup,
			 strerror(-ret));
		return ret;
	}
	/* The root of this command's fork tree for the audit sensors, before it execs. */
	sess_attached(ss, peer->pid, s);
	sess_note_root(ss, s, peer->pid);
	s->populated = true;
	s->end_due_ms = 0;
	if (!s->attached) {
		s->attached = true;
		sess_save(ss, s);
	}
	actor_from(&a, peer, req);
	e = event_new("session.attach", s->id, EVENT_SRC_ORCHESTRATOR);
	if (e) {
		event_int(e, "pid", peer->pid);
		event_str(e, "cmd", argv0);
		emit_containment(e, s, privileged);
		event_actor(e, &a);
		event_emit(e);
	}
	*result = json_pack("{s:s,s:s,s:s?}", "id", s->id, "cgroup", s->cgroup, "workdir",
			    s->workdir);
	return *result ? 0 : -ENOMEM;
}

static int verb_report_exit(void *ctx, const struct control_peer *peer,
			    const struct control_request *req, json_t **result, char *err,
			    size_t errlen)
{
	static const char *const keys[] = { "id", "session_id", "pid", "exit_code", "signal",
					    NULL };
	struct sessions *ss = ctx;
	struct session *s = NULL;
	int64_t pid, code, sig;
	int ret = args_only(req->args, keys, err, errlen);

	(void)peer;
	if (ret == 0)
		ret = arg_session(ss, req->args, &s, err, errlen);
	if (ret == 0)
		ret = arg_int(req->args, "pid", &pid, err, errlen);
	if (ret == 0)
		ret = arg_int(req->args, "exit_code", &code, err, errlen);
	if (ret == 0)
		ret = arg_int(req->args, "signal", &sig, err, errlen);
	if (ret)
		return ret;
	if (code > 255 || sig > 64) {
		snprintf(err, errlen, "exit_code must be 0-255 and signal 1-64");
		return -EINVAL;
	}
	/* Kept for the end of the session; a report after the end changes nothing. */
	if (s->state == SESSION_RUNNING || s->state == SESSION_PAUSED) {
		s->last_exit = code;
		s->last_signal = sig > 0 ? (int)sig : 0;
	}
	*result = json_pack("{s:s,s:s}", "id", s->id, "state", session_state_name(s->state));
	return *result ? 0 : -ENOMEM;
}

static int verb_whois(void *ctx, const struct control_peer *peer,
		      const struct control_request *req, json_t **result, char *err,
		      size_t errlen)
{
	static const char *const keys[] = { "pid", NULL };
	struct sessions *ss = ctx;
	char id[SESSION_ID_MAX + 1] = "";
	uint64_t start = 0;
	int64_t pid;
	int ret = args_only(req->args, keys, err, errlen);

	(void)peer;
	if (ret == 0)
		ret = arg_int(req->args, "pid", &pid, err, errlen);
	if (ret == 0 && (pid <= 0 || pid > 0x7fffffff)) {
		snprintf(err, errlen, "\"pid\" is required (a positive integer)");
		ret = -EINVAL;
	}
	if (ret)
		return ret;
	ret = pidcache_lookup(ss->pids, ss->conf.session_prefix, (pid_t)pid, id, sizeof(id));
	if (ret == 0)
		ret = proc_starttime((pid_t)pid, &start);
	if (ret) {
		snprintf(err, errlen, "pid %lld: %s", (long long)pid,
			 ret == -ESRCH ? "no such process" : strerror(-ret));
		return ret;
	}
	*result = json_pack("{s:I,s:I,s:s?}", "pid", (json_int_t)pid, "start_time",
			    (json_int_t)start, "session_id", id[0] ? id : NULL);
	return *result ? 0 : -ENOMEM;
}

int session_run_verbs_register(struct sessions *ss)
{
	int ret = sess_add_verb(ss, "session.attach", verb_attach);

	if (ret == 0)
		ret = sess_add_verb(ss, "session.contain", verb_contain);

	if (ret == 0)
		ret = sess_add_verb(ss, "session.report_exit", verb_report_exit);
	if (ret == 0)
		ret = sess_add_verb(ss, "session.whois", verb_whois);
	return ret;
}
