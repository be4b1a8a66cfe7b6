/*
 * A thread that keeps a journal consumer (the index, a sink) caught up: it calls the
 * consumer's step until no progress is made, then sleeps until inotify reports a write
 * or a new segment in the journal directory, or a periodic fallback fires. The writer
 * is never touched or slowed: the consumer reads the segment files.
 */
#ifndef SANDGATE_JOURNAL_TAIL_H
#define SANDGATE_JOURNAL_TAIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * One unit of work. Sets *progressed when it consumed something (it is called again at
 * once) and returns 0, or -errno: the worker then waits *retry_ms (the step may raise
 * it, for backoff; it starts at the fallback period) before calling again.
 */
typedef int (*tail_step_fn)(void *ctx, size_t *progressed, uint64_t *retry_ms);

/* Called from the worker thread when a step fails with an error other than the last. */
typedef void (*tail_error_fn)(void *ctx, int err);

struct tail_settings {
	const char *journal_dir;
	uint64_t fallback_ms;     /* poll period when inotify says nothing (and retry base) */
	uint64_t linger_ms;       /* after a wake-up, wait this long so writes coalesce */
	bool timer_only;          /* no inotify: step every fallback_ms (retention) */
	bool wait_first;          /* the first step only after fallback_ms */
	bool background;          /* SCHED_IDLE, and each step waits (2 s at most) while the
	                           * rest of the host leaves under 25 % of the CPUs idle */
	const char *name;         /* thread name (15 bytes shown), or NULL */
	tail_step_fn step;
	tail_error_fn on_error;   /* may be NULL */
	void *ctx;
};

struct tail_worker;

/* Starts the worker thread. Returns 0, -ENOMEM, or -errno from inotify/eventfd/thread. */
int tail_worker_start(struct tail_worker **out, const struct tail_settings *s);

/* Wakes the worker now (e.g. a sink's config changed). Accepts NULL. */
void tail_worker_kick(struct tail_worker *w);

/* Stops the thread (after its current step), joins it and frees w. Accepts NULL. */
void tail_worker_stop(struct tail_worker *w);

#endif
