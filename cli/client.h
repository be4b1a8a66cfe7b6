/* The CLI's side of the control socket (protocol in daemon/control.h). */
#ifndef SANDGATE_CLI_CLIENT_H
#define SANDGATE_CLI_CLIENT_H

#include <jansson.h>
#include <stddef.h>

#define CLIENT_DEFAULT_SOCKET "/run/sandgate/control.sock"

/* $SANDGATE_CONTROL, else the default path. */
const char *client_socket_path(const char *override);

/*
 * Sends {"verb":verb,"args":args,"actor":actor} (args borrowed, may be NULL) and reads
 * the reply. Returns 0 with *result (new reference) on {"ok":true}; -EREMOTEIO with
 * the daemon's message in err on {"ok":false}; -errno with a reason in err otherwise.
 */
int client_call(const char *socket_path, const char *verb, json_t *args, const char *actor,
		json_t **result, char *err, size_t errlen);

/* A connection kept open for several calls (`run` keeps it across setns). fd or -errno. */
int client_open(const char *socket_path, char *err, size_t errlen);
/* client_call on an open connection (the daemon answers requests in order). */
int client_call_fd(int fd, const char *verb, json_t *args, const char *actor,
		   json_t **result, char *err, size_t errlen);

#endif
