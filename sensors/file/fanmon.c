/*
 * The fanotify sensor: filesystem marks with FID + DFID_NAME (+ rename target) reporting,
 * one thread (common/thread.h: fanotify fd, mount events, 1 s tick). Only pids the table ties
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
#include <sys/fanotify.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "sensors/file/fan_int.h"
#include "common/log.h"
#include "common/thread.h"
#include "common/timeutil.h"
#include "journal/event.h"

#ifndef FAN_RENAME
#define FAN_RENAME 0x10000000
#endif

/* ---- dispatch ------------------------------------------------------------------------ */

static void on_rec(struct fanmon *f, const struct fan_rec *r)
{
	bool dir = (r->mask & FAN_ONDIR) != 0;
	struct ptab_ent pe;

	if (r->mask & FAN_Q_OVERFLOW) {
		f->overflows++;
		return;
	}
	if (r->fd >= 0)
		close(r->fd);   /* not expected in FID mode; never leak one */
	if (r->pid == f->a->self)
		return;
	/* Identity upkeep, whoever did it: a name made in a sensitive directory joins the
	 * set (a hash lookup, no system call). */
	if ((r->mask & FAN_CREATE) && f->sens.n)
		fansens_entered(f, &r->dfid, &r->fid, dir);
	if ((r->mask & FAN_RENAME) && f->sens.n)
		fansens_entered(f, &r->new, &r->fid, dir);
	if (!ptab_get(f->a->tab, r->pid, true, &pe)) {
		if (r->mask & (FAN_CLOSE_WRITE | FAN_CLOSE_NOWRITE))
			fanemit_foreign_close(f, r);
		return;
	}
	fanemit_rec(f, &pe, r);
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

static void fm_tick(void *ctx)
{
	struct fanmon *f = ctx;
	char why[160];

	fanemit_flush(f, false);
	fanreads_flush(f->rd, false);
	mntwatch_poll(f->a->mw);
	fanemit_losses(f);
	if (f->overflows) {
		/* The kernel says that events were dropped, not how many. */
		snprintf(why, sizeof(why), "fanotify queue overflow (%llu overflow events; "
			 "count of lost events unknown)", (unsigned long long)f->overflows);
		if (audit_emit_loss("fanotify", -1, why) != 0)
			log_warnx("audit: could not record a fanotify overflow");
		f->overflows = 0;
	}
}

static void on_fan(struct loop *l, int fd, uint32_t events, void *ctx)
{
	(void)l;
	(void)fd;
	(void)events;
	fm_drain(ctx);
}

static void on_mount(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct fanmon *f = ctx;

	(void)l;
	(void)fd;
	(void)events;
	mntwatch_on_event(f->a->mw);
}

static bool walk_idle(void *ctx)
{
	return fansens_walk_step(ctx, 256);
}

static int fm_main(struct sg_thread *t, void *arg)
{
	struct fanmon *f = arg;
	int ret;

	/* The walk goes a slice at a time while the queue is empty: reads are seen by
	 * path meanwhile, and the queue does not fill up behind a long walk. */
	if (f->reads && fansens_walk_start(f) != 0)
		log_warnx("audit: sensitive files are recognised by their path only (no memory)");
	if (f->walk)
		loop_set_idle(sg_thread_loop(t), walk_idle, f);
	ret = sg_thread_run(t);
	if (ret)
		log_errno(ret, "audit: fanotify epoll_wait");
	fm_drain(f);
	fanemit_flush(f, true);
	fanreads_flush(f->rd, true);
	fanemit_losses(f);
	return ret;
}

static uint64_t fm_mask(const struct audit_settings *s)
{
	/* FAN_ONDIR: a directory's own create, delete, rename and attribute change (a
	 * directory moved into place is a rename of its own); its reads are skipped. */
	uint64_t m = FAN_CREATE | FAN_DELETE | FAN_RENAME | FAN_CLOSE_WRITE | FAN_ATTRIB |
		     FAN_ONDIR;

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

		if (ret == -EEXIST)
			continue;   /* that filesystem twice */
		if (ret)
			return ret;
		if (fanotify_mark(f->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, f->mask,
				  AT_FDCWD, s->marks[i]) != 0)
			return -errno;
	}
	if (s->file_mounts)
		fanmark_all(f);
	return 0;
}

static int fm_fds(struct fanmon *f)
{
	int mfd = mntwatch_fd(f->a->mw), hfd = mntwatch_host_fd(f->a->mw);
	int ret = sg_thread_new(&f->t, "sg-fanotify");

	if (ret == 0)
		ret = sg_thread_tick(f->t, 1000, fm_tick, f);
	if (ret == 0)
		ret = loop_add(sg_thread_loop(f->t), f->fan, EPOLLIN, on_fan, f);
	if (ret == 0 && mfd >= 0)   /* mount events (6.15+) */
		ret = loop_add(sg_thread_loop(f->t), mfd, EPOLLIN, on_mount, f);
	if (ret == 0 && hfd >= 0)
		ret = loop_add(sg_thread_loop(f->t), hfd, EPOLLIN, on_mount, f);
	return ret;
}

