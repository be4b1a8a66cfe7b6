#include "common/thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

struct sg_thread {
	char name[16];
	struct loop *loop;
	int stopfd;                  /* eventfd: a wake; with stopping set, stop */
	int tickfd;                  /* timerfd, or -1 */
	sg_tick_fn tick;
	void *tick_ctx;
	sg_thread_fn fn;
	void *ctx;
	pthread_t th;
	atomic_bool stopping;
	bool running;
	int ret;                     /* the body's, read after the join */
};

/* Read, so that a wake does not wake every later wait; the flag says whether it stops. */
static void on_stopfd(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct sg_thread *t = ctx;
	uint64_t n;

	(void)events;
	(void)!read(fd, &n, sizeof(n));
	if (atomic_load(&t->stopping))
		loop_stop(l);
}

static void on_tick(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct sg_thread *t = ctx;
	uint64_t n;

	(void)l;
	(void)events;
	if (read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		t->tick(t->tick_ctx);
}

int sg_thread_new(struct sg_thread **out, const char *name)
{
	struct sg_thread *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return -ENOMEM;
	t->tickfd = -1;
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "");
	t->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ret = t->stopfd < 0 ? -errno : loop_new(&t->loop);
	if (ret == 0)
		ret = loop_add(t->loop, t->stopfd, EPOLLIN, on_stopfd, t);
	if (ret) {
		sg_thread_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

void sg_thread_free(struct sg_thread *t)
{
	if (!t)
		return;
	if (t->running) {
		/* A failed write leaves the flag set and a wake pending: the join ends. */
		(void)sg_thread_stop(t);
		(void)sg_thread_join(t);
	}
	loop_free(t->loop);
	if (t->stopfd >= 0)
		close(t->stopfd);
	if (t->tickfd >= 0)
		close(t->tickfd);
	free(t);
}

struct loop *sg_thread_loop(struct sg_thread *t)
{
	return t->loop;
}

int sg_thread_tick(struct sg_thread *t, uint32_t period_ms, sg_tick_fn fn, void *ctx)
{
	struct itimerspec it = { 0 };
	int ret;

	if (!period_ms || !fn)
		return -EINVAL;
	if (t->tickfd >= 0)
		return -EBUSY;
	it.it_interval.tv_sec = period_ms / 1000;
	it.it_interval.tv_nsec = (long)(period_ms % 1000) * 1000000L;
	it.it_value = it.it_interval;
	t->tickfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (t->tickfd < 0)
		return -errno;
	t->tick = fn;
	t->tick_ctx = ctx;
	ret = timerfd_settime(t->tickfd, 0, &it, NULL) == 0 ? 0 : -errno;
	if (ret == 0)
		ret = loop_add(t->loop, t->tickfd, EPOLLIN, on_tick, t);
	if (ret) {
		close(t->tickfd);
		t->tickfd = -1;
	}
	return ret;
}

static void *thread_main(void *arg)
{
	struct sg_thread *t = arg;

	if (t->name[0])
		(void)pthread_setname_np(pthread_self(), t->name);   /* cosmetic */
	t->ret = t->fn(t, t->ctx);
	return NULL;
}

int sg_thread_start(struct sg_thread *t, sg_thread_fn fn, void *ctx)
{
	int r;

	if (!fn)
		return -EINVAL;
	if (t->running)
		return -EBUSY;
	t->fn = fn;
	t->ctx = ctx;
	r = pthread_create(&t->th, NULL, thread_main, t);
	if (r)
		return -r;
	t->running = true;
	return 0;
}

int sg_thread_run(struct sg_thread *t)
{
	/* A stop whose wake an earlier sg_thread_wait() consumed is seen here. */
	if (sg_thread_stopping(t))
		return 0;
	return loop_run(t->loop);
}

bool sg_thread_stopping(const struct sg_thread *t)
{
	return atomic_load(&t->stopping);
}

int sg_thread_wait(struct sg_thread *t, int timeout_ms)
{
	if (sg_thread_stopping(t))
		return 0;
	return loop_once(t->loop, timeout_ms);
}

void sg_thread_wake(struct sg_thread *t)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is full, so a wake is pending anyway. */
	(void)!write(t->stopfd, &one, sizeof(one));
}

int sg_thread_stop(struct sg_thread *t)
{
	uint64_t one = 1;

	atomic_store(&t->stopping, true);   /* before the write: the reader tests it after */
	if (write(t->stopfd, &one, sizeof(one)) != (ssize_t)sizeof(one) && errno != EAGAIN)
		return -errno;
	return 0;
}

int sg_thread_join(struct sg_thread *t)
{
	int r;

	if (!t->running)
		return -EINVAL;
	r = pthread_join(t->th, NULL);
	if (r)
		return -r;
	t->running = false;
	return t->ret;
}
