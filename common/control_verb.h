/*
 * The verb contract between the control socket (daemon/control.c) and the parts that
 * answer verbs (sessions/, the daemon's own): who asks, what is asked, and the
 * handler's shape. A part gets a way to register its handlers from the daemon (a hook),
 * never the socket itself. The wire format is docs/control-protocol.md.
 */
#ifndef SANDGATE_COMMON_CONTROL_VERB_H
#define SANDGATE_COMMON_CONTROL_VERB_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#define CONTROL_VERB_MAX 64

/* Who is asking: from SO_PEERCRED at accept, plus the request's optional actor. */
struct control_peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	int fd;                       /* the connection (for passing fds, e.g. `run`) */
};

struct control_request {
	char verb[CONTROL_VERB_MAX];
	json_t *args;                 /* an object (empty when absent); borrowed */
	const char *actor;            /* NULL when absent */
	json_t *root;                 /* owned */
};

/*
 * A verb handler. Returns 0 with *result set (a new reference; NULL means {}), or
 * -errno with a message in err for the caller. Handlers must leave state unchanged
 * when they fail.
 */
typedef int (*control_verb_fn)(void *ctx, const struct control_peer *peer,
			       const struct control_request *req, json_t **result,
			       char *err, size_t errlen);

/*
 * A further test of a peer (the sessions' PID namespaces and fork trees): a negative
 * return refuses the peer, with why set.
 */
typedef int (*control_peer_fn)(void *ctx, pid_t pid, char *why, size_t len);

#endif
