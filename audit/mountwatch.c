/*
 * Mounts in the sessions' own mount namespaces (`unshare -m`, container runtimes), by
 * polling /proc/PID/mountinfo of one process per namespace once a second and diffing.
 * The connector thread notes each namespace a session process execs in; the fanotify
 * thread polls. A namespace's first reading is compared with the daemon's own mounts,
 * so what the session mounted before the first poll is still reported. A mount that
 * comes and goes between two polls is not seen (pid is null: polling cannot tell who).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit_int.h"
#include "journal/event.h"

#define MNTNS_MAX 64
#define MOUNTS_MAX 4096
#define MOUNTINFO_MAX (1 << 20)

struct mntns {
	uint64_t ns;                 /* 0: free */
	pid_t pid;                   /* a session process living in it */
	char sid[SESSION_ID_MAX + 1];
	struct mount_entry *v;       /* the last reading (fanotify thread only) */
	size_t n;
};

struct mntwatch {
	pthread_mutex_t mu;          /* guards pending[] */
	struct mntns pending[MNTNS_MAX];
	uint64_t self_ns;
	struct mntns ns[MNTNS_MAX];  /* fanotify thread only */
	struct mount_entry *self_v;  /* the daemon's own mounts: first-reading baseline */
	size_t self_n;
};

static int read_mounts(const char *path, struct mount_entry **out, size_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = malloc(MOUNTINFO_MAX);
	size_t len = 0, start = 0;
	ssize_t got = 1;
	int ret = 0;

	*out = calloc(MOUNTS_MAX, sizeof(**out));
	*n = 0;
	if (fd < 0 || !buf || !*out) {
		ret = fd < 0 ? -ESRCH : -ENOMEM;
		goto out;
	}
	while (len < MOUNTINFO_MAX && (got = read(fd, buf + len, MOUNTINFO_MAX - len)) > 0)
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
	if (fd >= 0)
		close(fd);
	free(buf);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
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
	w->self_ns = stat("/proc/self/ns/mnt", &st) == 0 ? (uint64_t)st.st_ino : 0;
	ret = read_mounts("/proc/self/mountinfo", &w->self_v, &w->self_n);
	if (ret) {
		mntwatch_free(w);
		return ret;
	}
	*out = w;
	return 0;
}

void mntwatch_free(struct mntwatch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < MNTNS_MAX; i++)
		free(w->ns[i].v);
	free(w->self_v);
	pthread_mutex_destroy(&w->mu);
	free(w);
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
	if (i < MNTNS_MAX) {
		w->pending[i].ns = ns;
		w->pending[i].pid = pid;
		snprintf(w->pending[i].sid, sizeof(w->pending[i].sid), "%s", sid);
	}
	pthread_mutex_unlock(&w->mu);
}

static bool same_mount(const struct mount_entry *a, const struct mount_entry *b)
{
	return strcmp(a->target, b->target) == 0 && strcmp(a->fstype, b->fstype) == 0 &&
	       strcmp(a->source, b->source) == 0;
}

static bool contains(const struct mount_entry *v, size_t n, const struct mount_entry *m)
{
	for (size_t i = 0; i < n; i++)
		if (same_mount(&v[i], m))
			return true;
	return false;
}

static void emit_mount(const char *type, const struct mntns *e, const struct mount_entry *m)
{
	struct event *ev = event_new(type, e->sid, EVENT_SRC_KERNEL);

	if (!ev)
		return;
	event_str(ev, "target", m->target);
	event_str(ev, "source", m->source);
	event_str(ev, "fstype", m->fstype);
	event_null(ev, "pid");   /* polling sees the mount, not who made it */
	event_uint(ev, "mnt_ns", e->ns);
	(void)event_emit(ev);
}

/* Emits what changed from (old, on) to (nv, nn) for namespace e. */
static void diff(const struct mntns *e, const struct mount_entry *old, size_t on,
		 const struct mount_entry *nv, size_t nn)
{
	for (size_t i = 0; i < nn; i++)
		if (!contains(old, on, &nv[i]))
			emit_mount("file.mount", e, &nv[i]);
	for (size_t i = 0; i < on; i++)
		if (!contains(nv, nn, &old[i]))
			emit_mount("file.unmount", e, &old[i]);
}

/* Moves the namespaces noted since the last poll into ns[]. */
static void take_pending(struct mntwatch *w)
{
	struct mntns got[MNTNS_MAX];
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
			if (w->ns[j].ns == 0 || w->ns[j].pid == 0)
				k = j;
		if (k == MNTNS_MAX)
			continue;   /* full of live namespaces: this one is not watched */
		if (w->ns[k].ns != got[i].ns) {
			free(w->ns[k].v);
			w->ns[k] = (struct mntns){ .ns = got[i].ns };
		}
		w->ns[k].pid = got[i].pid;
		memcpy(w->ns[k].sid, got[i].sid, sizeof(got[i].sid));
	}
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

void mntwatch_poll(struct mntwatch *w)
{
	struct mount_entry *nv;
	char path[48];
	size_t nn;

	if (!w)
		return;
	take_pending(w);
	for (size_t i = 0; i < MNTNS_MAX; i++) {
		struct mntns *e = &w->ns[i];

		if (e->ns == 0 || e->pid == 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)e->pid);
		if (read_mounts(path, &nv, &nn) != 0) {
			e->pid = 0;   /* keep the reading: another of its processes may come */
			continue;
		}
		if (!e->v)
			refresh_self(w);   /* host mounts made since start are not the session's */
		if (e->v)
			diff(e, e->v, e->n, nv, nn);
		else
			diff(e, w->self_v, w->self_n, nv, nn);
		free(e->v);
		e->v = nv;
		e->n = nn;
	}
}
