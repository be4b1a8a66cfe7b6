/*
 * The thread harness (common/thread.h) and its loop (common/loop.h): a body runs and
 * its return value comes back at the join, the tick fires, stop wakes a blocked loop
 * promptly, a body still drains what came before the stop, and misuse is an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/thread.h"
#include "common/timeutil.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int body_ret(struct sg_thread *t, void *ctx)
{
	(void)t;
	return *(int *)ctx;
}

static int body_run(struct sg_thread *t, void *ctx)
{
	(void)ctx;
	return sg_thread_run(t);
}

static void test_start_join(void **state)
{
	struct sg_thread *t;
	int want = -EPROTO;

	(void)state;
	assert_int_equal(sg_thread_new(&t, "sg-test-name-longer-than-15"), 0);
	assert_int_equal(sg_thread_start(t, body_ret, &want), 0);
	assert_int_equal(sg_thread_join(t), -EPROTO);
	/* Joined: it can be started again. */
	want = 0;
	assert_int_equal(sg_thread_start(t, body_ret, &want), 0);
	assert_int_equal(sg_thread_join(t), 0);
	sg_thread_free(t);
}

static void on_tick(void *ctx)
{
	atomic_fetch_add((atomic_int *)ctx, 1);
}

static void test_tick(void **state)
{
	struct sg_thread *t;
	atomic_int ticks = 0;
	int64_t start;

	(void)state;
	assert_int_equal(sg_thread_new(&t, "sg-tick"), 0);
	assert_int_equal(sg_thread_tick(t, 10, on_tick, &ticks), 0);
	start = time_mono_ms();
	assert_int_equal(sg_thread_start(t, body_run, NULL), 0);
	while (atomic_load(&ticks) < 3 && time_mono_ms() - start < 5000)
		sleep_ms(5);
	assert_true(atomic_load(&ticks) >= 3);
	/* Three ticks of 10 ms: not sooner than 30 ms after the tick was set. */
	assert_true(time_mono_ms() - start >= 29);
	assert_int_equal(sg_thread_stop(t), 0);
	assert_int_equal(sg_thread_join(t), 0);
	sg_thread_free(t);
}

static void test_stop_prompt(void **state)
{
	struct sg_thread *t;
	int64_t at;

	(void)state;
	assert_int_equal(sg_thread_new(&t, "sg-block"), 0);
	assert_int_equal(sg_thread_start(t, body_run, NULL), 0);
	sleep_ms(50);   /* blocked in epoll_wait with no timeout by now */
	at = time_mono_ms();
	assert_int_equal(sg_thread_stop(t), 0);
	assert_int_equal(sg_thread_join(t), 0);
	/* A wake-up, not a poll: well under a second even on a loaded machine. */
	print_message("stop to join: %lld ms\n", (long long)(time_mono_ms() - at));
	assert_true(time_mono_ms() - at < 1000);
	sg_thread_free(t);
}

/* A sensor: reads its pipe in the loop and drains it after the loop, as they do. */
struct sensor {
	int rfd;
	long got;
};

static void sensor_drain(struct sensor *s)
{
	char buf[64];
	ssize_t n;

	while ((n = read(s->rfd, buf, sizeof(buf))) > 0)
		s->got += n;
}

static void on_readable(struct loop *l, int fd, uint32_t events, void *ctx)
{
	(void)l;
	(void)fd;
	(void)events;
	sensor_drain(ctx);
}

static int body_sensor(struct sg_thread *t, void *ctx)
{
	int ret = sg_thread_run(t);

	sensor_drain(ctx);   /* what came with or before the stop */
	return ret;
}

