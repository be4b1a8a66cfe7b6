/*
 * Tool invocations and model summaries reported by the orchestrator, at the session
 * policy's verbosity: minimal (name and status), summary (plus redacted, size-limited
 * summaries), full (plus the whole input and output in the detail store, referenced by
 * SHA-256). Reading the detail store back is itself logged.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sessions/session_int.h"

#define TOOL_TEXT_MAX (200 * 1024)

static enum sg_verbosity verbosity_of(struct sessions *ss, const struct session *s)
{
	const struct sg_policy *p = sess_policy(ss, s->policy);

	return p ? p->verbosity : SG_VERB_SUMMARY;
}

static const char *verbosity_name(enum sg_verbosity v)
{
	return v == SG_VERB_MINIMAL ? "minimal" : v == SG_VERB_FULL ? "full" : "summary";
}

/* One summary field: null at minimal, else redacted and cut. */
static int put_summary(struct event *e, const char *key, const char *text,
		       enum sg_verbosity v, size_t *nred, bool *cut)
{
	size_t n = 0;
	bool t = false;
	char *red;

	if (!text || v == SG_VERB_MINIMAL) {
		event_null(e, key);
		return 0;
	}
	red = redact_summary(text, strlen(text), REDACT_SUMMARY_MAX, &t, &n);
	if (!red)
		return -ENOMEM;
	event_str(e, key, red);
	free(red);
	*nred += n;
	*cut = *cut || t;
	return 0;
}

/* At full verbosity, the whole text goes to the detail store; the event gets its hash. */
static int put_detail(struct sessions *ss, struct event *e, const char *key,
		      const char *text, enum sg_verbosity v)
{
	char hex[65];
	int ret;

	if (!text || v != SG_VERB_FULL) {
		event_null(e, key);
		return 0;
	}
	ret = detail_put(ss->detail_dir, text, strlen(text), hex);
	if (ret == 0)
		event_str(e, key, hex);
	return ret;
}

struct texts {
	const char *in_sum, *out_sum, *in_full, *out_full;
};

static int put_texts(struct sessions *ss, struct event *e, const struct texts *t,
		     enum sg_verbosity v, char *err, size_t errlen)
{
	size_t nred = 0;
	bool cut = false;
	int ret = put_summary(e, "input_summary", t->in_sum, v, &nred, &cut);

	if (ret == 0)
		ret = put_summary(e, "output_summary", t->out_sum, v, &nred, &cut);
	event_str(e, "verbosity", verbosity_name(v));
	event_uint(e, "redactions", nred);
	event_bool(e, "summary_truncated", cut);
	event_object_begin(e, "detail");
	if (ret == 0)
		ret = put_detail(ss, e, "input", t->in_full ? t->in_full : t->in_sum, v);
	if (ret == 0)
		ret = put_detail(ss, e, "output", t->out_full ? t->out_full : t->out_sum, v);
	event_object_end(e);
	if (ret)
		snprintf(err, errlen, "cannot keep the full input/output: %s", strerror(-ret));
	return ret;
}

static int get_texts(const json_t *args, struct texts *t, char *err, size_t errlen)
{
	int ret = arg_str(args, "input_summary", TOOL_TEXT_MAX, &t->in_sum, err, errlen);

	if (ret == 0)
		ret = arg_str(args, "output_summary", TOOL_TEXT_MAX, &t->out_sum, err, errlen);
	if (ret == 0)
		ret = arg_str(args, "input", TOOL_TEXT_MAX, &t->in_full, err, errlen);
	if (ret == 0)
		ret = arg_str(args, "output", TOOL_TEXT_MAX, &t->out_full, err, errlen);
	return ret;
}

static int finish(struct event *e, const struct actor *a, json_t **result, const char *what)
{
	int ret;

	event_actor(e, a);
	ret = event_emit(e);
	if (ret)
		return ret;
	*result = json_pack("{s:s}", "recorded", what);
	return *result ? 0 : -ENOMEM;
}

