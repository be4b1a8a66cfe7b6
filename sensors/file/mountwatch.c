/*
 * Mounts in the sessions' own mount namespaces (`unshare -m`, container runtimes), by
 * polling /proc/PID/mountinfo of one process per namespace once a second and diffing.
 * The connector thread notes each namespace a session process execs in; the fanotify
 * thread polls. A namespace's first reading is compared with the daemon's own mounts,
 * so what the session mounted before the first poll is still reported. Where the kernel
 * has fanotify mount events (6.15+, mntfan.c), each noted namespace is also marked
 * and an attach or detach makes the fanotify thread read the namespaces at once: a mount
 * that lives a few milliseconds is seen, and a lone event names the mounting pid.
 * Without them, a mount that comes and goes between two polls is not seen, and pid is
 * null (polling cannot tell who).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sensors/file/fan_int.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "journal/event.h"

#define MNTNS_MAX 64
#define MOUNTS_MAX 4096
#define MOUNTINFO_MAX (1 << 20)
/* A namespace's mountinfo is held open (and the namespace with it) this long after its
 * noted process is gone: the unmount just before a namespace's last process exits, or a
 * mount by a short-lived process, is still read. */
#define NS_GRACE_NS 2000000000ull

struct mntns {
	uint64_t ns;                 /* 0: free */
	pid_t pid;                   /* a session process living in it */
	char sid[SESSION_ID_MAX + 1];
	struct mount_entry *v;       /* the last reading (fanotify thread only) */
	size_t n;
	bool has_fd;                 /* fd: the namespace's mountinfo, opened through pid */
	int fd;
	int nsfd;                    /* with has_fd: the namespace itself, or -1 */
	uint64_t gone_ns;            /* when pid was found gone (monotonic); 0: alive */
};

#define MNT_HINTS 16

/* The fanotify mount events of one read: who, and which kind. */
struct mnt_hint {
	size_t n;                    /* events read (more than MNT_HINTS: only n is known) */
	pid_t pid[MNT_HINTS];
	bool attach[MNT_HINTS];
};

struct mntwatch {
	pthread_mutex_t mu;          /* guards pending[] */
	struct mntns pending[MNTNS_MAX];
	uint64_t self_ns;
	struct mntns ns[MNTNS_MAX];  /* fanotify thread only */
	struct mount_entry *self_v;  /* the daemon's own mounts: first-reading baseline */
	size_t self_n;
	int fan;                     /* fanotify mount-event group; -1: polling only */
	int fan_host;                /* another for the daemon's own namespace: its events
				      * (any host process's) do not blur a session's */
	struct {
		uint64_t ns;
		pid_t pid;           /* the process the mark was made through */
	} marked[MNTNS_MAX];         /* namespaces marked recently (under mu), a ring */
	size_t marked_next;
	uint64_t watched[MNTNS_MAX]; /* ns[]'s namespaces, for the connector thread (under mu) */
	uint64_t turned_away;        /* namespaces not watched, more than MNTNS_MAX (under mu) */
	bool warned;
	struct mntns host;           /* the daemon's own namespace (fanotify thread only) */
	struct mntwatch_hooks hooks;
};

/* Reads an open mountinfo from its start (it stays readable, and its namespace alive,
 * after the process it was opened through has exited). */
static int read_mounts_fd(int fd, struct mount_entry **out, size_t *n)
{
	char *buf = malloc(MOUNTINFO_MAX);
	size_t len = 0, start = 0;
	ssize_t got = 1;
	int ret = 0;

	*out = calloc(MOUNTS_MAX, sizeof(**out));
	*n = 0;
	if (!buf || !*out) {
		ret = -ENOMEM;
		goto out;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		got = -1;
	while (got > 0 && len < MOUNTINFO_MAX && (got = read(fd, buf + len, MOUNTINFO_MAX - len)) > 0)
		len += (size_t)got;
	if (got < 0)
		ret = -ESRCH;
	for (size_t i = 0; ret == 0 && i < len && *n < MOUNTS_MAX; i++) {
		if (buf[i] != '\n')
			continue;
		if (mountinfo_line(buf + start, i - start, &(*out)[*n]) == 0)
			(*n)++;
		start = i + 1;
	}
out:
	free(buf);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

static int read_mounts(const char *path, struct mount_entry **out, size_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0) {
		*out = NULL;
		*n = 0;
		return -ESRCH;
	}
	ret = read_mounts_fd(fd, out, n);
	close(fd);
	return ret;
}

static void ns_close(struct mntns *e)
{
	if (e->has_fd) {
		close(e->fd);
		if (e->nsfd >= 0)
			close(e->nsfd);
	}
	e->has_fd = false;
}

/*
 * Opens the mountinfo and the mount namespace of pid (in namespace ns) into e. Both keep
 * the namespace and its mounts alive after pid, and every other process in it, is gone:
 * a mount made and written by a process that exits at once is still read, and its
 * filesystem cloned and caught up through nsfd (setns), not through a pid that is gone.
 */
static void ns_open(struct mntns *e, uint64_t ns, pid_t pid)
{
	char path[48];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	e->has_fd = e->fd >= 0;
	if (!e->has_fd)
		return;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	e->nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->nsfd >= 0 && (fstat(e->nsfd, &st) != 0 || (uint64_t)st.st_ino != ns)) {
		close(e->nsfd);   /* pid was reused between the two opens */
		e->nsfd = -1;
	}
}

