/*
 * The control socket: newline-delimited JSON requests from the orchestrator and the
 * CLI over a Unix stream socket. A peer is accepted only if it is root or in the
 * control group, and never if it runs inside a session cgroup. Verbs are registered by
 * the parts that implement them; the socket code only authenticates, frames, parses
 * and dispatches.
 *
 * Request:  {"verb":"session.create","args":{...},"actor":"ci-bot"}\n
 * Response: {"ok":true,"result":{...}}\n  or  {"ok":false,"error":"...","code":"..."}\n
 * The reference is docs/control-protocol.md.
 */
#ifndef SANDGATE_DAEMON_CONTROL_H
#define SANDGATE_DAEMON_CONTROL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/control_verb.h"   /* control_peer, control_request, control_verb_fn */
#include "common/loop.h"

#define CONTROL_LINE_MAX (256 * 1024)
#define CONTROL_ACTOR_MAX 256

/*
 * Parses one request line (untrusted bytes). Returns 0 and fills req (free with
 * control_request_free), or -EINVAL with a reason in err.
 */
int control_parse_request(const char *line, size_t len, struct control_request *req,
			  char *err, size_t errlen);
void control_request_free(struct control_request *req);

struct control;

struct control_settings {
	const char *path;             /* socket path; its directory is created 0755 */
	const char *group;            /* group allowed besides root; may not exist */
	const char *session_cgroup;   /* cgroup v2 path prefix of sessions, e.g. "/sandgate" */
};

/* Binds and listens; the socket is 0660 root:group. Returns 0 or -errno (err says why). */
int control_open(struct control **out, const struct control_settings *s, struct loop *l,
		 char *err, size_t errlen);
int control_register(struct control *c, const char *verb, control_verb_fn fn, void *ctx);

/*
 * A further test of every peer besides uid/group and the session cgroup (the sessions'
 * PID namespaces and fork trees; control_peer_fn): a negative return refuses the peer,
 * with why logged.
 */
void control_set_peer_check(struct control *c, control_peer_fn fn, void *ctx);
/* Closes every connection and the listener, unlinks the socket path. */
void control_close(struct control *c);

/*
 * The protocol this daemon speaks (docs/control-protocol.md). A change that breaks a
 * client bumps it; adding verbs, arguments or result fields does not.
 */
#define CONTROL_PROTOCOL 1

/*
 * The error code of a failed request, from the handler's -errno: one of "invalid",
 * "not_found", "exists", "conflict", "denied", "unavailable", "no_resources", "failed".
 */
const char *control_error_code(int neg_errno);

/*
 * The "version" verb (handshake): {"protocol":N} in args is the client's (optional);
 * a client newer than the daemon is refused. Result: protocol, daemon, version.
 */
int control_verb_version(void *ctx, const struct control_peer *peer,
			 const struct control_request *req, json_t **result, char *err,
			 size_t errlen);

/*
 * Peer checks, exposed for tests: 0 when allowed, else -EACCES with the reason.
 * cgroup_line is the content of /proc/PID/cgroup.
 */
int control_peer_in_session(const char *proc_cgroup, size_t len, const char *session_prefix);

#endif
