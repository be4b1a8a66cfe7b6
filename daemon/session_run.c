/*
 * The verbs behind `sandgate run`. The CLI forks; the child asks session.attach and is
 * moved into the session's cgroups. Only the caller itself (SO_PEERCRED pid) is ever
 * moved, so the verb cannot be used to pull another process (or the daemon) into a
 * session. Once inside, the child can no longer reach this socket; it execs the
 * command. The parent, still outside, waits and reports the exit status with
 * session.report_exit, which the session's end (populated 0) then carries.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/session_int.h"

static int verb_attach(void *ctx, const struct control_peer *peer,
		       const struct control_request *req, json_t **result, char *err,
		       size_t errlen)
{
	static const char *const keys[] = { "id", "session_id", "argv0", NULL };
	struct sessions *ss = ctx;
	struct session *s = NULL;
	const char *argv0 = NULL;
	struct event *e;
	struct actor a;
	int ret = args_only(req->args, keys, err, errlen);

	if (ret == 0)
		ret = arg_session(ss, req->args, &s, err, errlen);
	if (ret == 0)
		ret = arg_str(req->args, "argv0", 4096, &argv0, err, errlen);
	if (ret)
		return ret;
	if (s->state != SESSION_RUNNING) {
		snprintf(err, errlen, "session %s is %s: commands run only in a running session",
			 s->id, session_state_name(s->state));
		return -EINVAL;
	}
	if (peer->pid <= 1 || peer->pid == getpid()) {
		snprintf(err, errlen, "pid %d cannot be attached", (int)peer->pid);
		return -EPERM;
	}
	ret = cg_attach(&ss->cg, s->cgroup, s->v1_mask, peer->pid);
	if (ret) {
		snprintf(err, errlen, "cannot move pid %d into %s: %s", (int)peer->pid, s->cgroup,
			 strerror(-ret));
		return ret;
	}
	/* The root of this command's fork tree for the audit sensors, before it execs. */
	daemon_audit_attached(ss->d, peer->pid, s->id);
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
	ret = pidcache_lookup(ss->pids, ss->d->session_prefix, (pid_t)pid, id, sizeof(id));
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
	int ret = control_register(ss->d->control, "session.attach", verb_attach, ss);

	if (ret == 0)
		ret = control_register(ss->d->control, "session.report_exit", verb_report_exit, ss);
	if (ret == 0)
		ret = control_register(ss->d->control, "session.whois", verb_whois, ss);
	return ret;
}
