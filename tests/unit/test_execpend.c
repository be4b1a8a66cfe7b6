/*
 * audit/execpend: each exec the connector puts is accounted for exactly once: claimed by
 * its record, handed back (expired, flushed, superseded by a later record of its pid,
 * pushed out when full), or put without hold; a record of an exec handed back is a
 * duplicate while its tombstone lasts.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sensors/process/execpend.h"

#define MS 1000000ull

static struct execpend *mk(void)
{
	struct execpend *p = NULL;

	assert_int_equal(execpend_new(&p), 0);
	execpend_activate(p, true, NULL);
	return p;
}

/* Puts an exec of pid at ts (with a cmdline when args). */
static int put(struct execpend *p, pid_t pid, uint64_t ts, bool args, bool hold,
	       uint64_t now, struct execpend_item **emit)
{
	struct cn_event ev = { .kind = CN_EXEC, .pid = pid, .tgid = pid, .ts_ns = ts };
	struct ptab_ent pe = { .pid = pid };
	struct exec_info x;

	memset(&x, 0, sizeof(x));
	if (args) {
		x.cmdline = strdup("true");
		x.cmdlen = 5;
	}
	return execpend_put(p, &ev, &pe, &x, hold, now, emit);
}

static size_t count(struct execpend_item *l)
{
	size_t n = 0;

	for (; l; l = l->next)
		n++;
	return n;
}

static void test_inactive(void **state)
{
	struct execpend *p = NULL;
	struct execpend_item *l = NULL;

	(void)state;
	assert_int_equal(execpend_new(&p), 0);
	assert_int_equal(put(p, 10, 1000 * MS, false, true, 1000 * MS, &l), -EAGAIN);
	assert_null(l);
	execpend_free(p);
	execpend_free(NULL);
}

static void test_claim_and_dup(void **state)
{
	struct execpend *p = mk();
	struct execpend_item *l = NULL;
	struct execpend_stats st;

	(void)state;
	assert_int_equal(put(p, 10, 1000 * MS, true, true, 1000 * MS, &l), 0);
	assert_null(l);
	/* The record's time is the syscall's start, coarse: before the exec. */
	assert_int_equal(execpend_claim(p, 10, 996 * MS, &l, NULL), EXECPEND_CLAIMED);
	assert_int_equal(execpend_claim(p, 10, 996 * MS, &l, NULL), EXECPEND_NONE);
	/* Not held (the rules are gone): handed back at once, a later record is a dup. */
	assert_int_equal(put(p, 11, 1100 * MS, false, false, 1100 * MS, &l), 0);
	assert_int_equal(count(l), 1);
	execpend_items_free(l);
	l = NULL;
	assert_int_equal(execpend_claim(p, 11, 1100 * MS, &l, NULL), EXECPEND_DUP);
	assert_null(l);
	execpend_stats(p, &st);
	assert_int_equal(st.held, 1);
	assert_int_equal(st.claimed, 1);
	assert_int_equal(st.fallback, 1);
	assert_int_equal(st.noargs, 1);
	assert_int_equal(st.dup, 1);
	execpend_free(p);
}

static void test_expire(void **state)
{
	struct execpend *p = mk();
	struct execpend_item *l = NULL;
	struct execpend_stats st;
	uint64_t t0 = 5000 * MS;

	(void)state;
	assert_int_equal(put(p, 20, t0, true, true, t0, &l), 0);
	assert_int_equal(put(p, 21, t0, false, true, t0, &l), 0);
	execpend_expire(p, t0 + EXECPEND_HOLD_NS - 1, false, &l);
	assert_null(l);
	execpend_expire(p, t0 + EXECPEND_HOLD_NS, false, &l);
	assert_int_equal(count(l), 2);
	l = execpend_items_order(l);
	assert_int_equal(l->ev.pid, 20);   /* oldest first */
	execpend_items_free(l);
	l = NULL;
	/* A record after the hold: the connector recorded it, this is a duplicate. */
	assert_int_equal(execpend_claim(p, 20, t0, &l, NULL), EXECPEND_DUP);
	/* The tombstone goes after EXECPEND_TOMB_NS. */
	execpend_expire(p, t0 + EXECPEND_HOLD_NS + EXECPEND_TOMB_NS, false, &l);
	assert_int_equal(execpend_claim(p, 21, t0, &l, NULL), EXECPEND_NONE);
	execpend_stats(p, &st);
	assert_int_equal(st.fallback, 2);
	assert_int_equal(st.noargs, 1);
	execpend_free(p);
}

