/*
 * The socket holder lookup's cache (gateway/sockpid.h), against this process's own
 * descriptors in /proc: a "session" is a directory whose cgroup.procs names the pids
 * it holds (the walk reads only that file), so no root and no cgroup are needed.
 * Checked: a hit is the same answer as the walk; an entry is checked before it is used
 * (a closed or moved descriptor is not trusted); a pid found for one session is never
 * given for another's socket, nor once its process has exited and the pid come back for
 * a process outside the session (that case needs root: it sets ns_last_pid).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "gateway/sockpid.h"

struct fixture {
	char a[64], b[64];   /* two sessions: a holds this process, b holds none */
	pid_t child;         /* a child a test left behind when it failed (teardown kills it) */
	struct sockpid_cache *c;
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

	if (fx->child > 0) {
		kill(fx->child, SIGKILL);
		waitpid(fx->child, NULL, 0);
	}
	sockpid_cache_free(fx->c);
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

/*
 * A child that holds what this process holds (it inherits the descriptors) until killed,
 * or until this process ends: a failed assertion must not leave it holding ctest's
 * output pipe (ctest then waits for it until its timeout).
 */
static pid_t holder_child(void)
{
	pid_t parent = getpid(), p = fork();

	if (p == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(1);
		for (;;)
			pause();
	}
	assert_true(p > 0);
	return p;
}

static void kill_child(pid_t p)
{
	assert_int_equal(kill(p, SIGKILL), 0);
	assert_int_equal(waitpid(p, NULL, 0), p);
}

/* The next fork gets pid want (root: the host's ns_last_pid); 0 and the child, or -1. */
static pid_t child_with_pid(pid_t want)
{
	for (int tries = 0; tries < 20; tries++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		pid_t p;

		if (!f)
			return -1;
		fprintf(f, "%d", (int)want - 1);
		if (fclose(f) != 0)
			return -1;
		p = holder_child();
		if (p == want)
			return p;
		kill_child(p);   /* another process of the host forked first: again */
	}
	return -1;
}

static void test_pid_reused_elsewhere(void **state)
{
	struct fixture *fx = *state;
	struct timespec tick = { 0, 30 * 1000 * 1000 };
	int s = socket(AF_INET, SOCK_DGRAM, 0), fresh_s = socket(AF_INET, SOCK_DGRAM, 0);
	char procs[32];
	pid_t first, pid = 0;
	uint32_t ino, fresh_ino;

	assert_true(s >= 0 && fresh_s >= 0);
	ino = inode_of(s);
	fresh_ino = inode_of(fresh_s);
	if (geteuid() != 0 || access("/proc/sys/kernel/ns_last_pid", W_OK) != 0) {
		close(s);
		close(fresh_s);
		skip();
	}
	fx->c = sockpid_cache_new();
	assert_non_null(fx->c);
	/* The holder of s and fresh_s in session a (this process holds them too, but is in
	 * neither session). */
	first = fx->child = holder_child();
	snprintf(procs, sizeof(procs), "%d\n", (int)first);
	write_procs(fx->a, procs);
	write_procs(fx->b, "");
	assert_int_equal(sockpid_find_cached(fx->c, fx->a, ino, 1000, &pid), 0);
	assert_int_equal(pid, first);
	/* It exits; its pid comes back (a start time one clock tick later at least: a real
	 * wrap of the pid counter takes far longer) for a process of session b that holds
	 * s at the same descriptor, and fresh_s, a socket of session a never looked up. */
	kill_child(first);
	fx->child = 0;
	write_procs(fx->a, "");
	assert_int_equal(nanosleep(&tick, NULL), 0);
	fx->child = child_with_pid(first);
	close(s);
	close(fresh_s);
	if (fx->child < 0) {
		fx->child = 0;
		skip();   /* the host kept taking the pid: nothing tested, said so */
	}
	write_procs(fx->b, procs);
	/* Within SOCKPID_CACHE_MS of the walk, the entry and the session's last holder both
	 * name pid `first`, which holds both sockets now: not a process of session a. */
	assert_int_equal(sockpid_find_cached(fx->c, fx->a, ino, 1100, &pid), -ENOENT);
	assert_int_equal(sockpid_find_cached(fx->c, fx->a, fresh_ino, 1200, &pid), -ENOENT);
	/* Session b's own lookup finds it by the walk. */
	assert_int_equal(sockpid_find_cached(fx->c, fx->b, ino, 1300, &pid), 0);
	assert_int_equal(pid, first);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_walk_and_hit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checked_not_trusted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_never_another_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pid_reused_elsewhere, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
