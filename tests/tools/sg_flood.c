/*
 * sg_flood: the flooder of t_gateway_flood (issue 14 item 6), a session process making
 * blocked attempts as fast as it is told. Python made 24k-86k attempts in 10 s on this
 * machine, short of the 100k the test needs.
 *
 *   sg_flood tcp|udp ADDR PORT RATE SECS [PROCS]
 *
 * tcp: non-blocking connect() then close(), one new flow (one SYN) per attempt.
 * udp: one DNS query (A bad.web.test) per attempt from one socket per process (answers
 * read and thrown away; a datagram the ruleset rejected, EPERM, counts; a socket whose
 * send buffer is full, its datagrams waiting in the queue, is replaced by a new one). PROCS processes (default 2) share RATE attempts/s for SECS
 * seconds. Prints the attempts made (a datagram the socket buffer refused is not one).
 * Exit 0, or 2 on bad arguments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int attempt_tcp(const struct sockaddr_in *a)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int ok;

	if (s < 0)
		return 0;
	ok = connect(s, (const struct sockaddr *)a, sizeof(*a)) == 0 || errno == EINPROGRESS;
	close(s);
	return ok;
}

/* 1: sent (or rejected by the ruleset: EPERM), 0: not sent, -1: the socket is full. */
static int attempt_udp(int u, const struct sockaddr_in *a, uint16_t id)
{
	static const uint8_t q[] = "\x03" "bad" "\x03" "web" "\x04" "test" "\x00\x00\x01\x00\x01";
	uint8_t m[12 + sizeof(q) - 1], junk[512];

	memset(m, 0, 12);
	m[0] = (uint8_t)(id >> 8);
	m[1] = (uint8_t)id;
	m[2] = 0x01;   /* RD */
	m[5] = 1;      /* QDCOUNT */
	memcpy(m + 12, q, sizeof(q) - 1);
	while (recv(u, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		;
	/* EPERM: the datagram reached the ruleset and was rejected there (the flood limit):
	 * an attempt. EAGAIN/ENOBUFS: it never left the socket: none. */
	if (sendto(u, m, sizeof(m), 0, (const struct sockaddr *)a, sizeof(*a)) ==
	    (ssize_t)sizeof(m) || errno == EPERM)
		return 1;
	return errno == EAGAIN || errno == ENOBUFS ? -1 : 0;
}

static uint64_t flood(int tcp, const struct sockaddr_in *a, double rate, double secs)
{
	int u = tcp ? -1 : socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	double t0 = now_s(), el;
	uint64_t n = 0, tries = 0;

	if (!tcp && u < 0)
		return 0;
	while ((el = now_s() - t0) < secs) {
		if ((double)tries > el * rate) {
			struct timespec d = { 0, 200000 };

			nanosleep(&d, NULL);
			continue;
		}
		for (int i = 0; i < 20; i++, tries++) {
			int r = tcp ? attempt_tcp(a) : attempt_udp(u, a, (uint16_t)tries);

			if (r < 0) {
				/* Its datagrams wait in the queue and hold its send buffer: go on
				 * from a new socket, as a flooder would. */
				close(u);
				u = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
				if (u < 0)
					return n;
				continue;
			}
			n += (uint64_t)r;
		}
	}
	if (u >= 0)
		close(u);
	return n;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int procs = argc > 6 ? atoi(argv[6]) : 2, fds[2], tcp;
	uint64_t total = 0, n;
	double rate, secs;

	if (argc < 6 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "udp")) ||
	    inet_pton(AF_INET, argv[2], &a.sin_addr) != 1 || procs < 1 || procs > 16) {
		fprintf(stderr, "usage: sg_flood tcp|udp ADDR PORT RATE SECS [PROCS]\n");
		return 2;
	}
	tcp = !strcmp(argv[1], "tcp");
	a.sin_port = htons((uint16_t)atoi(argv[3]));
	rate = atof(argv[4]) / procs;
	secs = atof(argv[5]);
	if (pipe(fds) != 0)
		return 1;
	for (int i = 0; i < procs; i++)
		if (fork() == 0) {
			n = flood(tcp, &a, rate, secs);
			_exit(write(fds[1], &n, sizeof(n)) == sizeof(n) ? 0 : 1);
		}
	close(fds[1]);
	while (read(fds[0], &n, sizeof(n)) == sizeof(n))
		total += n;
	while (wait(NULL) > 0)
		;
	printf("%llu\n", (unsigned long long)total);
	return 0;
}
