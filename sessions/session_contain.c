/*
 * Sessions' containment in the daemon (contain/contain.h, docs/threat-model.md): each
 * session's holder (pid 1 of its namespaces) made at its first contained run, found
 * again after a restart, killed at its end; the check a contained command passes before
 * session.attach moves it in; and the control socket's test for session descendants.
 *
 * The holder lives in its own cgroup next to the session's (<parent>/.holder-ID, v2 and
 * the v1 controllers): it is made inside the session's cgroups, so its cgroup namespace
 * is rooted there, then moved out, so "populated 0" of the session still means that the
 * session's own processes are gone and its memory limit does not count the holder.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attribution/cgmap.h"
#include "common/log.h"
#include "sessions/session_int.h"

#define HOLDER_TIMEOUT_MS 5000
#define HOLDER_KILL_MS 2000
#define PIDNS_DEPTH 32
#define ANCESTRY_DEPTH 64

static void holder_cgroup(const struct sessions *ss, const struct session *s, char *out,
			  size_t len)
{
	snprintf(out, len, "%s/.holder-%s", ss->conf.session_prefix, s->id);
}

uint64_t sess_keep(const struct session *s)
{
	return contain_keep_default() | s->cap_add;
}

struct attach_ctx {
	struct sessions *ss;
	const struct session *s;
};

static int attach_holder(void *ctx, pid_t pid)
{
	struct attach_ctx *a = ctx;

	return cg_attach(&a->ss->cg, a->s->cgroup, a->s->v1_mask, pid);
}

/* The paths the holder needs, in bufs (kept alive by the caller through the spawn). */
struct setup_bufs {
	char cg1[3][512], exe[512], cli[560], sock[512];
};

static void add_cg1(struct contain_setup *su, struct setup_bufs *b, const struct cg_host *h,
		    unsigned mask)
{
	static const struct { unsigned bit; const char *name; } ctl[] = {
		{ CG_MEMORY, "memory" }, { CG_CPU, "cpu" }, { CG_PIDS, "pids" },
	};
	char path[512];
	size_t i;

	for (i = 0; i < 3; i++) {
		if (!(mask & ctl[i].bit))
			continue;
		snprintf(path, sizeof(path), "%s/%s", h->v1root, ctl[i].name);
		/* "cpu" is often a link to the "cpu,cpuacct" mount. */
		if (!realpath(path, b->cg1[su->n_cg1]))
			continue;
		su->cg1_mounts[su->n_cg1] = b->cg1[su->n_cg1];
		su->n_cg1++;
	}
}

/*
 * Sockets through which root reaches past any namespace: systemd's private socket and the
 * system bus (systemd-run starts a unit outside the session), container engines (a
 * privileged container), udev's control socket. Covered when present.
 */
static const char *const host_sockets[] = {
	"/run/systemd/private", "/run/dbus/system_bus_socket", "/run/docker.sock",
	"/run/containerd/containerd.sock", "/run/podman/podman.sock", "/run/udev/control",
};

static void fill_setup(const struct sessions *ss, const struct session *s,
		       struct contain_setup *su, struct setup_bufs *b)
{
	size_t i;
	ssize_t n;

	memset(su, 0, sizeof(*su));
	su->cg2_mount = ss->cg.v2root;
	add_cg1(su, b, &ss->cg, s->v1_mask);
	/* The journal, its keys and state, the session files; the control socket. */
	su->hide[su->n_hide++] = ss->conf.state_dir;
	su->hide[su->n_hide++] = ss->conf.control_socket;
	if (ss->conf.config_path)
		su->hide[su->n_hide++] = ss->conf.config_path;
	for (i = 0; i < sizeof(host_sockets) / sizeof(host_sockets[0]); i++)
		su->hide[su->n_hide++] = host_sockets[i];
	n = readlink("/proc/self/exe", b->exe, sizeof(b->exe) - 1);
	if (n > 0) {
		b->exe[n] = '\0';
		su->ro[su->n_ro++] = b->exe;
		/* The CLI next to the daemon: root on the host runs it. */
		snprintf(b->cli, sizeof(b->cli), "%.*s/sandgate",
			 (int)(strrchr(b->exe, '/') ? strrchr(b->exe, '/') - b->exe : 0), b->exe);
		su->ro[su->n_ro++] = b->cli;
	}
}

/* Moves the holder out of the session's cgroups into its own. */
static int holder_move_out(struct sessions *ss, struct session *s)
{
	static const struct session_limits none = { .memory = -1, .millicpus = -1,
						    .pids = -1, .disk = -1, .timeout_s = -1,
						    .net_rate = -1 };
	char rel[600], err[256];
	unsigned v1 = 0;
	int ret;

	holder_cgroup(ss, s, rel, sizeof(rel));
	ret = cg_create(&ss->cg, rel, &none, &v1, err, sizeof(err));
	if (ret == -EEXIST) {
		v1 = ss->cg.v1_mask;
		ret = 0;
	}
	if (ret == 0)
		ret = cg_attach(&ss->cg, rel, v1 & s->v1_mask, s->holder.pid);
	return ret;
}