uint64_t mntns_of(const char *nslink)
{
	const char *p = strchr(nslink, '[');

	return p ? strtoull(p + 1, NULL, 10) : 0;
}

int mntwatch_new(struct mntwatch **out)
{
	struct mntwatch *w = calloc(1, sizeof(*w));
	struct stat st;
	int ret;

	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->mu, NULL);
	w->fan = mntfan_open();
	if (w->fan < 0)
		w->fan = -1;
	w->self_ns = stat("/proc/self/ns/mnt", &st) == 0 ? (uint64_t)st.st_ino : 0;
	ret = read_mounts("/proc/self/mountinfo", &w->self_v, &w->self_n);
	if (ret == 0)
		ret = read_mounts("/proc/self/mountinfo", &w->host.v, &w->host.n);
	if (ret) {
		mntwatch_free(w);
		return ret;
	}
	/* The host's namespace too: a tmpfs mounted there after start is the session's to
	 * write when the session shares it. */
	w->host.ns = w->self_ns;
	w->host.pid = getpid();
	w->fan_host = w->fan >= 0 ? mntfan_open() : -1;
	if (w->fan_host < 0)
		w->fan_host = -1;
	if (w->fan_host >= 0)
		(void)mntfan_mark(w->fan_host, w->host.pid);   /* refused: polling reads it */
	*out = w;
	return 0;
}

void mntwatch_free(struct mntwatch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < MNTNS_MAX; i++) {
		free(w->ns[i].v);
		ns_close(&w->ns[i]);
		ns_close(&w->pending[i]);
	}
	free(w->self_v);
	free(w->host.v);
	if (w->fan >= 0)
		close(w->fan);
	if (w->fan_host >= 0)
		close(w->fan_host);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

int mntwatch_fd(const struct mntwatch *w)
{
	return w ? w->fan : -1;
}

int mntwatch_host_fd(const struct mntwatch *w)
{
	return w ? w->fan_host : -1;
}

/*
 * Under mu: marks ns (pid lives in it) for mount events. A namespace's mark goes with
 * it, and the kernel reuses namespace inode numbers: a namespace counts as marked only
 * while the process the mark was made through lives (marking again only renews it).
 * True when it marked.
 */
static bool mark_ns(struct mntwatch *w, uint64_t ns, pid_t pid)
{
	size_t i;

	if (w->fan < 0)
		return false;
	for (i = 0; i < MNTNS_MAX && w->marked[i].ns != ns; i++)
		;
	if (i < MNTNS_MAX && (kill(w->marked[i].pid, 0) == 0 || errno != ESRCH))
		return false;
	if (mntfan_mark(w->fan, pid) != 0)
		return false;   /* gone already, or not permitted: the poll still reads it */
	if (i == MNTNS_MAX) {
		i = w->marked_next;
		w->marked_next = (w->marked_next + 1) % MNTNS_MAX;
	}
	w->marked[i].ns = ns;
	w->marked[i].pid = pid;
	return true;
}

/* Under mu: whether ns is one of ns[] (as of the last poll). */
static bool watched(const struct mntwatch *w, uint64_t ns)
{
	for (size_t i = 0; i < MNTNS_MAX; i++)
		if (w->watched[i] == ns)
			return true;
	return false;
}

