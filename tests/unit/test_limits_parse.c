/*
 * The resource limits parsers on files read off real kernels (tests/data/limits/: v1
 * from this host's hybrid hierarchy, v2 as a pure v2 6.x host writes them) and on the
 * kernel log's two OOM lines, including a child cgroup named to look like the summary.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attribution/attribution.h"

#define S(x) x, strlen(x)

struct blob {
	char p[4096];
	size_t n;
};

static void load(const char *name, struct blob *b)
{
	const char *dir = getenv("SANDGATE_TESTDATA");
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/limits/%s", dir ? dir : "tests/data", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	b->n = fread(b->p, 1, sizeof(b->p) - 1, f);
	fclose(f);
	assert_true(b->n > 0);
	b->p[b->n] = '\0';
}

static void test_memory(void **state)
{
	struct cg_mem_counters c = { 0, 0, 0 };
	struct blob b;
	uint64_t v = 0;

	(void)state;
	load("v2_memory.events", &b);
	assert_int_equal(cg_parse_memory_events(b.p, b.n, &c), 0);
	assert_int_equal(c.max_hits, 1532);
	assert_int_equal(c.oom_kill, 2);
	/* v1: the OOM counter lives in memory.oom_control (the limit hits in failcnt) */
	load("v1_memory.oom_control", &b);
	assert_int_equal(cg_parse_kv(b.p, b.n, "oom_kill", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(cg_parse_memory_events(b.p, b.n, &c), -ENOENT);
	assert_int_equal(cg_parse_memory_events(S("max 1\n"), &c), -ENOENT);
	assert_int_equal(cg_parse_memory_events(S("max 1\noom_kill -1\n"), &c), -EINVAL);
	/* "max" must not match "max_something" */
	assert_int_equal(cg_parse_memory_events(S("max_x 5\noom_kill 1\n"), &c), -ENOENT);
}

static void test_cpu(void **state)
{
	struct cg_cpu_counters c = { 0, 0, 0 };
	struct blob b;

	(void)state;
	load("v2_cpu.stat", &b);
	assert_int_equal(cg_parse_cpu_stat(b.p, b.n, &c), 0);
	assert_int_equal(c.nr_periods, 31);
	assert_int_equal(c.nr_throttled, 28);
	assert_int_equal(c.throttled_us, 995916);
	load("v1_cpu.stat", &b);
	memset(&c, 0, sizeof(c));
	assert_int_equal(cg_parse_cpu_stat(b.p, b.n, &c), 0);
	assert_int_equal(c.nr_throttled, 28);
	assert_int_equal(c.throttled_us, 995916);   /* ns in v1 */
	/* v2 without the cpu controller: usage only, no bandwidth figures */
	load("v2_cpu.stat.nocpu", &b);
	assert_int_equal(cg_parse_cpu_stat(b.p, b.n, &c), -ENOENT);
	assert_int_equal(cg_parse_cpu_stat(S("nr_throttled 1\n"), &c), -ENOENT);
	assert_int_equal(cg_parse_cpu_stat(S("nr_periods x\nnr_throttled 1\nthrottled_usec 2\n"),
					   &c), -EINVAL);
}

static void test_pids(void **state)
{
	struct blob b;
	uint64_t v = 0;

	(void)state;
	load("v1_pids.events", &b);
	assert_int_equal(cg_parse_pids_events(b.p, b.n, &v), 0);
	assert_int_equal(v, 4);
	load("v2_pids.events", &b);
	assert_int_equal(cg_parse_pids_events(b.p, b.n, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(cg_parse_pids_events(S("max\n"), &v), -ENOENT);
	assert_int_equal(cg_parse_pids_events(S(""), &v), -ENOENT);
}

static void test_value(void **state)
{
	struct blob b;
	uint64_t v = 0;

	(void)state;
	load("v1_memory.failcnt", &b);
	assert_int_equal(cg_parse_value(b.p, b.n, &v), 0);
	assert_int_equal(v, 115);
	/* memory.failcnt, memory.max_usage_in_bytes, pids.peak: one number and a newline */
	assert_int_equal(cg_parse_value(S("115\n"), &v), 0);
	assert_int_equal(v, 115);
	assert_int_equal(cg_parse_value(S("67108864"), &v), 0);
	assert_int_equal(v, 67108864);
	assert_int_equal(cg_parse_value(S("max\n"), &v), -EINVAL);   /* pids.max style */
	assert_int_equal(cg_parse_value(S("\n"), &v), -EINVAL);
	assert_int_equal(cg_parse_value(S("1 2\n"), &v), -EINVAL);
	assert_int_equal(cg_parse_value(S("123456789012345678901234567890123456789012345678901234567890123"),
					&v), -EINVAL);
}

static void test_kmsg(void **state)
{
	struct kmsg_oom k;
	struct blob b;

	(void)state;
	load("kmsg_oom_summary", &b);
	assert_int_equal(kmsg_parse_oom(b.p, b.n, &k), 0);
	assert_int_equal(k.pid, 1791);
	assert_string_equal(k.memcg, "/sgtest-1630/m1");
	assert_string_equal(k.comm, "tail");
	load("kmsg_oom_killed", &b);
	assert_int_equal(kmsg_parse_oom(b.p, b.n, &k), 0);
	assert_int_equal(k.pid, 1791);
	assert_string_equal(k.memcg, "");
	assert_string_equal(k.comm, "tail");
	/* A child cgroup named ",task=a,pid=6,uid=0": the pid is read from the right, the
	 * path stops at the first ",task=" (still inside the session), the name is the last. */
	load("kmsg_oom_tricky", &b);
	assert_int_equal(kmsg_parse_oom(b.p, b.n, &k), 0);
	assert_int_equal(k.pid, 42);
	assert_string_equal(k.memcg, "/sandgate/s1/x");
	assert_string_equal(k.comm, "evil");
	assert_int_equal(kmsg_parse_oom(S("6,1,2,-;eth0: link up\n"), &k), -ENOENT);
	assert_int_equal(kmsg_parse_oom(S("no header"), &k), -EINVAL);
	assert_int_equal(kmsg_parse_oom(S("6,1,2,-;oom-kill:task_memcg=/a,task=x,pid=0,uid=0"),
					&k), -EINVAL);
	assert_int_equal(kmsg_parse_oom(S("6,1,2,-;oom-kill:pid=5,uid=0"), &k), -EINVAL);
	assert_int_equal(kmsg_parse_oom(S("3,1,2,-;Out of memory: Killed process 99999999999"),
					&k), -EINVAL);
	assert_int_equal(kmsg_parse_oom(S("3,1,2,-;Out of memory: Killed process 77 (a) b"),
					&k), 0);
	assert_int_equal(k.pid, 77);
	assert_string_equal(k.comm, "a");
	/* Text after the message (continuation lines) is not the message. */
	assert_int_equal(kmsg_parse_oom(S("3,1,2,-;x\n Killed process 5 (a) of memory"), &k),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_pids),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_kmsg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
