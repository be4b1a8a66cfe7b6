/*
 * bench_outage DIR PORT RATE WARM OUTAGE AFTER
 *
 * A syslog sink (RFC 5424 over TCP, octet counting; sinks/sink.h) delivers the real
 * journal to a receiver in this process listening on 127.0.0.1:PORT (run it in a
 * network namespace of its own: bench/sinks/run_outage.sh). process.exec events are
 * written at RATE/s for WARM + OUTAGE + AFTER seconds; after WARM the receiver drops its
 * connection and stops listening for OUTAGE seconds, then listens again. Each event
 * carries its number n; the receiver counts every n it gets. Reported: events written,
 * missing (never received: must be 0), duplicates (received more than once), the
 * catch-up time (from the end of the outage until every event written before it had
 * arrived), the time to drain everything after the last event, and the event-to-sink
 * latency p50/p99/max outside the outage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "index/index.h"
#include "journal/envelope.h"
#include "journal/journal.h"
#include "journal/keystore.h"
#include "sinks/sink.h"
#include "journal/tail.h"

struct rx {
	uint16_t port;
	uint64_t total;                 /* events that will be written */
	uint8_t *seen;                  /* per n: times received (saturates at 255) */
	atomic_uint_fast64_t contiguous; /* every n below this has arrived */
	atomic_uint_fast64_t received, dups;
	atomic_bool down, stop, measuring;
	uint64_t backlog;               /* events not yet received when the outage ends */
	atomic_uint_fast64_t target;    /* events written before the outage ended (0: not yet) */
	_Atomic double restored;        /* when the receiver listened again */
	_Atomic double first_after;     /* the first event received after that */
	_Atomic double caught;          /* every event below target received */
	double *lat;
	size_t n_lat, cap_lat;
};

static int64_t wall_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One syslog MSG: the journal line; only process.exec lines carry "n". */
static void on_msg(struct rx *r, const char *m, size_t len)
{
	const char *line = memmem(m, len, "{\"ts\":\"", 7), *p;
	uint64_t n;
	int64_t ts;

	if (!line || !memmem(line, len - (size_t)(line - m), "\"event\":\"process.exec\"", 22))
		return;
	p = memmem(line, len - (size_t)(line - m), "\"n\":", 4);
	if (!p)
		return;
	n = strtoull(p + 4, NULL, 10);
	if (n >= r->total)
		return;
	atomic_fetch_add(&r->received, 1);
	if (r->seen[n]) {
		atomic_fetch_add(&r->dups, 1);
	} else if (atomic_load(&r->measuring) && r->n_lat < r->cap_lat &&
		   line_ts_parse(line + 7, 27, &ts) == 0) {
		r->lat[r->n_lat++] = (double)(wall_us() - ts) / 1000.0;
	}
	if (r->seen[n] < 255)
		r->seen[n]++;
	for (uint64_t c = atomic_load(&r->contiguous); c < r->total && r->seen[c]; c++)
		atomic_store(&r->contiguous, c + 1);
	if (atomic_load(&r->target) && atomic_load(&r->first_after) == 0)
		atomic_store(&r->first_after, mono_s());
	if (atomic_load(&r->target) && atomic_load(&r->caught) == 0 &&
	    atomic_load(&r->contiguous) >= atomic_load(&r->target))
		atomic_store(&r->caught, mono_s());
}

/* Octet-counted frames "LEN SP MSG" out of buf; returns the bytes consumed. */
static size_t frames(struct rx *r, char *buf, size_t have)
{
	size_t off = 0;

	for (;;) {
		char *sp = memchr(buf + off, ' ', have - off);
		size_t len;

		if (!sp)
			return off;
		len = strtoul(buf + off, NULL, 10);
		if ((size_t)(sp + 1 - buf) + len > have)
			return off;
		on_msg(r, sp + 1, len);
		off = (size_t)(sp + 1 - buf) + len;
	}
}

static int listen_on(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0) {
		perror("bench_outage: listen");
		exit(1);
	}
	return fd;
}