/* A file event of pid comes before its exec's record: pid's held execs are handed back
 * (a later record is a duplicate); other pids' stay held; a pid holding nothing is a
 * no-op, as is a neighbour sharing its filter bucket. */
static void test_release_pid(void **state)
{
	struct execpend *p = mk();
	struct execpend_item *l = NULL;
	uint64_t t0 = 7000 * MS;
	pid_t twin = 30 + EXECPEND_FILTER;

	(void)state;
	assert_false(execpend_may_hold(p, 30));
	assert_int_equal(put(p, 30, t0, true, true, t0, &l), 0);
	assert_int_equal(put(p, 31, t0, true, true, t0, &l), 0);
	assert_null(l);
	assert_true(execpend_may_hold(p, 30));
	execpend_release_pid(p, twin, 0, t0 + MS, &l);
	assert_null(l);
	execpend_release_pid(p, 30, 0, t0 + MS, &l);
	assert_int_equal(count(l), 1);
	assert_int_equal(l->ev.pid, 30);
	execpend_items_free(l);
	l = NULL;
	assert_false(execpend_may_hold(p, 30));
	assert_true(execpend_may_hold(p, 31));
	assert_int_equal(execpend_claim(p, 30, t0, &l, NULL), EXECPEND_DUP);
	assert_int_equal(execpend_claim(p, 31, t0, &l, NULL), EXECPEND_CLAIMED);
	assert_false(execpend_may_hold(p, 31));
	assert_null(l);
	execpend_free(p);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct late_record {
	struct execpend *p;
	pid_t pid;
	uint64_t ts;
	enum execpend_claim got;
};

/* The audit thread: pid's record comes 30 ms after the file event. */
static void *claim_later(void *arg)
{
	struct late_record *r = arg;
	struct execpend_item *l = NULL;

	usleep(30 * 1000);
	r->got = execpend_claim(r->p, r->pid, r->ts, &l, NULL);
	execpend_items_free(l);
	return NULL;
}

/* The file event of a program comes before its exec's record (the old program's
 * libraries close at the exec): the release waits, the record claims the exec (its
 * arguments are the kernel's), nothing is handed back. */
static void test_release_waits_for_record(void **state)
{
	struct execpend *p = mk();
	struct execpend_item *l = NULL;
	struct late_record r = { .p = p, .pid = 40, .ts = 8000 * MS, .got = EXECPEND_NONE };
	pthread_t th;
	uint64_t t;

	(void)state;
	assert_int_equal(put(p, 40, r.ts, true, true, r.ts, &l), 0);
	assert_int_equal(pthread_create(&th, NULL, claim_later, &r), 0);
	t = mono_ms();
	execpend_release_pid(p, 40, 2000 * MS, r.ts + MS, &l);
	t = mono_ms() - t;
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_null(l);
	assert_int_equal(r.got, EXECPEND_CLAIMED);
	assert_false(execpend_may_hold(p, 40));
	assert_in_range(t, 20, 1500);
	execpend_free(p);
}

/* No record comes (rules removed): the first release waits its time and hands the exec
 * back; the next one does not wait, until a record is claimed again. */
static void test_release_lagging(void **state)
{
	struct execpend *p = mk();
	struct execpend_item *l = NULL;
	uint64_t t0 = 9000 * MS, t;

	(void)state;
	assert_int_equal(put(p, 50, t0, true, true, t0, &l), 0);
	assert_int_equal(put(p, 51, t0, true, true, t0, &l), 0);
	assert_int_equal(put(p, 52, t0, true, true, t0, &l), 0);
	t = mono_ms();
	execpend_release_pid(p, 50, 50 * MS, t0 + MS, &l);
	assert_in_range(mono_ms() - t, 40, 5000);
	assert_int_equal(count(l), 1);
	execpend_items_free(l);
	l = NULL;
	t = mono_ms();
	execpend_release_pid(p, 51, 5000 * MS, t0 + MS, &l);
	assert_in_range(mono_ms() - t, 0, 1000);
	assert_int_equal(count(l), 1);
	execpend_items_free(l);
	l = NULL;
	/* a record claimed: releases wait again */
	assert_int_equal(execpend_claim(p, 52, t0, &l, NULL), EXECPEND_CLAIMED);
	assert_int_equal(put(p, 53, t0, true, true, t0, &l), 0);
	t = mono_ms();
	execpend_release_pid(p, 53, 50 * MS, t0 + MS, &l);
	assert_in_range(mono_ms() - t, 40, 5000);
	assert_int_equal(count(l), 1);
	execpend_items_free(l);
	execpend_free(p);
}

/* Records late or lost in a storm: the waits share EXECPEND_WAIT_BUDGET_NS a second, so
 * a file event waits at most what is left of it (here far less than it asks), and the
 * exec is handed back. */
static void test_release_budget(void **state)
{
	struct execpend *p = mk();
	struct execpend_item *l = NULL;
	uint64_t t0 = 11000 * MS, t;

	(void)state;
	for (pid_t pid = 60; pid <= 63; pid++)
		assert_int_equal(put(p, pid, t0, true, true, t0, &l), 0);
	/* 150 of the 200 ms spent; no record came: lagging */
	execpend_release_pid(p, 60, 150 * MS, t0 + MS, &l);
	assert_int_equal(count(l), 1);
	execpend_items_free(l);
	l = NULL;
	assert_int_equal(execpend_claim(p, 62, t0, &l, NULL), EXECPEND_CLAIMED);
	/* asks a second, gets what is left (about 50 ms and what came back since) */
	t = mono_ms();
	execpend_release_pid(p, 61, 1000 * MS, t0 + MS, &l);
	t = mono_ms() - t;
	assert_in_range(t, 0, 600);
	assert_int_equal(count(l), 1);
	execpend_items_free(l);
	l = NULL;
	/* the budget spent: the next one barely waits */
	t = mono_ms();
	execpend_release_pid(p, 63, 1000 * MS, t0 + MS, &l);
	assert_in_range(mono_ms() - t, 0, 600);
	assert_int_equal(count(l), 1);
	execpend_items_free(l);
	execpend_free(p);
}

/* Two execs of one pid, the first's record never came: the second's record hands the
 * first back and claims the second. */
static void test_stale_same_pid(void **state)
{
	struct execpend *p = mk();
	struct execpend_item *l = NULL;

	(void)state;
	assert_int_equal(put(p, 30, 1000 * MS, true, true, 1000 * MS, &l), 0);
	assert_int_equal(put(p, 30, 1050 * MS, true, true, 1050 * MS, &l), 0);
	assert_int_equal(execpend_claim(p, 30, 1049 * MS, &l, NULL), EXECPEND_CLAIMED);
	assert_int_equal(count(l), 1);
	assert_int_equal(l->ev.ts_ns, 1000 * MS);
	execpend_items_free(l);
	l = NULL;
	execpend_expire(p, 0, true, &l);
	assert_null(l);
	execpend_free(p);
}

/* Full: the oldest held are handed back, never dropped; flush hands back the rest. */
/* The claimed item is handed over (with what the connector read), and no longer held. */
static void test_claim_hands_item(void **state)
{
	struct execpend *p = mk();
	struct execpend_item *l = NULL, *c = NULL;
	struct execpend_stats st;

	(void)state;
	assert_int_equal(put(p, 40, 1000 * MS, true, true, 1000 * MS, &l), 0);
	assert_int_equal(execpend_claim(p, 40, 1000 * MS, &l, &c), EXECPEND_CLAIMED);
	assert_non_null(c);
	assert_null(c->next);
	assert_int_equal(c->ev.pid, 40);
	assert_string_equal(c->x.cmdline, "true");
	assert_false(execpend_may_hold(p, 40));
	execpend_items_free(c);
	assert_int_equal(execpend_claim(p, 40, 1000 * MS, &l, &c), EXECPEND_NONE);
	assert_null(c);
	execpend_expire(p, 5000 * MS, true, &l);
	assert_null(l);   /* nothing left held: the item was not emitted twice */
	execpend_stats(p, &st);
	assert_int_equal(st.claimed, 1);
	assert_int_equal(st.fallback, 0);
	execpend_free(p);
}

/* A chroot'ed exec: the record's exe is under the root, the connector's is not. */
static void test_reroot(void **state)
{
	char exe[PATH_MAX];

	(void)state;
	snprintf(exe, sizeof(exe), "/usr/bin/ls");
	assert_true(execpend_reroot("/tmp/jail/usr/bin/ls", exe));
	assert_string_equal(exe, "/tmp/jail/usr/bin/ls");
	snprintf(exe, sizeof(exe), "/usr/bin/ls");
	assert_false(execpend_reroot("/usr/bin/ls", exe));   /* not chroot'ed */
	assert_string_equal(exe, "/usr/bin/ls");
	assert_false(execpend_reroot("/usr/bin/cat", exe));  /* another program (a later exec) */
	assert_false(execpend_reroot("/tmp/jail/xusr/bin/ls", exe));  /* not whole components */
	assert_false(execpend_reroot("", exe));
	snprintf(exe, sizeof(exe), "ls");
	assert_false(execpend_reroot("/jail/ls", exe));      /* not absolute */
	snprintf(exe, sizeof(exe), "/memfd:x (deleted)");
	assert_true(execpend_reroot("/jail/memfd:x (deleted)", exe));
}

static void test_full(void **state)
{
	struct execpend *p = mk();
	struct execpend_item *l = NULL;
	struct execpend_stats st;
	size_t n = EXECPEND_HELD_MAX + 10, back;

	(void)state;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(put(p, (pid_t)(100 + i), i * MS, true, true, i * MS, &l), 0);
	back = count(l);
	assert_int_equal(back, 10);
	execpend_items_free(l);
	l = NULL;
	execpend_activate(p, false, &l);
	assert_int_equal(count(l) + back, n);
	execpend_items_free(l);
	l = NULL;
	execpend_stats(p, &st);
	assert_int_equal(st.fallback, n);
	/* More tombstones than slots: the oldest make way. */
	execpend_activate(p, true, NULL);
	for (size_t i = 0; i < 2 * EXECPEND_SLOTS; i++) {
		assert_int_equal(put(p, (pid_t)(9000 + i), i * MS, false, false, i * MS, &l), 0);
		execpend_items_free(l);
		l = NULL;
	}
	execpend_stats(p, &st);
	assert_int_equal(st.fallback, n + 2 * EXECPEND_SLOTS);
	execpend_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inactive),
		cmocka_unit_test(test_claim_and_dup),
		cmocka_unit_test(test_expire),
		cmocka_unit_test(test_stale_same_pid),
		cmocka_unit_test(test_release_pid),
		cmocka_unit_test(test_release_waits_for_record),
		cmocka_unit_test(test_release_lagging),
		cmocka_unit_test(test_release_budget),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_claim_hands_item),
		cmocka_unit_test(test_reroot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
