/* Parsing a control request line: bytes from a local client, checked before use. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attribution/cgmap.h"
#include "common/version.h"
#include "daemon/control.h"

static int bad(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

static bool verb_ok(const char *v)
{
	size_t i, n = strlen(v);

	if (n == 0 || n >= CONTROL_VERB_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') ||
		      v[i] == '.' || v[i] == '_' || v[i] == '-'))
			return false;
	return true;
}

int control_parse_request(const char *line, size_t len, struct control_request *req,
			  char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *verb, *actor;

	memset(req, 0, sizeof(*req));
	if (len > CONTROL_LINE_MAX)
		return bad(err, errlen, "request too large");
	req->root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!req->root) {
		snprintf(err, errlen, "malformed JSON: %s", jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(req->root))
		goto fail_msg_obj;
	verb = json_object_get(req->root, "verb");
	if (!json_is_string(verb) || !verb_ok(json_string_value(verb))) {
		control_request_free(req);
		return bad(err, errlen, "\"verb\" must be a string of [a-z0-9._-], 1-63 chars");
	}
	snprintf(req->verb, sizeof(req->verb), "%s", json_string_value(verb));
	req->args = json_object_get(req->root, "args");
	if (!req->args) {
		req->args = json_object();
		if (!req->args || json_object_set_new(req->root, "args", req->args)) {
			control_request_free(req);
			return -ENOMEM;
		}
	} else if (!json_is_object(req->args)) {
		control_request_free(req);
		return bad(err, errlen, "\"args\" must be an object");
	}
	actor = json_object_get(req->root, "actor");
	if (actor && !json_is_null(actor)) {
		if (!json_is_string(actor) || json_string_length(actor) >= CONTROL_ACTOR_MAX) {
			control_request_free(req);
			return bad(err, errlen, "\"actor\" must be a string under 256 bytes");
		}
		req->actor = json_string_value(actor);
	}
	return 0;
fail_msg_obj:
	control_request_free(req);
	return bad(err, errlen, "request must be a JSON object");
}

void control_request_free(struct control_request *req)
{
	json_decref(req->root);
	memset(req, 0, sizeof(*req));
}

/* The session test moved to attribution (cgmap_proc_in_session): the sessions' peer
 * check uses it on a peer's ancestors. */
int control_peer_in_session(const char *proc_cgroup, size_t len, const char *session_prefix)
{
	return cgmap_proc_in_session(proc_cgroup, len, session_prefix);
}

const char *control_error_code(int neg_errno)
{
	switch (-neg_errno) {
	case EINVAL: case E2BIG: case ERANGE: case ENAMETOOLONG: return "invalid";
	case ENOENT: case ESRCH: return "not_found";
	case EEXIST: return "exists";
	case EBUSY: case EALREADY: case EAGAIN: case ENOTDIR: return "conflict";
	case EACCES: case EPERM: return "denied";
	case ENOTCONN: case EOPNOTSUPP: case ENOSYS: return "unavailable";
	case ENOMEM: case ENOSPC: case EMFILE: case ENFILE: return "no_resources";
	default: return "failed";
	}
}

int control_verb_version(void *ctx, const struct control_peer *peer,
			 const struct control_request *req, json_t **result, char *err,
			 size_t errlen)
{
	const json_t *p = json_object_get(req->args, "protocol");
	const char *key;
	json_t *v;

	(void)ctx;
	(void)peer;
	json_object_foreach(req->args, key, v) {
		if (strcmp(key, "protocol") != 0 && strcmp(key, "client") != 0) {
			snprintf(err, errlen, "unknown argument \"%.64s\"", key);
			return -EINVAL;
		}
	}
	if (p && (!json_is_integer(p) || json_integer_value(p) < 1)) {
		snprintf(err, errlen, "\"protocol\" must be a positive integer");
		return -EINVAL;
	}
	if (p && json_integer_value(p) > CONTROL_PROTOCOL) {
		snprintf(err, errlen, "protocol %lld is newer than this daemon's (%d)",
			 (long long)json_integer_value(p), CONTROL_PROTOCOL);
		return -EOPNOTSUPP;
	}
	*result = json_pack("{s:i, s:s, s:s}", "protocol", CONTROL_PROTOCOL,
			    "daemon", "sandgated", "version", sandgate_version());
	return *result ? 0 : -ENOMEM;
}