static int verb_tool(void *ctx, const struct control_peer *peer,
		     const struct control_request *req, json_t **result, char *err,
		     size_t errlen)
{
	static const char *const keys[] = { "id", "session_id", "name", "tool", "status",
		"input_summary", "output_summary", "input", "output", "call_id", "duration_ms",
		NULL };
	const char *name = NULL, *status = NULL, *call = NULL;
	struct sessions *ss = ctx;
	struct session *s = NULL;
	struct texts t = { 0 };
	struct event *e;
	struct actor a;
	int64_t dur = -1;
	int ret = args_only(req->args, keys, err, errlen);

	if (ret == 0)
		ret = arg_session(ss, req->args, &s, err, errlen);
	if (ret == 0)
		ret = arg_str(req->args, "name", 256, &name, err, errlen);
	if (ret == 0 && !name)
		ret = arg_str(req->args, "tool", 256, &name, err, errlen);
	if (ret == 0)
		ret = arg_str(req->args, "status", 16, &status, err, errlen);
	if (ret == 0)
		ret = arg_str(req->args, "call_id", 256, &call, err, errlen);
	if (ret == 0)
		ret = arg_int(req->args, "duration_ms", &dur, err, errlen);
	if (ret == 0)
		ret = get_texts(req->args, &t, err, errlen);
	if (ret)
		return ret;
	if (!name || !status || (strcmp(status, "success") && strcmp(status, "error") &&
				 strcmp(status, "timeout"))) {
		snprintf(err, errlen, "\"name\" and \"status\" (success, error, timeout) are "
			 "required");
		return -EINVAL;
	}
	e = event_new("tool.invoke", s->id, EVENT_SRC_ORCHESTRATOR);
	if (!e)
		return -ENOMEM;
	event_str(e, "tool", name);
	event_str(e, "status", status);
	event_str(e, "call_id", call);
	if (dur >= 0) event_int(e, "duration_ms", dur); else event_null(e, "duration_ms");
	ret = put_texts(ss, e, &t, verbosity_of(ss, s), err, errlen);
	if (ret) {
		event_free(e);
		return ret;
	}
	actor_from(&a, peer, req);
	return finish(e, &a, result, "tool.invoke");
}

static int verb_model(void *ctx, const struct control_peer *peer,
		      const struct control_request *req, json_t **result, char *err,
		      size_t errlen)
{
	static const char *const keys[] = { "id", "session_id", "model", "input_summary",
		"output_summary", "input", "output", "call_id", "input_tokens", "output_tokens",
		NULL };
	const char *model = NULL, *call = NULL;
	struct sessions *ss = ctx;
	struct session *s = NULL;
	struct texts t = { 0 };
	int64_t tin = -1, tout = -1;
	struct event *e;
	struct actor a;
	int ret = args_only(req->args, keys, err, errlen);

	if (ret == 0)
		ret = arg_session(ss, req->args, &s, err, errlen);
	if (ret == 0)
		ret = arg_str(req->args, "model", 256, &model, err, errlen);
	if (ret == 0)
		ret = arg_str(req->args, "call_id", 256, &call, err, errlen);
	if (ret == 0)
		ret = arg_int(req->args, "input_tokens", &tin, err, errlen);
	if (ret == 0)
		ret = arg_int(req->args, "output_tokens", &tout, err, errlen);
	if (ret == 0)
		ret = get_texts(req->args, &t, err, errlen);
	if (ret)
		return ret;
	e = event_new("model.summary", s->id, EVENT_SRC_ORCHESTRATOR);
	if (!e)
		return -ENOMEM;
	event_str(e, "model", model);
	event_str(e, "call_id", call);
	if (tin >= 0) event_int(e, "input_tokens", tin); else event_null(e, "input_tokens");
	if (tout >= 0) event_int(e, "output_tokens", tout); else event_null(e, "output_tokens");
	ret = put_texts(ss, e, &t, verbosity_of(ss, s), err, errlen);
	if (ret) {
		event_free(e);
		return ret;
	}
	actor_from(&a, peer, req);
	return finish(e, &a, result, "model.summary");
}

static int verb_detail_get(void *ctx, const struct control_peer *peer,
			   const struct control_request *req, json_t **result, char *err,
			   size_t errlen)
{
	static const char *const keys[] = { "hash", NULL };
	struct sessions *ss = ctx;
	const char *hash = NULL;
	char *data = NULL;
	size_t len = 0;
	struct event *e;
	struct actor a;
	int ret = args_only(req->args, keys, err, errlen);

	if (ret == 0)
		ret = arg_str(req->args, "hash", 64, &hash, err, errlen);
	if (ret == 0 && !hash)
		ret = -EINVAL;
	if (ret == 0 && (ret = detail_get(ss->detail_dir, hash, &data, &len)) < 0)
		snprintf(err, errlen, "detail %s: %s", hash,
			 ret == -EINVAL ? "not a SHA-256 hex digest" :
			 ret == -ENOENT ? "no such detail" : strerror(-ret));
	if (ret)
		return ret;
	actor_from(&a, peer, req);
	e = event_new("detail.read", NULL, EVENT_SRC_ORCHESTRATOR);
	if (e) {
		event_str(e, "hash", hash);
		event_uint(e, "bytes", len);
		event_actor(e, &a);
		event_emit(e);
	}
	*result = json_pack("{s:s,s:s%}", "hash", hash, "content", data, len);
	free(data);
	return *result ? 0 : -ENOMEM;
}

int session_tool_verbs_register(struct sessions *ss)
{
	int ret = sess_add_verb(ss, "tool.invoke", verb_tool);

	if (ret == 0)
		ret = sess_add_verb(ss, "model.summary", verb_model);
	if (ret == 0)
		ret = sess_add_verb(ss, "detail.get", verb_detail_get);
	return ret;
}
