/*
 * The socket holder lookup's cache (gateway/sockpid.h), against this process's own
 * descriptors in /proc: a "session" is a directory whose cgroup.procs names the pids
 * it holds (the walk reads only that file), so no root and no cgroup are needed.
 * Checked: a hit is the same answer as the walk; an entry is checked before it is used
 * (a closed or moved descriptor is not trusted); a pid found for one session is never
 * given for another's socket.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gateway/sockpid.h"

struct fixture {
	char a[64], b[64];   /* two sessions: a holds this process, b holds none */
};

static void write_procs(const char *dir, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char me[32];

	if (!fx)
		return -1;
	snprintf(fx->a, sizeof(fx->a), "/tmp/sg-sockpid-a.XXXXXX");
	snprintf(fx->b, sizeof(fx->b), "/tmp/sg-sockpid-b.XXXXXX");
	if (!mkdtemp(fx->a) || !mkdtemp(fx->b))
		return -1;
	snprintf(me, sizeof(me), "%d\n", (int)getpid());
	write_procs(fx->a, me);
	write_procs(fx->b, "");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char path[128];

	snprintf(path, sizeof(path), "%s/cgroup.procs", fx->a);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cgroup.procs", fx->b);
	unlink(path);
	rmdir(fx->a);
	rmdir(fx->b);
	free(fx);
	return 0;
}

static uint32_t inode_of(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return (uint32_t)st.st_ino;
}

static void test_walk_and_hit(void **state)
{
	struct fixture *fx = *state;
	struct sockpid_cache *c = sockpid_cache_new();
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	pid_t pid = 0;

	assert_non_null(c);
	assert_true(s >= 0);
	assert_int_equal(sockpid_find(fx->a, inode_of(s), &pid), 0);
	assert_int_equal(pid, getpid());
	pid = 0;
	assert_int_equal(sockpid_find_cached(c, fx->a, inode_of(s), 1000, &pid), 0);
	assert_int_equal(pid, getpid());
	/* The walk would now find nobody: a hit is the cache's (the holder still holds). */
	write_procs(fx->a, "");
	pid = 0;
	assert_int_equal(sockpid_find_cached(c, fx->a, inode_of(s), 1500, &pid), 0);
	assert_int_equal(pid, getpid());
	/* Past SOCKPID_CACHE_MS the entry is not used: walked, and not found. */
	assert_int_equal(sockpid_find_cached(c, fx->a, inode_of(s), 1000 + SOCKPID_CACHE_MS + 1,
					     &pid), -ENOENT);
	close(s);
	sockpid_cache_free(c);
}

static void test_checked_not_trusted(void **state)
{
	struct fixture *fx = *state;
	struct sockpid_cache *c = sockpid_cache_new();
	char me[32];
	int s = socket(AF_INET, SOCK_DGRAM, 0), moved;
	uint32_t ino;
	pid_t pid = 0;

	snprintf(me, sizeof(me), "%d\n", (int)getpid());
	write_procs(fx->a, me);
	assert_true(s >= 0);
	ino = inode_of(s);
	assert_int_equal(sockpid_find_cached(c, fx->a, ino, 1000, &pid), 0);
	/* The socket moves to another descriptor: the entry's readlink fails, the session's
	 * last holder is searched and still found. */
	moved = dup(s);
	assert_true(moved >= 0);
	close(s);
	pid = 0;
	assert_int_equal(sockpid_find_cached(c, fx->a, ino, 1100, &pid), 0);
	assert_int_equal(pid, getpid());
	/* Closed: nobody holds it, whatever the cache remembers. */
	close(moved);
	assert_int_equal(sockpid_find_cached(c, fx->a, ino, 1200, &pid), -ENOENT);
	sockpid_cache_free(c);
}

static void test_never_another_session(void **state)
{
	struct fixture *fx = *state;
	struct sockpid_cache *c = sockpid_cache_new();
	char me[32];
	int s1 = socket(AF_INET, SOCK_DGRAM, 0), s2 = socket(AF_INET, SOCK_DGRAM, 0);
	pid_t pid = 0;

	snprintf(me, sizeof(me), "%d\n", (int)getpid());
	write_procs(fx->a, me);
	assert_true(s1 >= 0 && s2 >= 0);
	/* This process is session a's last holder ... */
	assert_int_equal(sockpid_find_cached(c, fx->a, inode_of(s1), 1000, &pid), 0);
	/* ... and holds s2, but is not among session b's processes: not b's pid, neither
	 * for a socket it was seen holding nor for a new one. */
	assert_int_equal(sockpid_find_cached(c, fx->b, inode_of(s2), 1001, &pid), -ENOENT);
	assert_int_equal(sockpid_find_cached(c, fx->b, inode_of(s1), 1002, &pid), -ENOENT);
	close(s1);
	close(s2);
	sockpid_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_walk_and_hit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checked_not_trusted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_never_another_session, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
