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
 *
 * A third column feeds detection each line with its shape (journal/shape.h), as the
 * daemon does for the lines its writer still holds: the line's leaf hash computed (the
 * handoff's check that the line is the writer's), the event built from the shape, no
 * JSON parse. Shapes come from rebuilding each event with the builder (journal/event.h)
 * and framing it as the journal does, untimed; every column then reads those lines.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detect/detect.h"
#include "journal/envelope.h"
#include "journal/event.h"
#include "journal/journal_impl.h"
#include "journal/merkle.h"
#include "journal/shape.h"

struct lines {
	char **v;
	size_t *len;
	size_t n, cap;
	struct shape *shape;      /* per line, from rebuilding it */
	size_t same;              /* lines rebuilt byte for byte as read */
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

static const char *const envelope_keys[] = {
	"ts", "seq", "prev", "event", "host", "session_id", "source",
};

static bool is_envelope(const char *k)
{
	for (size_t i = 0; i < sizeof(envelope_keys) / sizeof(envelope_keys[0]); i++)
		if (strcmp(k, envelope_keys[i]) == 0)
			return true;
	return false;
}

/* v added to e under key (NULL in an array), as a producer would have built it. */
static void add_value(struct event *e, const char *key, json_t *v)
{
	const char *k;
	json_t *m;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_STRING:
		event_strn(e, key, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		event_int(e, key, json_integer_value(v));
		break;
	case JSON_REAL:
		event_double(e, key, json_real_value(v));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		event_bool(e, key, json_is_true(v));
		break;
	case JSON_NULL:
		event_null(e, key);
		break;
	case JSON_OBJECT:
		event_object_begin(e, key);
		json_object_foreach(v, k, m)
			add_value(e, k, m);
		event_object_end(e);
		break;
	case JSON_ARRAY:
		event_array_begin(e, key);
		json_array_foreach(v, i, m)
			add_value(e, NULL, m);
		event_array_end(e);
		break;
	}
}

static enum event_source source_of(const char *s)
{
	if (s && strcmp(s, "kernel") == 0)
		return EVENT_SRC_KERNEL;
	if (s && strcmp(s, "gateway") == 0)
		return EVENT_SRC_GATEWAY;
	if (s && strcmp(s, "orchestrator") == 0)
		return EVENT_SRC_ORCHESTRATOR;
	return EVENT_SRC_SANDGATE;
}

/* Line i rebuilt through the builder and the journal's framing, with its shape. */
static int reshape(struct lines *L, size_t i)
{
	json_t *o = json_loadb(L->v[i], L->len[i], JSON_ALLOW_NUL, NULL), *v;
	struct line_envelope env;
	struct journal j = { 0 };
	struct buf frame, line;
	struct event *e;
	uint8_t prev[MERKLE_HASH_LEN] = { 0 };
	size_t shape_len, frame_len;
	int64_t us;
	const char *k;
	int ret = -EINVAL;

	if (!o || line_envelope_parse(L->v[i], L->len[i], &env) != 0 ||
	    line_ts_parse(env.ts, LINE_TS_LEN, &us) != 0) {
		json_decref(o);
		return -EINVAL;
	}
	j.host = (char *)json_string_value(json_object_get(o, "host"));
	if (!j.host)
		j.host = "host";
	e = event_new(json_string_value(json_object_get(o, "event")),
		      json_string_value(json_object_get(o, "session_id")),
		      source_of(json_string_value(json_object_get(o, "source"))));
	if (!e) {
		json_decref(o);
		return -ENOMEM;
	}
	e->ts.tv_sec = us / 1000000;
	e->ts.tv_nsec = (long)(us % 1000000) * 1000;
	json_object_foreach(o, k, v)
		if (!is_envelope(k))
			add_value(e, k, v);
	buf_init(&frame);
	buf_init(&line);
	shape_len = line_frame(&frame, &j, e, true);
	event_free(e);
	frame_len = frame.len - shape_len;
	line_encode_framed(&line, frame.data, frame_len, env.seq, prev);
	if (shape_len && !frame.oom && !line.oom) {
		struct shape *s = &L->shape[i];

		s->n = s->cap = shape_len / sizeof(struct shape_tok);
		s->tok = malloc(shape_len);
		if (s->tok) {
			memcpy(s->tok, frame.data + frame_len, shape_len);
			/* the prev is zeros here: compare what follows it */
			L->same += line.len - 1 == L->len[i] &&
				   memcmp(line.data + (env.prev - L->v[i]) + 64,
					  env.prev + 64, L->len[i] - (size_t)(env.prev - L->v[i]) - 64) == 0;
			free(L->v[i]);
			L->v[i] = strndup(line.data, line.len - 1);
			L->len[i] = line.len - 1;
			ret = L->v[i] ? 0 : -ENOMEM;
		}
	}
	buf_free(&frame);
	buf_free(&line);
	json_decref(o);
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
static volatile uint8_t hash_sink;

static int on_alert(void *ctx, const struct detect_alert *a)
{
	(void)ctx;
	(void)a;
	alerts++;
	return 0;
}

/* One pass; per-line ns into t[], their sum into *sum. which: 0 parse only, 1 detection,
 * 2 detection from the lines' shapes. */
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
		} else if (which == 1 && detect_feed_line(d, L->v[i], L->len[i]) != 0) {
			return -ENOMEM;
		} else if (which == 2) {
			uint8_t leaf[MERKLE_HASH_LEN];

			/* What the daemon's reader pays to take the shape: hashing the line
			 * (journal/handoff.c handoff_get). */
			merkle_leaf_hash(L->v[i], L->len[i], leaf);
			hash_sink ^= leaf[0];
			if (detect_feed_shaped(d, L->v[i], L->len[i],
					       L->shape[i].n ? &L->shape[i] : NULL) != 0)
				return -ENOMEM;
		}
		t[i] = now_ns() - t0;
		*sum += t[i];
	}
	qsort(t, L->n, sizeof(*t), cmp_u64);
	return 0;
}

