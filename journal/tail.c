/* The follower thread (journal/tail.h): inotify + eventfd + a periodic fallback. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "journal/tail.h"

struct tail_worker {
	struct tail_settings s;
	int ino;          /* inotify on the journal directory */
	int stopfd;       /* eventfd: 1 = wake, >= 2^32 = stop */
	pthread_t thread;
	atomic_bool stopping;
};

static void drain_fd(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Waits for a journal change, a kick or stop, at most ms. */
static void wait_change(struct tail_worker *w, uint64_t ms)
{
	struct pollfd p[2] = { { w->ino, POLLIN, 0 }, { w->stopfd, POLLIN, 0 } };
	int n = poll(p, 2, ms > 600000 ? 600000 : (int)ms);

	if (n <= 0)
		return;
	if (p[1].revents)
		drain_fd(w->stopfd);
	if (p[0].revents) {
		drain_fd(w->ino);
		if (!w->stopping && w->s.linger_ms)
			sleep_ms(w->s.linger_ms);   /* coalesce a burst of writes */
	}
}

/*
 * A background consumer (the index, detection) gives way to every normal thread: on a
 * busy host the sandbox's own work keeps the CPU and the consumer catches up when there
 * is room (its lag is exported). The journal writer, which holds the evidence, is never
 * background. Failing to lower the priority is harmless, so it is not an error.
 */
static void lower_priority(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	(void)sched_setscheduler(0, SCHED_IDLE, &sp);
}

static void *run(void *arg)
{
	struct tail_worker *w = arg;
	int last_err = 0;

	if (w->s.background)
		lower_priority();
	if (w->s.name)
		(void)pthread_setname_np(pthread_self(), w->s.name);

	if (w->s.wait_first)
		wait_change(w, w->s.fallback_ms);
	while (!w->stopping) {
		uint64_t retry = w->s.fallback_ms;
		size_t progressed = 0;
		int ret = w->s.step(w->s.ctx, &progressed, &retry);

		if (ret && ret != last_err && w->s.on_error)
			w->s.on_error(w->s.ctx, ret);   /* once per distinct error, not per retry */
		last_err = ret;
		if (ret == 0 && progressed)
			continue;
		wait_change(w, ret ? retry : w->s.fallback_ms);
	}
	return NULL;
}

int tail_worker_start(struct tail_worker **out, const struct tail_settings *s)
{
	struct tail_worker *w = calloc(1, sizeof(*w));
	int ret;

	if (!w)
		return -ENOMEM;
	w->s = *s;
	w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->ino < 0 || w->stopfd < 0 ||
	    (!s->timer_only &&
	     inotify_add_watch(w->ino, s->journal_dir,
			       IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE) < 0)) {
		ret = -errno;
		goto fail;
	}
	ret = -pthread_create(&w->thread, NULL, run, w);
	if (ret == 0) {
		*out = w;
		return 0;
	}
fail:
	if (w->ino >= 0)
		close(w->ino);
	if (w->stopfd >= 0)
		close(w->stopfd);
	free(w);
	return ret;
}

void tail_worker_kick(struct tail_worker *w)
{
	uint64_t one = 1;

	if (w && write(w->stopfd, &one, sizeof(one)) < 0)
		return;   /* counter full: a wake-up is pending anyway */
}

void tail_worker_stop(struct tail_worker *w)
{
	if (!w)
		return;
	w->stopping = true;
	tail_worker_kick(w);
	pthread_join(w->thread, NULL);
	close(w->ino);
	close(w->stopfd);
	free(w);
}
