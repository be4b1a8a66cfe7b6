/*
 * bench_gwload: the gateway bench's clients and its UDP echo peer (bench/gateway/run.sh).
 *
 *   bench_gwload conn IP PORT SECONDS THREADS HOST  HTTP/1.0 GETs of /s, one connection
 *                                                   each; prints "rate N" (conns/s)
 *   bench_gwload tls  IP PORT SECONDS THREADS SNI   full TLS handshakes (no resumption),
 *                                                   then close; prints "rate N"
 *   bench_gwload ka   IP PORT SECONDS THREADS HOST  HTTP/1.1 GETs of /s on one keep-alive
 *                                                   connection per thread (a new one when
 *                                                   the server closes); prints "rate N"
 *                                                   (requests/s)
 *   bench_gwload udp  IP PORT COUNT                 round trips on one socket (a decided
 *                                                   flow); prints "p50_us A p99_us B"
 *   bench_gwload udpnew IP PORT COUNT               one new socket (a new flow) per
 *                                                   round trip; same output
 *   bench_gwload echo IP PORT                       UDP echo server (runs until killed)
 *
 * Exit 0 on success, 1 with the reason on stderr. IPv4 only: the lab is.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

struct load {
	struct sockaddr_in to;
	const char *name;          /* Host header or SNI */
	bool tls;
	bool keepalive;            /* ka: many requests per connection */
	SSL_CTX *ctx;
	int64_t end_us;
	atomic_ulong done, failed;
};

static int64_t mono_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static int parse_addr(const char *ip, const char *port, struct sockaddr_in *sa)
{
	char *end;
	long p = strtol(port, &end, 10);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)p);
	if (*end || p <= 0 || p > 65535 || inet_pton(AF_INET, ip, &sa->sin_addr) != 1)
		return -EINVAL;
	return 0;
}

/* A connected TCP socket with a 2 s timeout both ways, or -1. */
static int tcp_connect(const struct sockaddr_in *to)
{
	struct timeval tv = { 2, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(fd, (const struct sockaddr *)to, sizeof(*to)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One HTTP/1.0 request, read to the server's close. */
static bool one_http(const struct load *l)
{
	char req[256], buf[4096];
	int fd = tcp_connect(&l->to), n;
	ssize_t got, total = 0;
	bool ok, status = false;

	if (fd < 0)
		return false;
	n = snprintf(req, sizeof(req), "GET /s HTTP/1.0\r\nHost: %s\r\n\r\n", l->name);
	ok = send(fd, req, (size_t)n, MSG_NOSIGNAL) == n;
	while (ok && (got = recv(fd, buf, sizeof(buf), 0)) > 0) {
		if (total == 0)
			status = got > 12 && memcmp(buf, "HTTP/1.1 200", 12) == 0;
		total += got;
	}
	close(fd);
	return ok && status;
}

/* One full TLS handshake (a fresh SSL each time: no resumption), then close. */
static bool one_tls(const struct load *l)
{
	int fd = tcp_connect(&l->to);
	SSL *s;
	bool ok;

	if (fd < 0)
		return false;
	s = SSL_new(l->ctx);
	ok = s && SSL_set_tlsext_host_name(s, l->name) == 1 && SSL_set_fd(s, fd) == 1 &&
	     SSL_connect(s) == 1;
	if (ok)
		(void)SSL_shutdown(s);   /* close_notify; not waiting for the peer's */
	SSL_free(s);
	close(fd);
	return ok;
}

/* The length of a response head ending in buf[0..n), with its Content-Length; 0: more. */
static size_t head_len(const char *buf, size_t n, size_t *clen)
{
	const char *end = memmem(buf, n, "\r\n\r\n", 4), *cl;

	if (!end)
		return 0;
	cl = memmem(buf, (size_t)(end - buf), "Content-Length:", 15);
	*clen = cl ? strtoul(cl + 15, NULL, 10) : 0;
	return (size_t)(end - buf) + 4;
}

/* One HTTP/1.1 request on fd, its whole response read. False: the connection is done. */
static bool one_ka_request(int fd, const struct load *l)
{
	char req[256], buf[8192];
	size_t have = 0, hl = 0, clen = 0;
	int n = snprintf(req, sizeof(req), "GET /s HTTP/1.1\r\nHost: %s\r\n\r\n", l->name);
	ssize_t got;

	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n)
		return false;
	while (hl == 0 || have < hl + clen) {
		got = recv(fd, buf + (hl ? 0 : have), hl ? sizeof(buf) : sizeof(buf) - have, 0);
		if (got <= 0)
			return false;
		have += (size_t)got;
		if (hl == 0 && (hl = head_len(buf, have, &clen)) != 0 &&
		    memcmp(buf, "HTTP/1.1 200", 12) != 0)
			return false;
		if (hl == 0 && have == sizeof(buf))
			return false;
	}
	return true;
}

/* Requests on keep-alive connections until the end; a closed one is replaced. */
static void ka_loop(struct load *l)
{
	int fd = -1;

	while (mono_us() < l->end_us) {
		if (fd < 0 && (fd = tcp_connect(&l->to)) < 0) {
			atomic_fetch_add(&l->failed, 1);
			continue;
		}
		if (one_ka_request(fd, l)) {
			atomic_fetch_add(&l->done, 1);
			continue;
		}
		close(fd);   /* the server's keepalive_requests, or a failure */
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
}

static void *load_thread(void *arg)
{
	struct load *l = arg;

	if (l->keepalive) {
		ka_loop(l);
		return NULL;
	}
	while (mono_us() < l->end_us) {
		bool ok = l->tls ? one_tls(l) : one_http(l);

		atomic_fetch_add(ok ? &l->done : &l->failed, 1);
	}
	return NULL;
}

static int run_load(struct load *l, double secs, int threads)
{
	pthread_t t[MAX_THREADS];
	int64_t start = mono_us();
	int i, ret = 0;

	l->end_us = start + (int64_t)(secs * 1e6);
	for (i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, load_thread, l) != 0)
			break;
	if (i == 0)
		return -EAGAIN;
	while (i-- > 0)
		(void)pthread_join(t[i], NULL);
	secs = (double)(mono_us() - start) / 1e6;
	printf("rate %.0f failed %lu\n", (double)atomic_load(&l->done) / secs, atomic_load(&l->failed));
	if (atomic_load(&l->done) == 0)
		ret = -EIO;
	return ret;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* One round trip on fd (or on a new socket when fd < 0); its time in µs, or -1. */
static int64_t one_rtt(int fd, const struct sockaddr_in *to, uint32_t seq)
{
	struct timeval tv = { 1, 0 };
	uint32_t back = 0;
	int64_t t0;
	int s = fd >= 0 ? fd : socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (s < 0)
		return -1;
	t0 = mono_us();
	ok = setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0 &&
	     sendto(s, &seq, sizeof(seq), 0, (const struct sockaddr *)to, sizeof(*to)) == sizeof(seq);
	/* A late echo of an earlier (timed-out) probe is skipped, not counted. */
	while (ok && back != seq)
		ok = recv(s, &back, sizeof(back), 0) == sizeof(back);
	if (fd < 0)
		close(s);
	return ok ? mono_us() - t0 : -1;
}

static int run_udp(const struct sockaddr_in *to, long count, bool fresh)
{
	int64_t *lat = calloc((size_t)count, sizeof(*lat));
	int fd = fresh ? -1 : socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	long n = 0, lost = 0;
	int ret = 0;

	if (!lat || (!fresh && fd < 0)) {
		free(lat);
		return -ENOMEM;
	}
	for (long i = 0; i < count; i++) {
		int64_t us = one_rtt(fd, to, (uint32_t)i + 1);

		if (us >= 0)
			lat[n++] = us;
		else
			lost++;
	}
	if (fd >= 0)
		close(fd);
	if (n == 0) {
		ret = -EIO;
	} else {
		qsort(lat, (size_t)n, sizeof(*lat), cmp_i64);
		printf("p50_us %lld p99_us %lld lost %ld\n", (long long)lat[n / 2],
		       (long long)lat[(n * 99) / 100], lost);
	}
	free(lat);
	return ret;
}

static int run_echo(const struct sockaddr_in *at)
{
	struct sockaddr_in from;
	socklen_t fl;
	char buf[2048];
	ssize_t n;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (const struct sockaddr *)at, sizeof(*at)) != 0)
		return -errno;
	for (;;) {
		fl = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0 && sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl) < 0)
			fprintf(stderr, "echo: sendto: %s\n", strerror(errno));
	}
}