static void fm_close(struct fanmon *f)
{
	sg_thread_free(f->t);
	if (f->fan >= 0)
		close(f->fan);
	fanpath_close(&f->mnts);
	fansens_walk_stop(f);
	fanid_fini(&f->sens);
	fanid_fini(&f->attrs);
	fanreads_free(f->rd);
	pthread_mutex_destroy(&f->wd_mu);
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

/* ---- the mount watcher's hooks (this thread) ---------------------------------------- */

static void on_mounted(void *ctx, pid_t nspid, int nsfd, const char *sid,
		       const struct mount_entry *m)
{
	int ret = fanmark_mount(ctx, nspid, nsfd, m->target, m->fstype);

	/* A new tmpfs a session mounted is empty at its mount: what it holds now was
	 * written before the mark could see it. */
	if (ret == 0 && sid[0] && strcmp(m->fstype, "tmpfs") == 0)
		fanmark_catch_up(ctx, sid, m->target);
	if (ret && ret != -EEXIST)
		log_errno(ret, "audit: files on %s (%s), mounted after start, are not watched",
			  m->target, m->fstype);
}

static void on_unmounted(void *ctx, const struct mount_entry *m)
{
	fanmark_unmount(ctx, makedev(m->dev_major, m->dev_minor));
}

static bool session_of(void *ctx, pid_t pid, char *sid, size_t len)
{
	struct fanmon *f = ctx;
	struct ptab_ent pe;

	if (!ptab_get(f->a->tab, pid, true, &pe))
		return false;
	snprintf(sid, len, "%s", pe.sid);
	return true;
}

void fanmon_workdir(struct fanmon *f, const char *sid, const char *path)
{
	size_t at = FAN_WORKDIRS_MAX;

	if (!f || !sid)
		return;
	pthread_mutex_lock(&f->wd_mu);
	for (size_t i = 0; i < FAN_WORKDIRS_MAX; i++) {
		if (strcmp(f->wd[i].sid, sid) == 0)
			f->wd[i].sid[0] = '\0';
		if (!f->wd[i].sid[0] && at == FAN_WORKDIRS_MAX)
			at = i;
	}
	if (path && path[0] && at < FAN_WORKDIRS_MAX) {
		snprintf(f->wd[at].sid, sizeof(f->wd[at].sid), "%s", sid);
		snprintf(f->wd[at].path, sizeof(f->wd[at].path), "%s", path);
	}
	pthread_mutex_unlock(&f->wd_mu);
}

int fanmon_start(struct fanmon **out, struct audit *a, const struct audit_settings *s)
{
	struct fanmon *f = calloc(1, sizeof(*f));
	int ret;

	if (!f)
		return -ENOMEM;
	f->a = a;
	f->modify = s->file_modify;
	f->reads = s->n_sensitive > 0;
	f->mask = fm_mask(s);
	f->fan = -1;
	pthread_mutex_init(&f->wd_mu, NULL);
	ret = copy_sensitive(f, s);
	if (ret == 0)
		ret = fanid_init(&f->sens, FAN_SENS_MAX);
	if (ret == 0)
		ret = fanid_init(&f->attrs, FAN_ATTRS_MAX);
	if (ret == 0)
		ret = fanreads_new(&f->rd, (s->read_repeat_ms ? s->read_repeat_ms : 60000) *
				   1000000ull);
	if (ret == 0) {
		f->fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK |
				       FAN_REPORT_DFID_NAME_TARGET,
				       O_RDONLY | O_LARGEFILE | O_CLOEXEC);
		ret = f->fan < 0 ? -errno : fm_mark(f, s);
	}
	if (ret == 0)
		ret = fm_fds(f);
	if (ret == 0)
		mntwatch_set_hooks(a->mw, &(struct mntwatch_hooks){ .ctx = f, .mounted = on_mounted,
				   .unmounted = on_unmounted, .session_of = session_of });
	if (ret == 0)
		ret = sg_thread_start(f->t, fm_main, f);
	if (ret) {
		mntwatch_set_hooks(a->mw, &(struct mntwatch_hooks){ 0 });   /* f goes */
		fm_close(f);
		return ret;
	}
	*out = f;
	return 0;
}

void fanmon_stop(struct fanmon *f)
{
	if (!f)
		return;
	(void)sg_thread_stop(f->t);
	(void)sg_thread_join(f->t);
	fm_close(f);
}
