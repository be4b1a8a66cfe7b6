/* The control socket's listener and connections (protocol in control.h). */
#include "daemon/control.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "journal/event.h"

#define MAX_VERBS 64
#define MAX_GROUPS 256

struct verb {
	char name[CONTROL_VERB_MAX];
	control_verb_fn fn;
	void *ctx;
};

struct conn {
	struct control *c;
	struct control_peer peer;
	char *buf;
	size_t len;
	bool discarding;              /* inside an oversized request: skip to its newline */
	struct conn *next;
};

struct control {
	struct loop *loop;
	int lfd;
	char *path;
	char *session_prefix;
	gid_t group;
	bool have_group;
	struct verb verbs[MAX_VERBS];
	size_t nverbs;
	control_peer_fn peer_fn;      /* the sessions' ancestry test, or NULL */
	void *peer_ctx;
	struct conn *conns;
};

static void conn_close(struct conn *cn)
{
	struct conn **pp;

	loop_del(cn->c->loop, cn->peer.fd);
	close(cn->peer.fd);
	for (pp = &cn->c->conns; *pp; pp = &(*pp)->next) {
		if (*pp == cn) {
			*pp = cn->next;
			break;
		}
	}
	free(cn->buf);
	free(cn);
}

static void send_json(int fd, json_t *obj)
{
	char *s = json_dumps(obj, JSON_COMPACT);
	size_t len, off = 0;
	ssize_t n;

	if (!s)
		return;
	len = strlen(s);
	s[len] = '\0';
	while (off < len) {
		n = write(fd, s + off, len - off);
		if (n <= 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (off == len && write(fd, "\n", 1) != 1)
		(void)0;   /* the peer went away: nothing to tell it */
	free(s);
}

/* code: a stable name a client can act on (docs/control-protocol.md); msg for people. */
static void send_error(int fd, const char *code, const char *msg)
{
	json_t *o = json_pack("{s:b,s:s,s:s}", "ok", 0, "error", msg, "code", code);

	if (o)
		send_json(fd, o);
	json_decref(o);
}

static const struct verb *find_verb(const struct control *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nverbs; i++)
		if (strcmp(c->verbs[i].name, name) == 0)
			return &c->verbs[i];
	return NULL;
}

static void dispatch(struct conn *cn, const char *line, size_t len)
{
	struct control_request req;
	const struct verb *v;
	json_t *result = NULL, *resp;
	char err[512] = "";
	int ret;

	if (control_parse_request(line, len, &req, err, sizeof(err)) < 0) {
		send_error(cn->peer.fd, "bad_request", err);
		return;
	}
	v = find_verb(cn->c, req.verb);
	if (!v) {
		snprintf(err, sizeof(err), "unknown verb \"%s\"", req.verb);
		send_error(cn->peer.fd, "unknown_verb", err);
		goto out;
	}
	ret = v->fn(v->ctx, &cn->peer, &req, &result, err, sizeof(err));
	if (ret < 0) {
		if (!err[0])
			snprintf(err, sizeof(err), "%s: %s", req.verb, strerror(-ret));
		send_error(cn->peer.fd, control_error_code(ret), err);
		goto out;
	}
	resp = json_pack("{s:b,s:o}", "ok", 1, "result", result ? result : json_object());
	if (resp)
		send_json(cn->peer.fd, resp);
	json_decref(resp);
out:
	control_request_free(&req);
}

/*
 * An oversized request is read to its end and dropped before the error is sent: closing
 * on a client still writing would make it see EPIPE instead of the reason.
 */
static bool skip_oversized(struct conn *cn)
{
	char *nl = memchr(cn->buf, '\n', cn->len);
	size_t used;

	if (!nl) {
		cn->len = 0;
		return false;
	}
	used = (size_t)(nl - cn->buf) + 1;
	memmove(cn->buf, cn->buf + used, cn->len - used);
	cn->len -= used;
	cn->discarding = false;
	send_error(cn->peer.fd, "too_large", "request too large");
	return true;
}

/* Runs every complete request in the buffer; what is left is a partial line. */
static void dispatch_lines(struct conn *cn)
{
	char *nl;
	size_t used;

	for (;;) {
		if (cn->discarding) {
			if (!skip_oversized(cn))
				return;
			continue;
		}
		nl = memchr(cn->buf, '\n', cn->len);
		if (!nl)
			break;
		used = (size_t)(nl - cn->buf) + 1;
		dispatch(cn, cn->buf, used - 1);
		memmove(cn->buf, cn->buf + used, cn->len - used);
		cn->len -= used;
	}
	if (cn->len > CONTROL_LINE_MAX) {
		cn->discarding = true;
		skip_oversized(cn);
	}
}

static void on_readable(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct conn *cn = ctx;
	char *grown;
	ssize_t n;

	(void)l;
	(void)events;
	grown = realloc(cn->buf, cn->len + 65536);
	if (!grown)
		goto close;
	cn->buf = grown;
	n = read(fd, cn->buf + cn->len, 65536);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (cn->discarding)
			send_error(fd, "too_large", "request too large");
		goto close;
	}
	cn->len += (size_t)n;
	dispatch_lines(cn);
	return;
close:
	conn_close(cn);
}

static int read_proc_cgroup(pid_t pid, char *buf, size_t len, size_t *got)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len);
	close(fd);
	if (n < 0)
		return -errno;
	*got = (size_t)n;
	return 0;
}