void mntwatch_note(struct mntwatch *w, uint64_t ns, pid_t pid, const char *sid)
{
	size_t i, free_at = MNTNS_MAX;

	if (!w || ns == 0 || ns == w->self_ns)
		return;   /* the host's namespace: its mounts are not the session's own */
	pthread_mutex_lock(&w->mu);
	for (i = 0; i < MNTNS_MAX && w->pending[i].ns != ns; i++)
		if (w->pending[i].ns == 0 && free_at == MNTNS_MAX)
			free_at = i;
	if (i == MNTNS_MAX)
		i = free_at;
	if (i == MNTNS_MAX && !watched(w, ns))
		w->turned_away++;   /* a new namespace, and no room to note it: reported */
	if (i < MNTNS_MAX) {
		w->pending[i].ns = ns;
		w->pending[i].pid = pid;
		snprintf(w->pending[i].sid, sizeof(w->pending[i].sid), "%s", sid);
	}
	/* The namespace is held from here, while pid surely lives (pid may be a mount(8)
	 * that is gone by the time its event is read, and the namespace with it when pid was
	 * its last process): once per poll interval, marked or not (a mark can be refused). */
	(void)mark_ns(w, ns, pid);
	if (i < MNTNS_MAX && !w->pending[i].has_fd)
		ns_open(&w->pending[i], ns, pid);
	pthread_mutex_unlock(&w->mu);
}

/* The same filesystem (st_dev) at the same place: a new tmpfs at a path the host also
 * has (a session namespace's own /dev/shm) is another mount, not the host's. */
static bool same_mount(const struct mount_entry *a, const struct mount_entry *b)
{
	return strcmp(a->target, b->target) == 0 && strcmp(a->fstype, b->fstype) == 0 &&
	       strcmp(a->source, b->source) == 0 && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor;
}

static bool contains(const struct mount_entry *v, size_t n, const struct mount_entry *m)
{
	for (size_t i = 0; i < n; i++)
		if (same_mount(&v[i], m))
			return true;
	return false;
}

static void emit_mount(const char *type, const struct mntns *e, const struct mount_entry *m,
		       pid_t pid)
{
	struct event *ev = event_new(type, e->sid[0] ? e->sid : NULL, EVENT_SRC_KERNEL);

	if (!ev)
		return;
	event_str(ev, "target", m->target);
	event_str(ev, "device", m->source);
	event_str(ev, "fstype", m->fstype);
	if (pid > 0)
		event_int(ev, "pid", pid);
	else
		event_null(ev, "pid");   /* polling sees the mount, not who made it */
	event_uint(ev, "mnt_ns", e->ns);
	(void)event_emit(ev);
}

/* The mounts of (a, an) that (b, bn) does not have. */
static size_t missing(const struct mount_entry *a, size_t an, const struct mount_entry *b,
		      size_t bn)
{
	size_t c = 0;

	for (size_t i = 0; i < an; i++)
		c += !contains(b, bn, &a[i]);
	return c;
}

/*
 * Emits what changed from (old, on) to (nv, nn) for namespace e. h names the process
 * of a lone fanotify event: it is given to the one mount (attach) or unmount (detach)
 * of the reading, when there is exactly one of that kind.
 */
static bool dev_used(const struct mount_entry *v, size_t n, const struct mount_entry *m)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].dev_major == m->dev_major && v[i].dev_minor == m->dev_minor)
			return true;
	return false;
}

/* Whether a filesystem is still mounted in a namespace we read (the host's or one a
 * session lives in), other than the reading nv of the namespace at hand. */
static bool dev_in_use(const struct mntwatch *w, const struct mntns *e,
		       const struct mount_entry *nv, size_t nn, const struct mount_entry *m)
{
	if (dev_used(nv, nn, m) || (e != &w->host && dev_used(w->host.v, w->host.n, m)))
		return true;
	for (size_t i = 0; i < MNTNS_MAX; i++)
		if (&w->ns[i] != e && w->ns[i].ns && dev_used(w->ns[i].v, w->ns[i].n, m))
			return true;
	return false;
}

/* The session of the host namespace's mounting process, when it is a session's. */
static const struct mntns *who(const struct mntwatch *w, const struct mntns *e, pid_t pid,
			       struct mntns *tmp)
{
	if (e != &w->host || pid <= 0 || !w->hooks.session_of)
		return e;
	memset(tmp, 0, sizeof(*tmp));
	tmp->ns = e->ns;
	if (!w->hooks.session_of(w->hooks.ctx, pid, tmp->sid, sizeof(tmp->sid)))
		return e;
	return tmp;
}

