/*
 * bench_sessions SOCKET [N]: drives a running sandgated through N full session
 * lifecycles (create, start, terminate, cleanup) over one control connection, one
 * request at a time, and prints sessions per second and the latency of each verb
 * (p50/p99), then the same for `ping` as the floor of a control round trip.
 * bench/sessions/run.sh starts a daemon and runs this; figures in docs/bench-sessions.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *const verbs[] = { "session.create", "session.start", "session.terminate",
				     "session.cleanup", "ping" };
#define NVERBS 5

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One request, one reply line; returns the seconds it took, or -1 on an error reply. */
static double call(int fd, const char *line)
{
	char buf[65536];
	size_t len = 0;
	double t0 = now_s();
	ssize_t n;

	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
		return -1;
	while (len < sizeof(buf) - 1) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return -1;
		len += (size_t)n;
		if (buf[len - 1] == '\n')
			break;
	}
	buf[len] = '\0';
	return strstr(buf, "\"ok\":true") ? now_s() - t0 : -1;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *verb, double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	printf("%-18s n=%-6zu p50 %8.1f us   p99 %8.1f us   max %8.1f us\n", verb, n,
	       v[n / 2] * 1e6, v[n * 99 / 100] * 1e6, v[n - 1] * 1e6);
}

static int run(int fd, size_t n, double *lat[NVERBS])
{
	char line[256];
	size_t i, k;
	double t0 = now_s(), t;

	for (i = 0; i < n; i++) {
		for (k = 0; k < NVERBS; k++) {
			if (k == 4)
				snprintf(line, sizeof(line), "{\"verb\":\"ping\"}\n");
			else
				snprintf(line, sizeof(line), "{\"verb\":\"%s\",\"args\":{\"id\":\"b%zu\"%s}}\n",
					 verbs[k], i, k == 0 ? ",\"memory\":67108864,\"pids\":64" : "");
			t = call(fd, line);
			if (t < 0) {
				fprintf(stderr, "bench_sessions: %s b%zu failed\n", verbs[k], i);
				return -1;
			}
			lat[k][i] = t;
		}
	}
	t = now_s() - t0;
	printf("%zu sessions created, started, terminated and cleaned up in %.2f s: %.0f "
	       "sessions/s (with one ping each)\n", n, t, (double)n / t);
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000, k;
	double *lat[NVERBS];
	int fd, ret = 1;

	if (argc < 2 || n == 0) {
		fprintf(stderr, "usage: bench_sessions SOCKET [N]\n");
		return 2;
	}
	fd = connect_to(argv[1]);
	if (fd < 0) {
		fprintf(stderr, "bench_sessions: cannot connect to %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (k = 0; k < NVERBS; k++)
		lat[k] = calloc(n, sizeof(double));
	if (lat[0] && lat[1] && lat[2] && lat[3] && lat[4] && run(fd, n, lat) == 0) {
		for (k = 0; k < NVERBS; k++)
			report(verbs[k], lat[k], n);
		ret = 0;
	}
	for (k = 0; k < NVERBS; k++)
		free(lat[k]);
	close(fd);
	return ret;
}
