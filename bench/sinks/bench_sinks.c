/*
 * bench_sinks DIR RATE SECONDS
 *
 * Event-to-sink latency: events go through the real journal at RATE events/s for
 * SECONDS, a file sink (sinks/sink.h, driven by its follower thread, journal/tail.h)
 * delivers them into a FIFO, and a reader takes the arrival time of each line minus
 * the event's own ts (set when it was built). Prints: events p50_ms p99_ms max_ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "journal/envelope.h"
#include "index/index.h"
#include "journal/journal.h"
#include "journal/keystore.h"
#include "sinks/sink.h"
#include "journal/tail.h"

struct reader {
	const char *fifo;
	double *lat;
	size_t n, cap;
};

static int64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void sample(struct reader *r, const char *line, size_t len)
{
	struct line_envelope env;
	int64_t ts;

	if (r->n < r->cap && line_envelope_parse(line, len, &env) == 0 &&
	    env.event_len == 12 && memcmp(env.event, "process.exec", 12) == 0 &&
	    line_ts_parse(env.ts, 27, &ts) == 0)
		r->lat[r->n++] = (double)(now_us() - ts) / 1000.0;
}

static void *read_fifo(void *arg)
{
	struct reader *r = arg;
	char *buf = malloc(1 << 20);
	size_t have = 0;
	ssize_t got;
	int fd = open(r->fifo, O_RDONLY);

	while (buf && fd >= 0 && (got = read(fd, buf + have, (1 << 20) - have)) > 0) {
		char *p = buf, *nl;

		have += (size_t)got;
		while ((nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			sample(r, p, (size_t)(nl - p));
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int emit_at_rate(long rate, long secs)
{
	struct timespec next;
	int ret = 0;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long i = 0; i < rate * secs && ret == 0; i++) {
		struct event *e = event_new("process.exec", "s-bench", EVENT_SRC_KERNEL);

		if (!e)
			return -ENOMEM;
		event_int(e, "pid", 1000 + i % 30000);
		event_str(e, "exe", "/usr/bin/python3");
		ret = event_emit(e);
		/* Paced by absolute deadlines: sleeping late does not lower the rate. */
		next.tv_nsec += 1000000000L / rate;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return ret;
}

static int start(const char *dir, struct journal **j, struct sink **k, struct tail_worker **w,
		 const char *fifo)
{
	struct journal_settings js;
	struct note_signer *signer = NULL;
	struct sink_settings ss = {
		.name = "bench", .kind = SINK_FILE, .path = fifo, .retry_min_ms = 10,
		.retry_max_ms = 100, .batch_lines = 500, .confirm_ms = 1000,
	};
	struct tail_settings ts = { .fallback_ms = 1000, .linger_ms = 2, .step = sink_step };
	char jdir[4096], err[1024];
	int ret;

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
	return ret;
}

int main(int argc, char **argv)
{
	struct reader r = { 0 };
	struct journal *j = NULL;
	struct sink *k = NULL;
	struct tail_worker *w = NULL;
	pthread_t th;
	char fifo[4096];
	long rate, secs;
	int ret;

	if (argc != 4)
		return fprintf(stderr, "usage: bench_sinks DIR RATE SECONDS\n"), 2;
	rate = strtol(argv[2], NULL, 10);
	secs = strtol(argv[3], NULL, 10);
	snprintf(fifo, sizeof(fifo), "%s/sink.fifo", argv[1]);
	r.cap = (size_t)(rate * secs);
	r.lat = calloc(r.cap + 1, sizeof(double));
	r.fifo = fifo;
	if (rate <= 0 || secs <= 0 || !r.lat || mkfifo(fifo, 0600) < 0)
		return fprintf(stderr, "bench_sinks: bad arguments or fifo\n"), 1;
	pthread_create(&th, NULL, read_fifo, &r);
	ret = start(argv[1], &j, &k, &w, fifo);
	if (ret == 0) {
		event_set_sink(journal_submit, j);
		ret = emit_at_rate(rate, secs);
		event_set_sink(NULL, NULL);
	}
	sleep(2);   /* the tail of the run reaches the sink */
	tail_worker_stop(w);
	sink_free(k);   /* closes the FIFO: the reader sees its end */
	pthread_join(th, NULL);
	if (j)
		journal_close(j);
	qsort(r.lat, r.n, sizeof(double), cmp);
	if (r.n)
		printf("%zu %.2f %.2f %.2f\n", r.n, r.lat[r.n / 2], r.lat[r.n * 99 / 100],
		       r.lat[r.n - 1]);
	free(r.lat);
	return ret || !r.n ? 1 : 0;
}