static void test_drain_at_stop(void **state)
{
	struct sg_thread *t;
	struct sensor s = { 0 };
	int p[2];
	char b[1000] = { 0 };

	(void)state;
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	s.rfd = p[0];
	assert_int_equal(sg_thread_new(&t, "sg-sensor"), 0);
	assert_int_equal(loop_add(sg_thread_loop(t), p[0], EPOLLIN, on_readable, &s), 0);
	assert_int_equal(sg_thread_start(t, body_sensor, &s), 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(write(p[1], b, sizeof(b)), sizeof(b));
	/* Written just before the stop: the loop may not have seen it, the body must. */
	assert_int_equal(write(p[1], b, 7), 7);
	assert_int_equal(sg_thread_stop(t), 0);
	assert_int_equal(sg_thread_join(t), 0);
	assert_int_equal(s.got, 50 * 1000 + 7);
	sg_thread_free(t);
	close(p[0]);
	close(p[1]);
}

/* A follower: its own loop of steps and waits, woken without being stopped. */
static int body_follow(struct sg_thread *t, void *ctx)
{
	atomic_int *wakes = ctx;
	int ret = 0;

	while (ret >= 0 && !sg_thread_stopping(t)) {
		ret = sg_thread_wait(t, 10000);
		if (ret > 0)
			atomic_fetch_add(wakes, 1);
	}
	return ret < 0 ? ret : 0;
}

static void test_wake_and_wait(void **state)
{
	struct sg_thread *t;
	atomic_int wakes = 0;
	int64_t start;

	(void)state;
	assert_int_equal(sg_thread_new(&t, "sg-follow"), 0);
	assert_int_equal(sg_thread_start(t, body_follow, &wakes), 0);
	start = time_mono_ms();
	sg_thread_wake(t);
	while (atomic_load(&wakes) < 1 && time_mono_ms() - start < 5000)
		sleep_ms(2);
	assert_int_equal(atomic_load(&wakes), 1);   /* woken, not stopped */
	assert_false(sg_thread_stopping(t));
	start = time_mono_ms();
	assert_int_equal(sg_thread_stop(t), 0);
	assert_int_equal(sg_thread_join(t), 0);
	assert_true(time_mono_ms() - start < 1000);   /* not the 10 s timeout */
	sg_thread_free(t);
}

static void test_stop_before_run(void **state)
{
	struct sg_thread *t;

	(void)state;
	assert_int_equal(sg_thread_new(&t, NULL), 0);
	assert_int_equal(sg_thread_stop(t), 0);
	assert_int_equal(sg_thread_start(t, body_run, NULL), 0);
	assert_int_equal(sg_thread_join(t), 0);
	sg_thread_free(t);
}

static void test_free_running(void **state)
{
	struct sg_thread *t;

	(void)state;
	assert_int_equal(sg_thread_new(&t, "sg-free"), 0);
	assert_int_equal(sg_thread_start(t, body_run, NULL), 0);
	sg_thread_free(t);   /* stops and joins */
	sg_thread_free(NULL);
}

static void test_errors(void **state)
{
	struct sg_thread *t;
	int zero = 0;

	(void)state;
	assert_int_equal(sg_thread_new(&t, "sg-err"), 0);
	assert_int_equal(sg_thread_join(t), -EINVAL);           /* never started */
	assert_int_equal(sg_thread_start(t, NULL, NULL), -EINVAL);
	assert_int_equal(sg_thread_tick(t, 0, on_tick, NULL), -EINVAL);
	assert_int_equal(sg_thread_tick(t, 10, NULL, NULL), -EINVAL);
	assert_int_equal(sg_thread_tick(t, 1000, on_tick, &zero), 0);
	assert_int_equal(sg_thread_tick(t, 1000, on_tick, &zero), -EBUSY);
	assert_int_equal(sg_thread_start(t, body_run, NULL), 0);
	assert_int_equal(sg_thread_start(t, body_run, NULL), -EBUSY);
	assert_int_equal(sg_thread_stop(t), 0);
	assert_int_equal(sg_thread_join(t), 0);
	assert_int_equal(sg_thread_join(t), -EINVAL);           /* joined already */
	sg_thread_free(t);
}

/* The loop's idle hook: polled slices while it has work, then sleep again. */
static bool idle_step(void *ctx)
{
	return ++*(int *)ctx < 5;
}

static void test_loop_idle(void **state)
{
	struct loop *l;
	int steps = 0;

	(void)state;
	assert_int_equal(loop_new(&l), 0);
	loop_set_idle(l, idle_step, &steps);
	for (int i = 0; i < 10; i++)
		assert_int_equal(loop_once(l, i < 5 ? -1 : 1), 0);   /* -1 would block: polls */
	assert_int_equal(steps, 5);
	loop_free(l);
	loop_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_join),
		cmocka_unit_test(test_tick),
		cmocka_unit_test(test_stop_prompt),
		cmocka_unit_test(test_drain_at_stop),
		cmocka_unit_test(test_wake_and_wait),
		cmocka_unit_test(test_stop_before_run),
		cmocka_unit_test(test_free_running),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_loop_idle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
