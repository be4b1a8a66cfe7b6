/*
 * bench_detect RULES_DIR JOURNAL_DIR [PASSES]
 *
 * Cost of detection per journal line with a whole rules set, over the lines of a real
 * journal (bench/detect/run.sh writes one with tests/tools/sg_genevents), side by side
 * with the baseline that any follower pays: parsing the line with jansson. Each line is
 * timed on its own (CLOCK_MONOTONIC; the clock's own cost is in both columns), in
 * PASSES passes; prints the median, p99 and mean per line of each pass's figures, and
 * the median over passes. The mean counts what the median hides: lines of a type no
 * rule reads cost the engine almost nothing, the others a whole parse.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detect/detect.h"

struct lines {
	char **v;
	size_t *len;
	size_t n, cap;
};

static int add_line(struct lines *L, const char *s, size_t n)
{
	if (L->n == L->cap) {
		size_t cap = L->cap ? L->cap * 2 : 4096;
		char **v = realloc(L->v, cap * sizeof(*v));
		size_t *len = v ? realloc(L->len, cap * sizeof(*len)) : NULL;

		if (!v || !len)
			return -ENOMEM;
		L->v = v;
		L->len = len;
		L->cap = cap;
	}
	if (!(L->v[L->n] = strndup(s, n)))
		return -ENOMEM;
	L->len[L->n++] = n;
	return 0;
}

static int is_jsonl(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 6 && strcmp(d->d_name + n - 6, ".jsonl") == 0;
}

static int read_journal(const char *dir, struct lines *L)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, is_jsonl, alphasort), ret = 0;
	char path[4096], *line = NULL;
	size_t cap = 0;

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		FILE *f;
		ssize_t got;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		free(names[i]);
		f = fopen(path, "re");
		if (!f) {
			ret = -errno;
			continue;
		}
		while (ret == 0 && (got = getline(&line, &cap, f)) > 1)
			ret = add_line(L, line, (size_t)got - 1);
		fclose(f);
	}
	free(names);
	free(line);
	return ret;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t alerts;

static int on_alert(void *ctx, const struct detect_alert *a)
{
	(void)ctx;
	(void)a;
	alerts++;
	return 0;
}

/* One pass; per-line ns into t[], their sum into *sum. which: 0 parse only, 1 detection. */
static int pass(struct detect *d, const struct lines *L, int which, uint64_t *t,
		uint64_t *sum)
{
	*sum = 0;
	for (size_t i = 0; i < L->n; i++) {
		uint64_t t0 = now_ns();

		if (which == 0) {
			json_t *j = json_loadb(L->v[i], L->len[i], JSON_ALLOW_NUL, NULL);

			if (!j)
				return -EINVAL;
			json_decref(j);
		} else if (detect_feed_line(d, L->v[i], L->len[i]) != 0) {
			return -ENOMEM;
		}
		t[i] = now_ns() - t0;
		*sum += t[i];
	}
	qsort(t, L->n, sizeof(*t), cmp_u64);
	return 0;
}

static int run(struct detect *d, const struct lines *L, unsigned passes)
{
	uint64_t *t = calloc(L->n, sizeof(*t));
	uint64_t *med[2], *p99[2], *mean[2], sum;
	int ret = 0;

	med[0] = calloc(passes, sizeof(uint64_t));
	med[1] = calloc(passes, sizeof(uint64_t));
	p99[0] = calloc(passes, sizeof(uint64_t));
	p99[1] = calloc(passes, sizeof(uint64_t));
	mean[0] = calloc(passes, sizeof(uint64_t));
	mean[1] = calloc(passes, sizeof(uint64_t));
	if (!t || !med[0] || !med[1] || !p99[0] || !p99[1] || !mean[0] || !mean[1])
		ret = -ENOMEM;
	printf("pass  parse_p50_ns  parse_p99_ns  detect_p50_ns  detect_p99_ns  rules_only_p50_ns"
	       "  parse_mean_ns  detect_mean_ns\n");
	for (unsigned p = 0; ret == 0 && p < passes; p++) {
		for (int w = 0; ret == 0 && w < 2; w++) {
			ret = pass(d, L, w, t, &sum);
			med[w][p] = t[L->n / 2];
			p99[w][p] = t[L->n * 99 / 100];
			mean[w][p] = sum / L->n;
		}
		if (ret == 0)
			printf("%4u  %12llu  %12llu  %13llu  %13llu  %17lld  %13llu  %14llu\n", p,
			       (unsigned long long)med[0][p], (unsigned long long)p99[0][p],
			       (unsigned long long)med[1][p], (unsigned long long)p99[1][p],
			       (long long)med[1][p] - (long long)med[0][p],
			       (unsigned long long)mean[0][p], (unsigned long long)mean[1][p]);
	}
	if (ret == 0) {
		qsort(med[0], passes, sizeof(uint64_t), cmp_u64);
		qsort(med[1], passes, sizeof(uint64_t), cmp_u64);
		qsort(mean[0], passes, sizeof(uint64_t), cmp_u64);
		qsort(mean[1], passes, sizeof(uint64_t), cmp_u64);
		printf("median over %u passes of %zu lines: parse %llu ns, parse+rules %llu ns, "
		       "rules %lld ns per line (x%.2f of the parse); %llu alerts\n", passes, L->n,
		       (unsigned long long)med[0][passes / 2], (unsigned long long)med[1][passes / 2],
		       (long long)med[1][passes / 2] - (long long)med[0][passes / 2],
		       (double)med[1][passes / 2] / (double)med[0][passes / 2],
		       (unsigned long long)alerts);
		printf("mean per line (median over passes): parse %llu ns, detection %llu ns "
		       "(x%.2f of the parse)\n", (unsigned long long)mean[0][passes / 2],
		       (unsigned long long)mean[1][passes / 2],
		       (double)mean[1][passes / 2] / (double)mean[0][passes / 2]);
	}
	free(t);
	for (int w = 0; w < 2; w++) {
		free(med[w]);
		free(p99[w]);
		free(mean[w]);
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct detect_settings s = { .rate_max = 10, .rate_window_ms = 60000,
				     .on_alert = on_alert };
	struct detect_rules *r = NULL;
	struct lines L = { 0 };
	struct detect *d = NULL;
	unsigned passes = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 9;
	int ret;

	if (argc < 3 || passes == 0) {
		fprintf(stderr, "usage: bench_detect RULES_DIR JOURNAL_DIR [PASSES]\n");
		return 2;
	}
	ret = detect_rules_load_paths(&r, &argv[1], 1, NULL, &errs);
	if (ret) {
		config_errors_print(&errs, stderr);
		return 1;
	}
	config_errors_free(&errs);
	printf("%zu rules\n", detect_rules_count(r));
	ret = read_journal(argv[2], &L);
	if (ret == 0 && L.n == 0)
		ret = -ENOENT;
	if (ret == 0)
		ret = detect_new(&d, &s, r);
	if (ret == 0)
		ret = run(d, &L, passes);
	if (ret)
		fprintf(stderr, "bench_detect: %s\n", strerror(-ret));
	detect_free(d);
	for (size_t i = 0; i < L.n; i++)
		free(L.v[i]);
	free(L.v);
	free(L.len);
	return ret ? 1 : 0;
}