#define COLS 3   /* parse only, detection parsing, detection from shapes */

static int run(struct detect *d, const struct lines *L, unsigned passes)
{
	uint64_t *t = calloc(L->n, sizeof(*t));
	uint64_t *med[COLS], *p99[COLS], *mean[COLS], sum;
	int ret = t ? 0 : -ENOMEM;

	for (int w = 0; w < COLS; w++) {
		med[w] = calloc(passes, sizeof(uint64_t));
		p99[w] = calloc(passes, sizeof(uint64_t));
		mean[w] = calloc(passes, sizeof(uint64_t));
		if (!med[w] || !p99[w] || !mean[w])
			ret = -ENOMEM;
	}
	printf("pass  parse_p50_ns  parse_p99_ns  detect_p50_ns  detect_p99_ns  rules_only_p50_ns"
	       "  parse_mean_ns  detect_mean_ns  shaped_p50_ns  shaped_p99_ns  shaped_mean_ns\n");
	for (unsigned p = 0; ret == 0 && p < passes; p++) {
		for (int w = 0; ret == 0 && w < COLS; w++) {
			ret = pass(d, L, w, t, &sum);
			med[w][p] = t[L->n / 2];
			p99[w][p] = t[L->n * 99 / 100];
			mean[w][p] = sum / L->n;
		}
		if (ret == 0)
			printf("%4u  %12llu  %12llu  %13llu  %13llu  %17lld  %13llu  %14llu  %13llu"
			       "  %13llu  %14llu\n", p,
			       (unsigned long long)med[0][p], (unsigned long long)p99[0][p],
			       (unsigned long long)med[1][p], (unsigned long long)p99[1][p],
			       (long long)med[1][p] - (long long)med[0][p],
			       (unsigned long long)mean[0][p], (unsigned long long)mean[1][p],
			       (unsigned long long)med[2][p], (unsigned long long)p99[2][p],
			       (unsigned long long)mean[2][p]);
	}
	if (ret == 0) {
		for (int w = 0; w < COLS; w++) {
			qsort(med[w], passes, sizeof(uint64_t), cmp_u64);
			qsort(mean[w], passes, sizeof(uint64_t), cmp_u64);
		}
		printf("median over %u passes of %zu lines: parse %llu ns, parse+rules %llu ns, "
		       "rules %lld ns per line (x%.2f of the parse); %llu alerts\n", passes, L->n,
		       (unsigned long long)med[0][passes / 2], (unsigned long long)med[1][passes / 2],
		       (long long)med[1][passes / 2] - (long long)med[0][passes / 2],
		       (double)med[1][passes / 2] / (double)med[0][passes / 2],
		       (unsigned long long)alerts);
		printf("mean per line (median over passes): parse %llu ns, detection %llu ns "
		       "(x%.2f of the parse), detection from shapes %llu ns (x%.2f of detection "
		       "parsing)\n", (unsigned long long)mean[0][passes / 2],
		       (unsigned long long)mean[1][passes / 2],
		       (double)mean[1][passes / 2] / (double)mean[0][passes / 2],
		       (unsigned long long)mean[2][passes / 2],
		       (double)mean[2][passes / 2] / (double)mean[1][passes / 2]);
	}
	free(t);
	for (int w = 0; w < COLS; w++) {
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
	if (ret == 0 && !(L.shape = calloc(L.n, sizeof(*L.shape))))
		ret = -ENOMEM;
	for (size_t i = 0; ret == 0 && i < L.n; i++)
		if ((ret = reshape(&L, i)) == -EINVAL)
			ret = 0;   /* without a shape: fed as it is (counted below) */
	if (ret == 0) {
		size_t shaped = 0;

		for (size_t i = 0; i < L.n; i++)
			shaped += L.shape[i].n > 0;
		printf("%zu lines, %zu with a shape, %zu rebuilt byte for byte as read\n", L.n,
		       shaped, L.same);
	}
	if (ret == 0)
		ret = detect_new(&d, &s, r);
	if (ret == 0)
		ret = run(d, &L, passes);
	if (ret)
		fprintf(stderr, "bench_detect: %s\n", strerror(-ret));
	detect_free(d);
	for (size_t i = 0; i < L.n; i++) {
		free(L.v[i]);
		if (L.shape)
			shape_free(&L.shape[i]);
	}
	free(L.shape);
	free(L.v);
	free(L.len);
	return ret ? 1 : 0;
}
