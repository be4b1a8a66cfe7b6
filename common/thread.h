/*
 * The harness of a hot thread (a sensor, the conntrack reader, an NFQUEUE worker, a
 * journal follower): the thread, its name, its event loop (common/loop.h), a stop
 * eventfd the loop watches, an optional periodic tick (timerfd), stop and join. The
 * thread's own file keeps only its handlers and what it does before and after the loop.
 *
 *	sg_thread_new(&t, "sg-proc");
 *	loop_add(sg_thread_loop(t), sock, EPOLLIN, on_sock, p);
 *	sg_thread_tick(t, 1000, on_tick, p);
 *	sg_thread_start(t, body, p);      body: setup; sg_thread_run(t); drain; return 0
 *	...
 *	sg_thread_stop(t); sg_thread_join(t); sg_thread_free(t);
 *
 * Functions return 0 or -errno and never log: the thread's body logs with its context.
 * Everything but sg_thread_stop() and sg_thread_wake() belongs to the thread that owns
 * the harness (before start and after join) or, for the loop, to the thread itself.
 */
#ifndef SANDGATE_COMMON_THREAD_H
#define SANDGATE_COMMON_THREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "common/loop.h"

struct sg_thread;

/* The thread's body. Its return value (0 or -errno) is what sg_thread_join() returns. */
typedef int (*sg_thread_fn)(struct sg_thread *t, void *ctx);
typedef void (*sg_tick_fn)(void *ctx);

/*
 * A harness named name (at most 15 characters are kept: the kernel's limit; NULL or ""
 * leaves the thread's name alone), with its loop and stop eventfd, not started.
 * Returns 0 or -errno (-ENOMEM, or the eventfd's or epoll's error).
 */
int sg_thread_new(struct sg_thread **out, const char *name);

/* Stops and joins a running thread, then closes the harness's fds. Accepts NULL. */
void sg_thread_free(struct sg_thread *t);

/* The thread's loop, to add its own fds to (before start, or from the thread). */
struct loop *sg_thread_loop(struct sg_thread *t);

/*
 * Calls fn(ctx) on the thread every period_ms, the first time period_ms after this
 * call. One tick per harness. Returns 0, -EINVAL (period 0 or no fn), -EBUSY (a tick
 * already) or the timerfd's -errno.
 */
int sg_thread_tick(struct sg_thread *t, uint32_t period_ms, sg_tick_fn fn, void *ctx);

/* Starts the thread on fn(t, ctx). Returns 0, -EINVAL, -EBUSY (running) or -errno. */
int sg_thread_start(struct sg_thread *t, sg_thread_fn fn, void *ctx);

/*
 * On the thread: dispatches the loop until sg_thread_stop(). Returns at once if stop
 * was asked already. Returns 0, or -errno if the wait failed. What the loop has not
 * read is still there after it: a body drains its sources before it returns.
 */
int sg_thread_run(struct sg_thread *t);

/* Whether stop was asked: for a body that loops by itself (sg_thread_wait()). */
bool sg_thread_stopping(const struct sg_thread *t);

/*
 * On the thread: one wait of at most timeout_ms (-1: none) for its fds, a wake or
 * stop, and their dispatch. Returns the number of events, or -errno.
 */
int sg_thread_wait(struct sg_thread *t, int timeout_ms);

/* From any thread: wakes the thread's wait without stopping it. Async-signal-safe. */
void sg_thread_wake(struct sg_thread *t);

/*
 * From any thread: asks the thread to stop (its loop returns after the events of the
 * current wait). Does not wait. Returns 0 or -errno.
 */
int sg_thread_stop(struct sg_thread *t);

/*
 * Waits for the thread to end. Returns the body's return value, -EINVAL if it was not
 * started, or pthread_join's -errno.
 */
int sg_thread_join(struct sg_thread *t);

#endif
