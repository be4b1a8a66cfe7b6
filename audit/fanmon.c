/*
 * The fanotify sensor: filesystem marks with FID + DFID_NAME (+ rename target) reporting,
 * one thread, one epoll (fanotify fd, stop eventfd, 1 s timer). Only pids the table ties
 * to a session are reported; the daemon's own pid is dropped first. Writes are coalesced
 * per (pid, file): one file.write at close-after-write, or after a second for a file
 * still open. Reads are reported only under the sensitive prefixes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "audit/fan_int.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "journal/event.h"

#ifndef FAN_RENAME
#define FAN_RENAME 0x10000000
#endif

struct pending {
	pid_t pid;                   /* 0: free */
	struct ptab_ent pe;
	struct fan_dfid d;           /* d.handle/d.name point into key */
	uint8_t key[FAN_PENDING_KEY];
	size_t klen;
	uint64_t first_ns;
};

struct fanmon {
	struct audit *a;
	int fan, stopfd, tfd, ep;
	pthread_t th;
	struct fan_mounts mnts;
	char **sensitive;            /* own copy: a SIGHUP frees the config's */
	size_t n_sensitive;
	bool modify;                 /* FAN_MODIFY marked: a close alone is not a write */
	uint64_t overflows, unresolved, sync_timeouts;
	struct pending pend[FAN_PENDING_MAX];
	uint8_t buf[1 << 16];
};

static int emit_file(struct fanmon *f, const char *type, const struct ptab_ent *pe,
		     const char *path, const char *new_path)
{
	struct event *e = event_new(type, pe->sid, EVENT_SRC_KERNEL);

	if (!e)
		return -ENOMEM;
	event_str(e, "path", path);
	if (new_path)
		event_str(e, "new_path", new_path);
	event_int(e, "pid", pe->pid);
	if (pe->ids_known) {
		event_uint(e, "uid", pe->uid);
		event_uint(e, "euid", pe->euid);
	} else {
		event_null(e, "uid");
		event_null(e, "euid");
	}
	(void)f;
	return event_emit(e);
}

/* Resolves d and emits type; an object already gone is counted, not guessed. */
static void emit_one(struct fanmon *f, const char *type, const struct ptab_ent *pe,
		     const struct fan_dfid *d)
{
	char path[PATH_MAX];
	int ret;

	if (fanpath_resolve(&f->mnts, d, path, sizeof(path)) != 0) {
		f->unresolved++;
		return;
	}
	if (strcmp(type, "file.read") == 0 &&
	    !audit_path_sensitive(path, f->sensitive, f->n_sensitive))
		return;
	ret = emit_file(f, type, pe, path, NULL);
	if (ret)
		log_errno(ret, "audit: %s", type);
}

static void on_rename(struct fanmon *f, const struct ptab_ent *pe, const struct fan_rec *r)
{
	char from[PATH_MAX], to[PATH_MAX];
	int ret;

	if (fanpath_resolve(&f->mnts, &r->old, from, sizeof(from)) != 0 ||
	    fanpath_resolve(&f->mnts, &r->new, to, sizeof(to)) != 0) {
		f->unresolved++;
		return;
	}
	ret = emit_file(f, "file.rename", pe, from, to);
	if (ret)
		log_errno(ret, "audit: file.rename");
}

/* ---- write coalescing -------------------------------------------------------------- */

static size_t key_of(const struct fan_dfid *d, uint8_t *key)
{
	size_t nlen = d->name ? strlen(d->name) + 1 : 0;

	if (d->handle_len + nlen > FAN_PENDING_KEY)
		return 0;
	memcpy(key, d->handle, d->handle_len);
	if (nlen)
		memcpy(key + d->handle_len, d->name, nlen);
	return d->handle_len + nlen;
}

static struct pending *pend_find(struct fanmon *f, pid_t pid, uint64_t fsid,
				 const uint8_t *key, size_t klen)
{
	for (size_t i = 0; i < FAN_PENDING_MAX; i++) {
		struct pending *p = &f->pend[i];

		if (p->pid == pid && p->d.fsid == fsid && p->klen == klen &&
		    memcmp(p->key, key, klen) == 0)
			return p;
	}
	return NULL;
}

static void pend_emit(struct fanmon *f, struct pending *p)
{
	emit_one(f, "file.write", &p->pe, &p->d);
	p->pid = 0;
}

/* A FAN_MODIFY: remember (pid, file) once until its close or the flush. */
static void pend_add(struct fanmon *f, const struct ptab_ent *pe, const struct fan_dfid *d)
{
	uint8_t key[FAN_PENDING_KEY];
	size_t klen = key_of(d, key);
	struct pending *p;

	if (klen == 0 || pend_find(f, pe->pid, d->fsid, key, klen)) {
		if (klen == 0)
			emit_one(f, "file.write", pe, d);   /* too long to key: as is */
		return;
	}
	p = NULL;
	for (size_t i = 0; !p && i < FAN_PENDING_MAX; i++)
		if (f->pend[i].pid == 0)
			p = &f->pend[i];
	if (!p) {
		emit_one(f, "file.write", pe, d);   /* table full: no coalescing */
		return;
	}
	p->pid = pe->pid;
	p->pe = *pe;
	memcpy(p->key, key, klen);
	p->klen = klen;
	p->d = *d;
	p->d.handle = p->key;
	p->d.name = d->name ? (const char *)p->key + d->handle_len : NULL;
	p->first_ns = time_mono_ns();
}

