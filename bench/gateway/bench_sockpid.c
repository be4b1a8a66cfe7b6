/*
 * bench_sockpid [PROCS] [SOCKETS] [N]: what a packet's pid lookup costs the queue worker
 * (gateway/sockpid.h), the walk of a session's descriptors against the per-worker cache.
 *
 * The "session" is a directory whose cgroup.procs names PROCS processes (this one last,
 * the worst place for the walk), each holding SOCKETS sockets; the sender is this
 * process. Timed, N lookups each:
 *   walk        sockpid_find: every descriptor of every process read (readlink) until
 *               the socket is found (each lookup before the cache, 2026-12-02)
 *   same        sockpid_find_cached of the same socket (a resolver client keeping its
 *               socket): one readlink
 *   new socket  a new socket of the session's last holder each time (socket() and
 *               close() included): that process's descriptors only
 * Prints one line of microseconds per lookup. Needs no root (no cgroup is made).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gateway/sockpid.h"

#define PROCS_MAX 256

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int open_sockets(int n)
{
	for (int i = 0; i < n; i++)
		if (socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) < 0)
			return -errno;
	return 0;
}

static uint32_t inode_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (uint32_t)st.st_ino : 0;
}

int main(int argc, char **argv)
{
	int procs = argc > 1 ? atoi(argv[1]) : 8, socks = argc > 2 ? atoi(argv[2]) : 20;
	long n = argc > 3 ? atol(argv[3]) : 2000;
	char dir[] = "/tmp/sg-bench-sockpid.XXXXXX", path[128];
	pid_t kids[PROCS_MAX], pid;
	struct sockpid_cache *c = NULL;
	double t0, walk, same, fresh;
	int s, ret = 1, nk = 0;
	uint32_t ino;
	FILE *f;

	if (procs < 1 || procs > PROCS_MAX || socks < 1 || socks > 1000 || n < 1) {
		fprintf(stderr, "usage: bench_sockpid [PROCS 1..%d] [SOCKETS 1..1000] [N]\n",
			PROCS_MAX);
		return 2;
	}
	if (!mkdtemp(dir)) {
		perror("bench_sockpid: mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "w");
	if (!f) {
		perror("bench_sockpid: cgroup.procs");
		goto out;
	}
	for (; nk < procs - 1; nk++) {
		kids[nk] = fork();
		if (kids[nk] < 0) {
			perror("bench_sockpid: fork");
			fclose(f);
			goto out;
		}
		if (kids[nk] == 0) {
			if (open_sockets(socks) != 0)
				_exit(1);
			pause();
			_exit(0);
		}
		fprintf(f, "%d\n", (int)kids[nk]);
	}
	fprintf(f, "%d\n", (int)getpid());
	if (fclose(f) != 0 || open_sockets(socks - 1) != 0 ||
	    (s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 || !(ino = inode_of(s))) {
		perror("bench_sockpid: set-up");
		goto out;
	}
	usleep(200000);   /* the children's sockets are open */
	c = sockpid_cache_new();
	if (!c)
		goto out;

	t0 = now_s();
	for (long i = 0; i < n; i++)
		if (sockpid_find(dir, ino, &pid) != 0 || pid != getpid())
			goto lost;
	walk = (now_s() - t0) / (double)n * 1e6;

	t0 = now_s();
	for (long i = 0; i < n; i++)
		if (sockpid_find_cached(c, dir, ino, 1000, &pid) != 0 || pid != getpid())
			goto lost;
	same = (now_s() - t0) / (double)n * 1e6;

	t0 = now_s();
	for (long i = 0; i < n; i++) {
		int x = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		int r = x < 0 ? -1 : sockpid_find_cached(c, dir, inode_of(x), 1000, &pid);

		if (x >= 0)
			close(x);
		if (r != 0 || pid != getpid())
			goto lost;
	}
	fresh = (now_s() - t0) / (double)n * 1e6;

	printf("processes %d, sockets each %d: walk %.1f us, same socket %.1f us, "
	       "new socket of the last holder %.1f us\n", procs, socks, walk, same, fresh);
	ret = 0;
	goto out;
lost:
	fprintf(stderr, "bench_sockpid: a lookup did not find this process\n");
out:
	sockpid_cache_free(c);
	for (int i = 0; i < nk; i++)
		if (kids[i] > 0)
			kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	unlink(path);
	rmdir(dir);
	return ret;
}