static bool peer_in_group(const struct control *c, int fd, const struct ucred *cr)
{
	gid_t groups[MAX_GROUPS];
	socklen_t len = sizeof(groups);
	size_t i;

	if (!c->have_group)
		return false;
	if (cr->gid == c->group)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == c->group)
			return true;
	return false;
}

/* Who may talk to us: root or the group, and never a process inside a session. */
static int check_peer(const struct control *c, int fd, const struct ucred *cr, char *why,
		      size_t len)
{
	char cg[4096];
	size_t got = 0;

	if (cr->uid != 0 && !peer_in_group(c, fd, cr)) {
		snprintf(why, len, "uid %u is neither root nor in the control group", cr->uid);
		return -EACCES;
	}
	if (read_proc_cgroup(cr->pid, cg, sizeof(cg), &got) < 0) {
		snprintf(why, len, "cannot read the cgroup of pid %d", (int)cr->pid);
		return -EACCES;
	}
	if (control_peer_in_session(cg, got, c->session_prefix) < 0) {
		snprintf(why, len, "pid %d runs inside a session cgroup", (int)cr->pid);
		return -EACCES;
	}
	/* A session's process moved out of its cgroup is still in its PID namespace (or
	 * one below it), and still in the fork tree the audit sensors followed. */
	if (c->peer_fn && c->peer_fn(c->peer_ctx, cr->pid, why, len) < 0)
		return -EACCES;
	return 0;
}

void control_set_peer_check(struct control *c, control_peer_fn fn, void *ctx)
{
	c->peer_fn = fn;
	c->peer_ctx = ctx;
}

static void log_denied(const struct ucred *cr, const char *why)
{
	struct event *e = event_new("control.denied", NULL, EVENT_SRC_SANDGATE);

	if (!e)
		return;
	event_int(e, "pid", cr->pid);
	event_int(e, "uid", cr->uid);
	event_int(e, "gid", cr->gid);
	event_str(e, "reason", why);
	event_emit(e);
}

static void on_accept(struct loop *l, int lfd, uint32_t events, void *ctx)
{
	static const struct timeval send_timeout = { .tv_sec = 2 };
	struct control *c = ctx;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	struct conn *cn;
	char why[256];
	int fd;

	(void)events;
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0 ||
	    check_peer(c, fd, &cr, why, sizeof(why)) < 0) {
		if (crlen == sizeof(cr))
			log_denied(&cr, why);
		send_error(fd, "denied", "permission denied");
		close(fd);
		return;
	}
	/* A client that stops reading must not stall the loop that serves everyone. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
	cn = calloc(1, sizeof(*cn));
	if (!cn || loop_add(l, fd, EPOLLIN, on_readable, cn) < 0) {
		free(cn);
		close(fd);
		return;
	}
	cn->c = c;
	cn->peer = (struct control_peer){ .uid = cr.uid, .gid = cr.gid, .pid = cr.pid, .fd = fd };
	cn->next = c->conns;
	c->conns = cn;
}

static int make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int bind_listener(struct control *c, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int ret;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: control socket path too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ret = make_parent(path);
	if (ret) {
		snprintf(err, errlen, "%s: cannot create its directory: %s", path, strerror(-ret));
		return ret;
	}
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->lfd < 0)
		goto fail;
	/* A stale socket from a crash would block bind; a live daemon holds its own path. */
	unlink(path);
	if (bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0660) < 0 || chown(path, 0, c->have_group ? c->group : 0) < 0 ||
	    listen(c->lfd, 64) < 0)
		goto fail;
	return 0;
fail:
	ret = -errno;
	snprintf(err, errlen, "%s: cannot listen: %s", path, strerror(errno));
	return ret;
}

int control_open(struct control **out, const struct control_settings *s, struct loop *l,
		 char *err, size_t errlen)
{
	struct control *c = calloc(1, sizeof(*c));
	struct group *gr;
	int ret;

	if (!c)
		return -ENOMEM;
	c->loop = l;
	c->lfd = -1;
	c->path = strdup(s->path);
	c->session_prefix = strdup(s->session_cgroup);
	if (!c->path || !c->session_prefix) {
		ret = -ENOMEM;
		goto fail;
	}
	gr = s->group ? getgrnam(s->group) : NULL;
	if (gr) {
		c->group = gr->gr_gid;
		c->have_group = true;
	}
	ret = bind_listener(c, s->path, err, errlen);
	if (ret == 0)
		ret = loop_add(l, c->lfd, EPOLLIN, on_accept, c);
	if (ret)
		goto fail;
	*out = c;
	return 0;
fail:
	control_close(c);
	return ret;
}

int control_register(struct control *c, const char *verb, control_verb_fn fn, void *ctx)
{
	struct verb *v;

	if (c->nverbs == MAX_VERBS || strlen(verb) >= CONTROL_VERB_MAX || find_verb(c, verb))
		return -EINVAL;
	v = &c->verbs[c->nverbs++];
	snprintf(v->name, sizeof(v->name), "%s", verb);
	v->fn = fn;
	v->ctx = ctx;
	return 0;
}

void control_close(struct control *c)
{
	if (!c)
		return;
	while (c->conns)
		conn_close(c->conns);
	if (c->lfd >= 0) {
		loop_del(c->loop, c->lfd);
		close(c->lfd);
		unlink(c->path);
	}
	free(c->path);
	free(c->session_prefix);
	free(c);
}
