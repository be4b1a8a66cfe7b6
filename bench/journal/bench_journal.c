/*
 * bench_journal MODE DIR N
 *
 * MODE journal: N realistic events through the real journal (queue, writer, chain,
 *   Merkle, Ed25519 checkpoints every 1000 events, syncer with the default fsync
 *   policy), timed from the first emit until journal_close returned (all durable).
 * MODE plain: the same lines encoded and written with one buffered write per 256 KiB,
 *   no chain, no hashes, no checkpoints, no fsync: the path without sandgate's evidence.
 *
 * Prints one line: mode events seconds events_per_s us_per_event bytes_per_event cpu_s
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "journal/journal.h"
#include "journal/journal_impl.h"
#include "journal/keystore.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

/* A process.exec-shaped event, about the size of the real ones. */
static struct event *make_event(uint64_t i)
{
	struct event *e = event_new("process.exec", "sess-7f3a9c", EVENT_SRC_KERNEL);

	if (!e)
		return NULL;
	event_uint(e, "pid", 4000 + i % 30000);
	event_uint(e, "ppid", 3999);
	event_uint(e, "uid", 1000);
	event_uint(e, "euid", 1000);
	event_str(e, "cwd", "/home/agent/work");
	event_str(e, "exe", "/usr/bin/python3.11");
	event_str(e, "cmd", "python3");
	event_array_begin(e, "args");
	event_str(e, NULL, "-m");
	event_str(e, NULL, "pip");
	event_str(e, NULL, "install");
	event_str(e, NULL, "requests==2.31.0");
	event_array_end(e);
	event_bool(e, "argv_complete", true);
	return e;
}

/* Bytes of the segments in dir/journal once the journal is closed: the stats read before
 * the close would miss what was still queued. */
static uint64_t journal_bytes(const char *dir)
{
	char path[4096];
	struct dirent *de;
	struct stat sb;
	uint64_t total = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/journal", dir);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, ".jsonl"))
			continue;
		snprintf(path, sizeof(path), "%s/journal/%s", dir, de->d_name);
		if (stat(path, &sb) == 0)
			total += (uint64_t)sb.st_size;
	}
	closedir(d);
	return total;
}

static int run_journal(const char *dir, uint64_t n, uint64_t *bytes)
{
	struct journal_settings js;
	struct note_signer *signer = NULL;
	struct journal *j = NULL;
	char err[1024];
	uint64_t i;
	int ret;

	journal_settings_default(&js, dir, "benchhost");
	if (getenv("BENCH_SHAPE_MEMORY"))   /* bytes; 0: no handoff (to measure its cost) */
		js.handoff_bytes = (size_t)strtoull(getenv("BENCH_SHAPE_MEMORY"), NULL, 10);
	ret = keystore_open(dir, "sandgate/benchhost", &signer, err, sizeof(err));
	if (ret == 0)
		ret = journal_open(&j, &js, signer, err, sizeof(err));
	if (ret == 0)
		ret = journal_start(j);
	if (ret) {
		fprintf(stderr, "bench_journal: %s\n", err);
		return ret;
	}
	event_set_sink(journal_submit, j);
	for (i = 0; i < n && ret == 0; i++)
		ret = event_emit(make_event(i));
	event_set_sink(NULL, NULL);
	ret = journal_close(j) || ret;
	*bytes = journal_bytes(dir);
	return ret;
}

static int run_plain(const char *dir, uint64_t n, uint64_t *bytes)
{
	static const uint8_t zero[MERKLE_HASH_LEN];
	struct journal j;
	struct buf out;
	char path[4096];
	uint64_t i;
	FILE *f;

	memset(&j, 0, sizeof(j));
	j.host = "benchhost";
	snprintf(path, sizeof(path), "%s/plain.jsonl", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	buf_init(&out);
	*bytes = 0;
	for (i = 0; i < n; i++) {
		struct event *e = make_event(i);

		line_encode(&out, &j, e, i, zero);
		event_free(e);
		if (out.len >= 256 * 1024 || i + 1 == n) {
			fwrite(out.data, 1, out.len, f);
			*bytes += out.len;
			buf_reset(&out);
		}
	}
	buf_free(&out);
	return fclose(f);
}

int main(int argc, char **argv)
{
	uint64_t n, bytes = 0;
	double t0, t1, c0;
	int ret;

	if (argc != 4 || (strcmp(argv[1], "journal") && strcmp(argv[1], "plain"))) {
		fprintf(stderr, "usage: bench_journal journal|plain DIR N\n");
		return 2;
	}
	n = strtoull(argv[3], NULL, 10);
	c0 = cpu_s();
	t0 = now_s();
	ret = strcmp(argv[1], "journal") == 0 ? run_journal(argv[2], n, &bytes)
					       : run_plain(argv[2], n, &bytes);
	t1 = now_s();
	if (ret) {
		fprintf(stderr, "bench_journal: run failed\n");
		return 1;
	}
	printf("%s %llu %.3f %.0f %.3f %.1f %.3f\n", argv[1], (unsigned long long)n, t1 - t0,
	       (double)n / (t1 - t0), (t1 - t0) * 1e6 / (double)n, (double)bytes / (double)n,
	       cpu_s() - c0);
	return 0;
}