/* A FAN_CLOSE_WRITE: the coalesced write, if there was one, is now complete. */
static void pend_close(struct fanmon *f, pid_t pid, const struct fan_dfid *d)
{
	uint8_t key[FAN_PENDING_KEY];
	size_t klen = key_of(d, key);
	struct pending *p = klen ? pend_find(f, pid, d->fsid, key, klen) : NULL;

	if (p)
		pend_emit(f, p);
}

static void pend_flush(struct fanmon *f, bool all)
{
	uint64_t now = time_mono_ns();

	for (size_t i = 0; i < FAN_PENDING_MAX; i++)
		if (f->pend[i].pid != 0 &&
		    (all || now - f->pend[i].first_ns >= FAN_WRITE_FLUSH_NS))
			pend_emit(f, &f->pend[i]);
}

/* ---- dispatch ------------------------------------------------------------------------ */

static void on_rec(struct fanmon *f, const struct fan_rec *r)
{
	struct ptab_ent pe;

	if (r->mask & FAN_Q_OVERFLOW) {
		f->overflows++;
		return;
	}
	if (r->fd >= 0)
		close(r->fd);   /* not expected in FID mode; never leak one */
	if (r->pid == f->a->self || !ptab_get(f->a->tab, r->pid, true, &pe))
		return;
	if (r->mask & FAN_CREATE)
		emit_one(f, "file.create", &pe, &r->dfid);
	if (r->mask & FAN_MODIFY)
		pend_add(f, &pe, &r->dfid);
	if ((r->mask & FAN_CLOSE_WRITE) && f->modify)
		pend_close(f, pe.pid, &r->dfid);
	else if (r->mask & FAN_CLOSE_WRITE)
		emit_one(f, "file.write", &pe, &r->dfid);   /* opened for writing, closed */
	if ((r->mask & FAN_CLOSE_NOWRITE) && f->n_sensitive)
		emit_one(f, "file.read", &pe, &r->dfid);
	if (r->mask & FAN_RENAME)
		on_rename(f, &pe, r);
	if (r->mask & FAN_DELETE)
		emit_one(f, "file.delete", &pe, &r->dfid);
}

/* Whether buf holds an event of a pid the table does not know (yet). */
static bool has_unknown(struct fanmon *f, size_t len)
{
	struct ptab_ent pe;
	struct fan_rec r;
	size_t off = 0;

	while (fan_next(f->buf, len, &off, &r) > 0)
		if (r.pid != f->a->self && !(r.mask & FAN_Q_OVERFLOW) &&
		    !ptab_get(f->a->tab, r.pid, true, &pe))
			return true;
	return false;
}

/*
 * Reads until the queue is empty. A reader that sleeps in epoll between events is woken
 * (an IPI on a VM) for every single one and reads them one at a time: measured on this
 * kernel, that alone made a 50k-file untar 40-60 % slower with a reader that did nothing
 * else. So, once events flow, an empty queue is given FAN_BATCH_NS to fill before the
 * thread goes back to epoll: the kernel queues (and merges) without waking anyone, and
 * each read takes a batch. Events reach the journal at most that much later.
 */
static void fm_drain(struct fanmon *f)
{
	const struct timespec nap = { 0, FAN_BATCH_NS };
	bool napped = false;
	struct fan_rec r;
	ssize_t got;
	size_t off;
	uint64_t t;
	int ret;

	for (;;) {
		got = read(f->fan, f->buf, sizeof(f->buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EAGAIN && !napped) {
			napped = true;
			(void)nanosleep(&nap, NULL);   /* EINTR: a shorter nap, no harm */
			continue;
		}
		if (got <= 0)
			return;
		napped = false;
		fanpath_new_batch(&f->mnts);
		/* Events of a process just forked or exec'd into a session may be read before
		 * the connector thread has recorded it: let that thread catch up first. */
		t = time_mono_ns();
		if (has_unknown(f, (size_t)got) && !audit_sync_wait(f->a, t, FAN_SYNC_MS))
			f->sync_timeouts++;
		off = 0;
		while ((ret = fan_next(f->buf, (size_t)got, &off, &r)) > 0)
			on_rec(f, &r);
		if (ret < 0)
			log_errno(ret, "audit: malformed fanotify record skipped");
	}
}

static void fm_tick(struct fanmon *f)
{
	char why[160];
	uint64_t exp;

	(void)!read(f->tfd, &exp, sizeof(exp));
	pend_flush(f, false);
	mntwatch_poll(f->a->mw);
	if (f->overflows) {
		/* The kernel says that events were dropped, not how many. */
		snprintf(why, sizeof(why), "fanotify queue overflow (%llu overflow events; "
			 "count of lost events unknown)", (unsigned long long)f->overflows);
		if (audit_emit_loss("fanotify", -1, why) != 0)
			log_warnx("audit: could not record a fanotify overflow");
		f->overflows = 0;
	}
}

static void *fm_main(void *arg)
{
	struct fanmon *f = arg;
	struct epoll_event evs[4];
	int n;

	(void)pthread_setname_np(pthread_self(), "sg-fanotify");
	for (;;) {
		n = epoll_wait(f->ep, evs, 4, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_warn("audit: fanotify epoll_wait");
			break;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == f->stopfd)
				goto out;
			if (evs[i].data.fd == f->tfd)
				fm_tick(f);
			else if (evs[i].data.fd == mntwatch_fd(f->a->mw))
				mntwatch_on_event(f->a->mw);
			else
				fm_drain(f);
		}
	}
out:
	fm_drain(f);
	pend_flush(f, true);
	return NULL;
}