static int main_load(int argc, char **argv, bool tls, bool keepalive)
{
	static struct load l;
	int threads = argc == 7 ? atoi(argv[5]) : 0, ret;

	if (argc != 7 || threads < 1 || threads > MAX_THREADS || parse_addr(argv[2], argv[3], &l.to))
		return -EINVAL;
	l.name = argv[6];
	l.keepalive = keepalive;
	l.tls = tls;
	if (tls) {
		l.ctx = SSL_CTX_new(TLS_client_method());
		if (!l.ctx)
			return -ENOMEM;
		/* The lab's self-signed certificate: the handshake is what is measured. */
		SSL_CTX_set_verify(l.ctx, SSL_VERIFY_NONE, NULL);
		SSL_CTX_set_session_cache_mode(l.ctx, SSL_SESS_CACHE_OFF);
	}
	ret = run_load(&l, atof(argv[4]), threads);
	SSL_CTX_free(l.ctx);
	return ret;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	const char *mode = argc > 1 ? argv[1] : "";
	int ret = -EINVAL;

	if (!strcmp(mode, "conn") || !strcmp(mode, "tls") || !strcmp(mode, "ka"))
		ret = main_load(argc, argv, !strcmp(mode, "tls"), !strcmp(mode, "ka"));
	else if ((!strcmp(mode, "udp") || !strcmp(mode, "udpnew")) && argc == 5 &&
		 parse_addr(argv[2], argv[3], &sa) == 0 && atol(argv[4]) > 0)
		ret = run_udp(&sa, atol(argv[4]), !strcmp(mode, "udpnew"));
	else if (!strcmp(mode, "echo") && argc == 4 && parse_addr(argv[2], argv[3], &sa) == 0)
		ret = run_echo(&sa);
	if (ret == -EINVAL)
		fprintf(stderr, "usage: bench_gwload conn|tls IP PORT SECONDS THREADS NAME | "
				"udp|udpnew IP PORT COUNT | echo IP PORT\n");
	else if (ret)
		fprintf(stderr, "bench_gwload %s: %s\n", mode, strerror(-ret));
	return ret ? 1 : 0;
}