/* Serves connections until down or stop; then closes everything. */
static void serve(struct rx *r, char *buf, size_t cap)
{
	int lfd = listen_on(r->port), cfd = -1;
	size_t have = 0;

	while (!atomic_load(&r->down) && !atomic_load(&r->stop)) {
		struct pollfd p = { cfd >= 0 ? cfd : lfd, POLLIN, 0 };
		ssize_t got;

		if (poll(&p, 1, 50) <= 0)
			continue;
		if (cfd < 0) {
			cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			have = 0;
			continue;
		}
		got = read(cfd, buf + have, cap - have);
		if (got <= 0) {
			close(cfd);
			cfd = -1;
			continue;
		}
		have += (size_t)got;
		size_t used = frames(r, buf, have);
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	if (cfd >= 0)
		close(cfd);
	close(lfd);
}

static void *receive(void *arg)
{
	struct rx *r = arg;
	size_t cap = 4 << 20;
	char *buf = malloc(cap);

	while (buf && !atomic_load(&r->stop)) {
		if (atomic_load(&r->down)) {
			usleep(50000);
			continue;
		}
		serve(r, buf, cap);
	}
	free(buf);
	return NULL;
}

static int start(const char *dir, uint16_t port, struct journal **j, struct sink **k,
		 struct tail_worker **w)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct journal_settings js;
	struct note_signer *signer = NULL;
	/* The daemon's defaults (sinks/sink_conf.c, daemon/investigate_glue.c). */
	struct sink_settings ss = {
		.name = "bench", .kind = SINK_SYSLOG_TCP, .addr = (struct sockaddr *)&a,
		.addr_len = sizeof(a), .host = "benchhost", .retry_min_ms = 200,
		.retry_max_ms = 30000, .batch_lines = 500, .confirm_ms = 1000,
	};
	struct tail_settings ts = { .fallback_ms = 1000, .linger_ms = 2, .step = sink_step };
	char jdir[4096], err[1024];
	int ret;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	journal_settings_default(&js, dir, "benchhost");
	ret = keystore_open(dir, "sandgate/benchhost", &signer, err, sizeof(err));
	if (ret == 0)
		ret = journal_open(j, &js, signer, err, sizeof(err));
	if (ret == 0)
		ret = journal_start(*j);
	if (ret == 0)
		ret = sink_new(k, dir, &ss);
	snprintf(jdir, sizeof(jdir), "%s/journal", dir);
	ts.journal_dir = jdir;
	ts.ctx = *k;
	if (ret == 0)
		ret = tail_worker_start(w, &ts);
	if (ret)
		fprintf(stderr, "bench_outage: start: %s %s\n", strerror(-ret), err);
	return ret;
}

