#include "cli/client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/control.h"

const char *client_socket_path(const char *override)
{
	const char *env = getenv("SANDGATE_CONTROL");

	if (override)
		return override;
	return env && *env ? env : CLIENT_DEFAULT_SOCKET;
}

static int client_connect(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int ret = -errno;

		snprintf(err, errlen, "cannot connect to %s: %s (is sandgated running?)", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	return fd;
}

static int read_reply(int fd, json_t **reply, char *err, size_t errlen)
{
	char *buf = malloc(CONTROL_LINE_MAX + 1), *nl = NULL;
	size_t len = 0;
	ssize_t n;
	json_error_t jerr;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	while (!nl && len < CONTROL_LINE_MAX) {
		n = read(fd, buf + len, CONTROL_LINE_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "the daemon closed the connection without a reply");
			ret = -ECONNRESET;
			goto out;
		}
		nl = memchr(buf + len, '\n', (size_t)n);
		len += (size_t)n;
	}
	*reply = json_loadb(buf, nl ? (size_t)(nl - buf) : len, 0, &jerr);
	if (!*reply) {
		snprintf(err, errlen, "malformed reply from the daemon: %s", jerr.text);
		ret = -EPROTO;
	}
out:
	free(buf);
	return ret;
}

static int send_request(int fd, const char *verb, json_t *args, const char *actor)
{
	json_t *req = json_pack("{s:s,s:O,s:s?}", "verb", verb, "args",
				args ? args : json_object(), "actor", actor);
	char *s = req ? json_dumps(req, JSON_COMPACT) : NULL;
	size_t len, off = 0;
	ssize_t n;
	int ret = 0;

	if (!args)
		json_decref(json_object_get(req, "args"));
	if (!s) {
		json_decref(req);
		return -ENOMEM;
	}
	len = strlen(s);
	s[len++] = '\n';   /* replaces the NUL: written by length */
	while (off < len && ret == 0) {
		/* MSG_NOSIGNAL: a daemon that refused us has closed; its reply is still there. */
		n = send(fd, s + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			ret = -errno;
		else
			off += (size_t)n;
	}
	free(s);
	json_decref(req);
	return ret;
}

int client_open(const char *socket_path, char *err, size_t errlen)
{
	return client_connect(socket_path, err, errlen);
}

int client_call_fd(int fd, const char *verb, json_t *args, const char *actor,
		   json_t **result, char *err, size_t errlen)
{
	json_t *reply = NULL, *ok, *msg;
	int ret;

	ret = send_request(fd, verb, args, actor);
	/* Even when sending failed, a refusal may be waiting to be read. */
	if (read_reply(fd, &reply, err, errlen) == 0)
		ret = 0;
	else if (ret)
		snprintf(err, errlen, "cannot send to the daemon: %s", strerror(-ret));
	else
		ret = -ECONNRESET;
	if (ret)
		return ret;
	ok = json_object_get(reply, "ok");
	if (!json_is_true(ok)) {
		msg = json_object_get(reply, "error");
		snprintf(err, errlen, "%s", json_is_string(msg) ? json_string_value(msg)
								  : "request failed");
		json_decref(reply);
		return -EREMOTEIO;
	}
	*result = json_incref(json_object_get(reply, "result"));
	json_decref(reply);
	return 0;
}

int client_call(const char *socket_path, const char *verb, json_t *args, const char *actor,
		json_t **result, char *err, size_t errlen)
{
	int fd = client_connect(socket_path, err, errlen), ret;

	if (fd < 0)
		return fd;
	ret = client_call_fd(fd, verb, args, actor, result, err, errlen);
	close(fd);
	return ret;
}