static uint64_t ns_of_pid(pid_t pid)
{
	char p[48];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	return stat(p, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/*
 * The process behind the one change of a kind (attach) in namespace ns: the event of
 * that kind whose process lives in ns; failing that (the process is gone already, as
 * mount(8) often is), the only event of that kind in the read. 0: not known.
 */
static pid_t hint_pid(const struct mnt_hint *h, bool attach, uint64_t ns)
{
	pid_t only = 0;
	size_t kind = 0;

	if (!h || h->n > MNT_HINTS)
		return 0;
	for (size_t i = 0; i < h->n; i++) {
		uint64_t pns;

		if (h->attach[i] != attach || h->pid[i] <= 0)
			continue;
		kind++;
		pns = ns_of_pid(h->pid[i]);
		if (pns == ns)
			return h->pid[i];
		if (pns == 0)
			only = h->pid[i];
	}
	return kind == 1 ? only : 0;
}

static void diff(const struct mntwatch *w, const struct mntns *e,
		 const struct mount_entry *old, size_t on,
		 const struct mount_entry *nv, size_t nn, const struct mnt_hint *h)
{
	struct mntns tmp;
	pid_t pm = 0, pu = 0;

	if (missing(nv, nn, old, on) == 1)
		pm = hint_pid(h, true, e->ns);
	if (missing(old, on, nv, nn) == 1)
		pu = hint_pid(h, false, e->ns);
	for (size_t i = 0; i < nn; i++) {
		if (contains(old, on, &nv[i]))
			continue;
		const struct mntns *by = who(w, e, pm, &tmp);

		emit_mount("file.mount", by, &nv[i], pm);
		if (w->hooks.mounted && !nv[i].ro)
			w->hooks.mounted(w->hooks.ctx, e == &w->host ? 0 : e->pid,
					 e != &w->host && e->has_fd ? e->nsfd : -1, by->sid, &nv[i]);
	}
	for (size_t i = 0; i < on; i++) {
		if (contains(nv, nn, &old[i]))
			continue;
		emit_mount("file.unmount", who(w, e, pu, &tmp), &old[i], pu);
		if (w->hooks.unmounted && !dev_in_use(w, e, nv, nn, &old[i]))
			w->hooks.unmounted(w->hooks.ctx, &old[i]);
	}
}

/* Moves the namespaces noted since the last poll into ns[]. */
static void take_pending(struct mntwatch *w)
{
	struct mntns got[MNTNS_MAX];
	uint64_t over = 0;
	size_t i, k;

	pthread_mutex_lock(&w->mu);
	memcpy(got, w->pending, sizeof(got));
	memset(w->pending, 0, sizeof(w->pending));
	pthread_mutex_unlock(&w->mu);
	for (i = 0; i < MNTNS_MAX; i++) {
		if (got[i].ns == 0)
			continue;
		for (k = 0; k < MNTNS_MAX && w->ns[k].ns != got[i].ns; k++)
			;
		for (size_t j = 0; k == MNTNS_MAX && j < MNTNS_MAX; j++)
			if (w->ns[j].ns == 0 || (w->ns[j].pid == 0 && !w->ns[j].has_fd))
				k = j;
		if (k == MNTNS_MAX) {
			ns_close(&got[i]);
			over++;     /* full of live namespaces: this one is not watched */
			continue;
		}
		if (w->ns[k].ns != got[i].ns) {
			free(w->ns[k].v);
			ns_close(&w->ns[k]);
			w->ns[k] = (struct mntns){ .ns = got[i].ns };
		}
		w->ns[k].pid = got[i].pid;
		w->ns[k].gone_ns = 0;
		if (got[i].has_fd) {
			/* Opened at a note this interval: newer than what is held. */
			ns_close(&w->ns[k]);
			w->ns[k].fd = got[i].fd;
			w->ns[k].nsfd = got[i].nsfd;
			w->ns[k].has_fd = true;
		}
		memcpy(w->ns[k].sid, got[i].sid, sizeof(got[i].sid));
	}
	pthread_mutex_lock(&w->mu);
	for (i = 0; i < MNTNS_MAX; i++)
		w->watched[i] = w->ns[i].ns;
	w->turned_away += over;
	pthread_mutex_unlock(&w->mu);
}

uint64_t mntwatch_take_turned_away(struct mntwatch *w)
{
	uint64_t n;

	pthread_mutex_lock(&w->mu);
	n = w->turned_away;
	w->turned_away = 0;
	pthread_mutex_unlock(&w->mu);
	return n;
}

/* The namespaces turned away since the last report: one sensor.loss, a warning once. */
static void report_turned_away(struct mntwatch *w)
{
	char why[200];
	uint64_t n = mntwatch_take_turned_away(w);

	if (n == 0)
		return;
	snprintf(why, sizeof(why), "more than %d session mount namespaces at once: a new "
		 "one was not watched (its mounts not read, its filesystems not marked)",
		 MNTNS_MAX);
	if (audit_emit_loss("mountwatch", (int64_t)n, why) != 0 || !w->warned)
		log_warnx("audit: %s (%llu)", why, (unsigned long long)n);
	w->warned = true;
}

static void refresh_self(struct mntwatch *w)
{
	struct mount_entry *v;
	size_t n;

	if (read_mounts("/proc/self/mountinfo", &v, &n) != 0)
		return;
	free(w->self_v);
	w->self_v = v;
	w->self_n = n;
}

/* Reads every watched namespace and reports what changed; h: see diff(), or NULL. */
/* Closes e's mountinfo once its noted process has been gone NS_GRACE_NS. */
static void ns_let_go(struct mntns *e)
{
	uint64_t now;

	if (e->pid > 0 && (kill(e->pid, 0) == 0 || errno != ESRCH))
		return;
	now = time_mono_ns();
	if (!e->gone_ns)
		e->gone_ns = now;
	if (now - e->gone_ns < NS_GRACE_NS)
		return;
	ns_close(e);
	e->pid = 0;
}

/* The host's namespace: its mounts since start. */
static void poll_host(struct mntwatch *w, const struct mnt_hint *h)
{
	struct mount_entry *nv;
	size_t nn;

	if (read_mounts("/proc/self/mountinfo", &nv, &nn) != 0)
		return;
	diff(w, &w->host, w->host.v, w->host.n, nv, nn, h);
	free(w->host.v);
	w->host.v = nv;
	w->host.n = nn;
}

void mntwatch_set_hooks(struct mntwatch *w, const struct mntwatch_hooks *h)
{
	if (w)
		w->hooks = *h;
}

/* h: hints for the sessions' namespaces, hh: for the host's. */
static void poll_all(struct mntwatch *w, const struct mnt_hint *h, const struct mnt_hint *hh)
{
	struct mount_entry *nv;
	size_t nn;

	poll_host(w, hh);
	take_pending(w);
	for (size_t i = 0; i < MNTNS_MAX; i++) {
		struct mntns *e = &w->ns[i];

		if (e->ns == 0 || (e->pid == 0 && !e->has_fd))
			continue;
		if (!e->has_fd)
			ns_open(e, e->ns, e->pid);
		if (!e->has_fd || read_mounts_fd(e->fd, &nv, &nn) != 0) {
			ns_close(e);
			e->pid = 0;   /* keep the reading: another of its processes may come */
			continue;
		}
		if (!e->v)
			refresh_self(w);   /* host mounts made since start are not the session's */
		if (e->v)
			diff(w, e, e->v, e->n, nv, nn, h);
		else
			diff(w, e, w->self_v, w->self_n, nv, nn, h);
		free(e->v);
		e->v = nv;
		e->n = nn;
		ns_let_go(e);
	}
}

void mntwatch_poll(struct mntwatch *w)
{
	if (w && w->fan >= 0)
		mntwatch_on_event(w);   /* pending mount events first: their hint goes with */
	else if (w)
		poll_all(w, NULL, NULL);
	if (w)
		report_turned_away(w);
}

static void read_hints(int fd, struct mnt_hint *h)
{
	bool overflow = false;

	h->n = fd >= 0 ? mntfan_read_all(fd, h->pid, h->attach, MNT_HINTS, &overflow) : 0;
	if (overflow && audit_emit_loss("fanotify_mount", -1, "mount event queue overflow") != 0)
		log_warnx("audit: could not record a mount event overflow");
}

void mntwatch_on_event(struct mntwatch *w)
{
	struct mnt_hint h, hh;

	if (!w || w->fan < 0)
		return;
	read_hints(w->fan, &h);
	read_hints(w->fan_host, &hh);
	poll_all(w, h.n ? &h : NULL, hh.n ? &hh : NULL);
}