static void tick(struct timespec *next, long rate)
{
	next->tv_nsec += 1000000000L / rate;
	if (next->tv_nsec >= 1000000000L) {
		next->tv_sec++;
		next->tv_nsec -= 1000000000L;
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
}

/* Writes the events, switching the receiver down after warm s and up after outage s. */
static int emit(struct rx *r, long rate, long warm, long outage, uint64_t *at_restore,
		double *restored)
{
	struct timespec next;
	int ret = 0;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (uint64_t i = 0; i < r->total && ret == 0; i++) {
		struct event *e;

		if (i == (uint64_t)(rate * warm)) {
			atomic_store(&r->measuring, false);
			atomic_store(&r->down, true);
			fprintf(stderr, "receiver down at event %llu\n", (unsigned long long)i);
		}
		if (i == (uint64_t)(rate * (warm + outage))) {
			*at_restore = i;
			*restored = mono_s();
			r->backlog = i - atomic_load(&r->contiguous);
			atomic_store(&r->restored, *restored);
			atomic_store(&r->target, i);
			atomic_store(&r->down, false);
			fprintf(stderr, "receiver up again at event %llu\n", (unsigned long long)i);
		}
		if (!(e = event_new("process.exec", "s-bench", EVENT_SRC_KERNEL)))
			return -ENOMEM;
		event_int(e, "pid", 1000 + (int64_t)(i % 30000));
		event_int(e, "n", (int64_t)i);
		event_str(e, "exe", "/usr/bin/python3");
		ret = event_emit(e);
		tick(&next, rate);
	}
	return ret;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Waits (at most limit s) until every event below n has arrived; returns when, or -1. */
static double wait_contiguous(struct rx *r, uint64_t n, double limit)
{
	double t0 = mono_s();

	while (atomic_load(&r->contiguous) < n) {
		if (mono_s() - t0 > limit)
			return -1;
		usleep(10000);
	}
	return mono_s();
}

/* Prints the figures; returns the number of events never received. */
static uint64_t report(struct rx *r, long rate, long outage, double restored, double caught,
		       double drain_s, double drained)
{
	uint64_t missing = 0;

	for (uint64_t i = 0; i < r->total; i++)
		missing += r->seen[i] == 0;
	qsort(r->lat, r->n_lat, sizeof(double), cmp);
	printf("events %llu rate %ld/s outage %ld s\n", (unsigned long long)r->total, rate, outage);
	printf("received %llu missing %llu duplicates %llu\n",
	       (unsigned long long)atomic_load(&r->received), (unsigned long long)missing,
	       (unsigned long long)atomic_load(&r->dups));
	printf("reconnect_s %.1f (the sink's backoff, retry_max 30 s) catch_up_s %.1f (backlog %llu "
	       "events at the end of the outage) drain_after_last_s %.2f\n",
	       atomic_load(&r->first_after) - restored, caught < 0 ? -1.0 : caught - restored,
	       (unsigned long long)r->backlog, drained < 0 ? -1.0 : drain_s);
	if (r->n_lat)
		printf("latency_before_outage n %zu p50_ms %.2f p99_ms %.2f max_ms %.2f\n", r->n_lat,
		       r->lat[r->n_lat / 2], r->lat[r->n_lat * 99 / 100], r->lat[r->n_lat - 1]);
	return missing;
}

int main(int argc, char **argv)
{
	struct rx r = { 0 };
	struct journal *j = NULL;
	struct sink *k = NULL;
	struct tail_worker *w = NULL;
	pthread_t th;
	long rate, warm, outage, after;
	uint64_t at_restore = 0, missing = 0;
	double restored = 0, caught, drained, end_emit;
	int ret;

	if (argc != 7)
		return fprintf(stderr, "usage: bench_outage DIR PORT RATE WARM OUTAGE AFTER\n"), 2;
	r.port = (uint16_t)strtoul(argv[2], NULL, 10);
	rate = strtol(argv[3], NULL, 10);
	warm = strtol(argv[4], NULL, 10);
	outage = strtol(argv[5], NULL, 10);
	after = strtol(argv[6], NULL, 10);
	if (rate <= 0 || warm <= 0 || outage < 0 || after <= 0 || !r.port)
		return fprintf(stderr, "bench_outage: bad arguments\n"), 2;
	r.total = (uint64_t)(rate * (warm + outage + after));
	r.seen = calloc(r.total, 1);
	r.cap_lat = r.total;
	r.lat = calloc(r.cap_lat, sizeof(double));
	if (!r.seen || !r.lat)
		return fprintf(stderr, "bench_outage: out of memory\n"), 1;
	atomic_store(&r.measuring, true);
	if (pthread_create(&th, NULL, receive, &r) != 0)
		return fprintf(stderr, "bench_outage: thread\n"), 1;
	ret = start(argv[1], r.port, &j, &k, &w);
	if (ret == 0) {
		event_set_sink(journal_submit, j);
		ret = emit(&r, rate, warm, outage, &at_restore, &restored);
		event_set_sink(NULL, NULL);
	}
	end_emit = mono_s();
	caught = ret == 0 && wait_contiguous(&r, at_restore, 600) >= 0 ? atomic_load(&r.caught) : -1;
	/* Everything written, also after the outage, must arrive. */
	drained = ret == 0 ? wait_contiguous(&r, r.total, 600) : -1;
	sleep(2);   /* late duplicates, if any, are counted too */
	atomic_store(&r.stop, true);
	tail_worker_stop(w);
	sink_free(k);
	pthread_join(th, NULL);
	if (j)
		journal_close(j);
	missing = report(&r, rate, outage, restored, caught, drained - end_emit, drained);
	free(r.seen);
	free(r.lat);
	return ret || missing ? 1 : 0;
}
