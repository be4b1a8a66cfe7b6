/* The follower thread (journal/tail.h, on common/thread.h): inotify, wake, periodic fallback. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "common/cpuload.h"
#include "common/thread.h"
#include "common/timeutil.h"
#include "journal/tail.h"

/*
 * A background consumer yields to a busy host: while what the rest of the host leaves
 * idle is below BUSY_IDLE_PCT of all CPUs (over windows of at least BUSY_WINDOW_MS), it
 * waits, BUSY_DEFER_MAX_MS at most before each step, so on a host that stays busy it
 * still makes progress.
 */
#define BUSY_IDLE_PCT 25
#define BUSY_WINDOW_MS 50
#define BUSY_DEFER_MAX_MS 2000
#define BUSY_SAMPLE_MAX_AGE_MS 1000

struct tail_worker {
	struct tail_settings s;
	int ino;          /* inotify on the journal directory */
	struct sg_thread *t;          /* the thread, its wake and stop */
	/* the last CPU sample of a background worker, for the window up to the next */
	struct cpu_sample cpu;
	uint64_t cpu_own_ticks;
	int64_t cpu_at_ms;            /* 0: none */
	bool cpu_idle_ok;             /* what that window said: the host had room */
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

static void on_ino(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct tail_worker *w = ctx;

	(void)l;
	(void)events;
	drain_fd(fd);
	if (!sg_thread_stopping(w->t) && w->s.linger_ms)
		sleep_ms(w->s.linger_ms);   /* coalesce a burst of writes */
}

/* Waits for a journal change, a kick or stop, at most ms. */
static void wait_change(struct tail_worker *w, uint64_t ms)
{
	(void)sg_thread_wait(w->t, ms > 600000 ? 600000 : (int)ms);
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

static uint64_t own_ticks(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) / (1000000000u / (uint64_t)hz);
}

/*
 * Idle percent of the host since the last sample, this thread's own time counted as
 * idle; -1 when no window is usable yet (the sample is then the start of the next one).
 */
static int idle_since_last(struct tail_worker *w)
{
	struct cpu_sample now;
	uint64_t own = own_ticks();
	int64_t t = time_mono_ms(), age = t - w->cpu_at_ms;
	int pct = -1;

	if (w->cpu_at_ms && age < BUSY_WINDOW_MS && w->cpu_idle_ok)
		return 100;   /* steps in quick succession: the last window's answer holds */
	if (cpu_sample_read(&now) != 0)
		return 100;   /* no /proc/stat: never defer */
	if (w->cpu_at_ms && age >= BUSY_WINDOW_MS && age <= BUSY_SAMPLE_MAX_AGE_MS)
		pct = cpu_idle_pct(&w->cpu, &now, own - w->cpu_own_ticks);
	w->cpu_idle_ok = pct >= BUSY_IDLE_PCT;
	if (pct >= 0 || !w->cpu_at_ms || age > BUSY_SAMPLE_MAX_AGE_MS) {
		w->cpu = now;
		w->cpu_own_ticks = own;
		w->cpu_at_ms = t;
	}
	return pct;
}

/*
 * SCHED_IDLE alone does not keep a consumer out of a burst: it runs in every gap the
 * busy threads leave, and each of those costs them (measured with two file writers on
 * two vCPUs: a third of their rate, docs/bench-audit.md). So a background step waits
 * while the rest of the host keeps the CPUs busy.
 */
static void defer_while_busy(struct tail_worker *w)
{
	int64_t start = time_mono_ms(), now = start;
	int pct;

	while (!sg_thread_stopping(w->t) && now - start < BUSY_DEFER_MAX_MS) {
		pct = idle_since_last(w);
		if (pct >= BUSY_IDLE_PCT)
			break;
		sleep_ms(BUSY_WINDOW_MS);   /* busy, or a window to measure first */
		now = time_mono_ms();
	}
}

static int run(struct sg_thread *t, void *arg)
{
	struct tail_worker *w = arg;
	int last_err = 0;

	if (w->s.background)
		lower_priority();
	if (w->s.wait_first)
		wait_change(w, w->s.fallback_ms);
	while (!sg_thread_stopping(t)) {
		uint64_t retry = w->s.fallback_ms;
		size_t progressed = 0;
		int ret;

		if (w->s.background)
			defer_while_busy(w);
		ret = w->s.step(w->s.ctx, &progressed, &retry);

		if (ret && ret != last_err && w->s.on_error)
			w->s.on_error(w->s.ctx, ret);   /* once per distinct error, not per retry */
		last_err = ret;
		if (ret == 0 && progressed)
			continue;
		wait_change(w, ret ? retry : w->s.fallback_ms);
	}
	return 0;
}

int tail_worker_start(struct tail_worker **out, const struct tail_settings *s)
{
	struct tail_worker *w = calloc(1, sizeof(*w));
	int ret;

	if (!w)
		return -ENOMEM;
	w->s = *s;
	w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ino < 0 ||
	    (!s->timer_only &&
	     inotify_add_watch(w->ino, s->journal_dir,
			       IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE) < 0)) {
		ret = -errno;
		goto fail;
	}
	ret = sg_thread_new(&w->t, s->name);
	if (ret == 0)
		ret = loop_add(sg_thread_loop(w->t), w->ino, EPOLLIN, on_ino, w);
	if (ret == 0)
		ret = sg_thread_start(w->t, run, w);
	if (ret == 0) {
		*out = w;
		return 0;
	}
fail:
	sg_thread_free(w->t);
	if (w->ino >= 0)
		close(w->ino);
	free(w);
	return ret;
}

void tail_worker_kick(struct tail_worker *w)
{
	if (w)
		sg_thread_wake(w->t);
}

void tail_worker_stop(struct tail_worker *w)
{
	if (!w)
		return;
	(void)sg_thread_stop(w->t);
	(void)sg_thread_join(w->t);
	sg_thread_free(w->t);
	close(w->ino);
	free(w);
}