static uint64_t fm_mask(const struct audit_settings *s)
{
	uint64_t m = FAN_CREATE | FAN_DELETE | FAN_RENAME | FAN_CLOSE_WRITE;

	/* FAN_MODIFY is an event per write() of every process on the filesystem: with it
	 * on, a 50k-file untar paid ~18 % in the kernel with a reader that did nothing,
	 * ~10 % without (bench/audit/floor.sh, docs/bench-audit.md). */
	if (s->file_modify)
		m |= FAN_MODIFY;
	return s->n_sensitive ? m | FAN_CLOSE_NOWRITE : m;
}

static int fm_mark(struct fanmon *f, const struct audit_settings *s)
{
	for (size_t i = 0; i < s->n_marks; i++) {
		int ret = fanpath_mount(&f->mnts, s->marks[i]);

		if (ret)
			return ret;
		if (fanotify_mark(f->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, fm_mask(s),
				  AT_FDCWD, s->marks[i]) != 0)
			return -errno;
	}
	return 0;
}

static int ep_add(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

static int fm_fds(struct fanmon *f)
{
	struct itimerspec it = { { 1, 0 }, { 1, 0 } };
	int ret;

	f->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	f->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	f->ep = epoll_create1(EPOLL_CLOEXEC);
	if (f->stopfd < 0 || f->tfd < 0 || f->ep < 0)
		return -errno;
	if (timerfd_settime(f->tfd, 0, &it, NULL) != 0)
		return -errno;
	ret = ep_add(f->ep, f->stopfd);
	if (ret == 0)
		ret = ep_add(f->ep, f->tfd);
	if (ret == 0)
		ret = ep_add(f->ep, f->fan);
	if (ret == 0 && mntwatch_fd(f->a->mw) >= 0)
		ret = ep_add(f->ep, mntwatch_fd(f->a->mw));   /* mount events (6.15+) */
	return ret;
}

static void fm_close(struct fanmon *f)
{
	int fds[] = { f->fan, f->stopfd, f->tfd, f->ep };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	fanpath_close(&f->mnts);
	for (size_t i = 0; i < f->n_sensitive; i++)
		free(f->sensitive[i]);
	free(f->sensitive);
	free(f);
}

static int copy_sensitive(struct fanmon *f, const struct audit_settings *s)
{
	f->sensitive = calloc(s->n_sensitive + 1, sizeof(*f->sensitive));
	if (!f->sensitive)
		return -ENOMEM;
	for (; f->n_sensitive < s->n_sensitive; f->n_sensitive++)
		if (!(f->sensitive[f->n_sensitive] = strdup(s->sensitive[f->n_sensitive])))
			return -ENOMEM;
	return 0;
}

int fanmon_start(struct fanmon **out, struct audit *a, const struct audit_settings *s)
{
	struct fanmon *f = calloc(1, sizeof(*f));
	int ret;

	if (!f)
		return -ENOMEM;
	f->a = a;
	f->modify = s->file_modify;
	f->stopfd = f->tfd = f->fan = f->ep = -1;
	ret = copy_sensitive(f, s);
	if (ret == 0) {
		f->fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK |
				       FAN_REPORT_DFID_NAME_TARGET,
				       O_RDONLY | O_LARGEFILE | O_CLOEXEC);
		ret = f->fan < 0 ? -errno : fm_mark(f, s);
	}
	if (ret == 0)
		ret = fm_fds(f);
	if (ret == 0)
		ret = -pthread_create(&f->th, NULL, fm_main, f);
	if (ret) {
		fm_close(f);
		return ret;
	}
	*out = f;
	return 0;
}

void fanmon_stop(struct fanmon *f)
{
	uint64_t one = 1;

	if (!f)
		return;
	(void)!write(f->stopfd, &one, sizeof(one));
	pthread_join(f->th, NULL);
	fm_close(f);
}
