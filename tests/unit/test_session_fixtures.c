/*
 * The cgroup layer against fixture directories shaped like a pure-v2 host (this VM is
 * hybrid, so the v2 memory files are only ever seen here), and the pause snapshot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attribution/attribution.h"
#include "journal/event.h"

static char root[] = "/tmp/sgfix.XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	char path[256];

	(void)state;
	if (!mkdtemp(root))
		return -1;
	snprintf(path, sizeof(path), "%s/sg", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sg/s1", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/work", root);
	return mkdir(path, 0755);
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_events_and_oom(void **state)
{
	struct cg_host h = { 0 };
	bool populated, frozen;
	uint64_t n = 0;

	(void)state;
	snprintf(h.v2root, sizeof(h.v2root), "%s", root);
	put("/sg/s1/cgroup.events", "populated 1\nfrozen 0\n");
	assert_int_equal(cg_events(&h, "/sg/s1", &populated, &frozen), 0);
	assert_true(populated);
	assert_false(frozen);
	put("/sg/s1/memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\noom_group_kill 0\n");
	assert_int_equal(cg_oom_kills(&h, "/sg/s1", 0, &n), 0);
	assert_int_equal(n, 2);
	/* The kernel already says frozen: freeze returns at once. */
	put("/sg/s1/cgroup.freeze", "0\n");
	put("/sg/s1/cgroup.events", "populated 1\nfrozen 1\n");
	assert_int_equal(cg_freeze(&h, "/sg/s1", true, 50), 0);
	/* ... and a freeze the kernel never confirms times out. */
	put("/sg/s1/cgroup.events", "populated 1\nfrozen 0\n");
	assert_int_equal(cg_freeze(&h, "/sg/s1", true, 20), -ETIMEDOUT);
}

static void test_snapshot(void **state)
{
	struct cg_host h = { 0 };
	struct snapshot *snap = NULL;
	struct event *e = event_new("session.resume", "s1", EVENT_SRC_ORCHESTRATOR);
	char work[256], procs[32], *body;
	size_t nf = 0, np = 0;

	(void)state;
	assert_non_null(e);
	snprintf(h.v2root, sizeof(h.v2root), "%s", root);
	snprintf(work, sizeof(work), "%s/work", root);
	snprintf(procs, sizeof(procs), "%d\n", (int)getpid());
	put("/sg/s1/cgroup.procs", procs);
	put("/work/a.txt", "a");
	put("/work/b.txt", "b");
	assert_int_equal(snapshot_take(&h, "/sg/s1", work, &snap), 0);
	put("/work/a.txt", "changed");
	put("/work/c.txt", "new");
	put("/sg/s1/cgroup.procs", "");
	snprintf(procs, sizeof(procs), "%s/work/b.txt", root);
	unlink(procs);
	assert_int_equal(snapshot_diff_emit(snap, &h, "/sg/s1", work, e, "changed_while_paused",
					    &nf, &np), 0);
	buf_putc(&e->body, '\0');
	body = e->body.data;
	assert_non_null(strstr(body, "\"modified\":[\"a.txt\"]"));
	assert_non_null(strstr(body, "\"created\":[\"c.txt\"]"));
	assert_non_null(strstr(body, "\"deleted\":[\"b.txt\"]"));
	assert_non_null(strstr(body, "\"vanished\":["));
	assert_int_equal(nf, 3);
	assert_int_equal(np, 1);
	snapshot_free(snap);
	event_free(e);
}

static void test_pidcache(void **state)
{
	struct pidcache *c = NULL;
	char id[SESSION_ID_MAX + 1] = "x";
	int i;

	(void)state;
	assert_int_equal(pidcache_new(&c, 16), 0);
	/* Many lookups of the same (pid, start time) are hits; the table never overflows. */
	for (i = 0; i < 100; i++) {
		assert_int_equal(pidcache_lookup(c, "/no-such-parent-xyz", getpid(), id,
						 sizeof(id)), 0);
		assert_string_equal(id, "");
	}
	assert_int_equal(pidcache_lookup(c, "/p", 0, id, sizeof(id)), -EINVAL);
	assert_int_equal(pidcache_lookup(c, "/p", 0x3fffffff, id, sizeof(id)), -ESRCH);
	pidcache_forget(c, getpid());
	pidcache_forget_session(c, "s1");
	assert_int_equal(pidcache_fork(c, "/p", getppid(), getpid()), 0);
	pidcache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pidcache),
		cmocka_unit_test(test_events_and_oom),
		cmocka_unit_test(test_snapshot),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