int sess_holder_ensure(struct sessions *ss, struct session *s, char *err, size_t errlen)
{
	struct attach_ctx a = { ss, s };
	struct contain_setup su;
	struct setup_bufs *b;
	int ret;

	if (s->holder.pid > 0 && contain_holder_alive(&s->holder))
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	fill_setup(ss, s, &su, b);
	ret = contain_holder_spawn(&su, attach_holder, &a, HOLDER_TIMEOUT_MS, &s->holder, err,
				   errlen);
	free(b);
	if (ret) {
		memset(&s->holder, 0, sizeof(s->holder));
		return ret;
	}
	ret = holder_move_out(ss, s);
	if (ret) {
		snprintf(err, errlen, "session holder: cannot leave the session's cgroup: %s",
			 strerror(-ret));
		sess_holder_stop(ss, s);
	}
	return ret;
}

void sess_holder_stop(struct sessions *ss, struct session *s)
{
	char rel[600];
	int ret = 0;

	if (s->holder.pid > 0)
		ret = contain_holder_kill(&s->holder, HOLDER_KILL_MS);
	if (ret)
		log_errno(ret, "session %s: holder %d not killed", s->id, (int)s->holder.pid);
	memset(&s->holder, 0, sizeof(s->holder));
	holder_cgroup(ss, s, rel, sizeof(rel));
	cg_remove(&ss->cg, rel, ss->cg.v1_mask, false);
}

void sess_holder_adopt(struct sessions *ss, struct session *s)
{
	char rel[600];
	pid_t *pids = NULL;
	size_t n = 0;

	holder_cgroup(ss, s, rel, sizeof(rel));
	if (cg_pids(&ss->cg, rel, &pids, &n) == 0 && n == 1 &&
	    contain_holder_read(pids[0], &s->holder) < 0)
		memset(&s->holder, 0, sizeof(s->holder));
	free(pids);
	/* A terminated session keeps no holder; one left over is stopped. */
	if (s->state == SESSION_TERMINATED)
		sess_holder_stop(ss, s);
}

int sess_contain_check(struct sessions *ss, struct session *s, pid_t pid, char *err,
		       size_t errlen)
{
	char why[200] = "";
	int ret;

	(void)ss;
	if (s->holder.pid <= 0 || !contain_holder_alive(&s->holder)) {
		snprintf(err, errlen, "session %s has no holder: run session.contain first", s->id);
		return -EPERM;
	}
	ret = contain_verify(pid, &s->holder, sess_keep(s), why, sizeof(why));
	if (ret)
		snprintf(err, errlen, "pid %d is not contained (%s): session %s runs commands "
			 "contained unless created or run with --privileged", (int)pid, why, s->id);
	return ret;
}

static int read_proc(pid_t pid, const char *file, char *buf, size_t len, size_t *got)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
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

void sess_note_root(struct sessions *ss, const struct session *s, pid_t pid)
{
	struct attach_root *r = &ss->roots[ss->next_root++ % ATTACH_ROOTS];

	r->pid = pid;
	if (proc_starttime(pid, &r->start) < 0)
		r->pid = 0;
	snprintf(r->sid, sizeof(r->sid), "%s", s->id);
}

/* The session whose attached process pid (still the same process) is, or NULL. */
static const char *root_session(struct sessions *ss, pid_t pid)
{
	uint64_t start = 0;
	bool have = false;
	size_t i;

	for (i = 0; i < ATTACH_ROOTS; i++) {
		if (ss->roots[i].pid != pid)
			continue;
		if (!have && proc_starttime(pid, &start) < 0)
			return NULL;
		have = true;
		if (ss->roots[i].start == start)
			return ss->roots[i].sid;
	}
	return NULL;
}

static const struct session *session_of_pidns(struct sessions *ss, pid_t pid)
{
	uint64_t inos[PIDNS_DEPTH];
	int n = contain_pidns_chain(pid, inos, PIDNS_DEPTH), i;
	size_t j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < sessions_count(ss->reg); j++) {
			const struct session *s = sessions_at(ss->reg, j);

			if (s->holder.pid > 0 && s->holder.pidns == inos[i])
				return s;
		}
	}
	return NULL;
}

/*
 * The control socket's test: is pid in a session's PID namespace (or one below it), or
 * is it or one of its ancestors a process session.attach moved into a session, or is an
 * ancestor still in a session's cgroup? A contained command cannot leave its PID
 * namespace; a privileged one that moved itself out of its cgroup is still known by its
 * fork tree (unless it re-parented itself to init first: docs/threat-model.md).
 */
int sessions_peer_check(void *ctx, pid_t pid, char *why, size_t len)
{
	struct sessions *ss = ctx;
	const struct session *s = session_of_pidns(ss, pid);
	char buf[4096];
	size_t got = 0;
	const char *sid;
	pid_t p = pid, parent;
	int depth;

	if (s) {
		snprintf(why, len, "pid %d lives in session %s's pid namespace", (int)pid, s->id);
		return -EACCES;
	}
	for (depth = 0; p > 1 && depth < ANCESTRY_DEPTH; depth++) {
		sid = root_session(ss, p);
		if (sid) {
			snprintf(why, len, "pid %d descends from pid %d, run in session %s", (int)pid,
				 (int)p, sid);
			return -EACCES;
		}
		if (read_proc(p, "stat", buf, sizeof(buf), &got) < 0 ||
		    contain_stat_ppid(buf, got, &parent) < 0)
			break;
		p = parent;
		if (p <= 1 || read_proc(p, "cgroup", buf, sizeof(buf), &got) < 0)
			break;
		if (cgmap_proc_in_session(buf, got, ss->conf.session_prefix) < 0) {
			snprintf(why, len, "pid %d descends from pid %d, inside a session cgroup",
				 (int)pid, (int)p);
			return -EACCES;
		}
	}
	return 0;
}
