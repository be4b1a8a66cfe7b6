/*
 * The engine: one journal line in, parsed once, every rule that wants its event type
 * evaluated, detectors fed, alerts rate-limited per rule and session and handed to the
 * caller. Time is the events' own `ts`, so windows and rate limits mean the same when a
 * follower catches up on old lines as when it keeps pace, and tests are exact.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect_int.h"
#include "detect/engine_int.h"
#include "journal/envelope.h"
#include "journal/shape.h"

/* n digits at s, or -1. */
static int64_t digits(const char *s, int n)
{
	int64_t v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/*
 * "2026-06-29T10:04:00.123456Z" (the journal's own form; fewer fraction digits too) ->
 * µs since the epoch; 0 when unreadable. By hand: sscanf + timegm cost a microsecond.
 */
static int64_t ts_us_of(const char *s)
{
	int64_t y, mo, d, h, mi, sec, us = 0;
	int k = 0;

	if (!s || strlen(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
	    s[13] != ':' || s[16] != ':')
		return 0;
	y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
	h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
	if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || mi < 0 || sec < 0)
		return 0;
	if (s[19] == '.')
		for (k = 0; k < 6 && s[20 + k] >= '0' && s[20 + k] <= '9'; k++)
			us = us * 10 + (s[20 + k] - '0');
	for (; k < 6; k++)
		us *= 10;
	return ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000000 + sec * 1000000 + us;
}

int detect_new(struct detect **out, const struct detect_settings *s, struct detect_rules *rules)
{
	struct detect *d = calloc(1, sizeof(*d));
	int ret;

	if (!d) {
		detect_rules_free(rules);
		return -ENOMEM;
	}
	d->s = *s;
	if (!d->s.rate_window_ms)
		d->s.rate_window_ms = 60000;
	pthread_mutex_init(&d->mu, NULL);
	d->rules = rules;
	d->per_rule = calloc(detect_rules_count(rules) + 1, sizeof(*d->per_rule));
	d->n_per_rule = detect_rules_count(rules);
	ret = d->per_rule ? domains_open(&d->domains, s->state_dir) : -ENOMEM;
	if (ret) {
		detect_free(d);
		return ret;
	}
	*out = d;
	return 0;
}

void detect_set_rules(struct detect *d, struct detect_rules *r)
{
	uint64_t *pr = calloc(detect_rules_count(r) + 1, sizeof(*pr));

	pthread_mutex_lock(&d->mu);
	sessions_reset_rules(d);
	detect_rules_free(d->rules);
	d->rules = r;
	if (pr) {   /* without memory the old counters stay: only the first n are read */
		free(d->per_rule);
		d->per_rule = pr;
		d->n_per_rule = detect_rules_count(r);
	}
	pthread_mutex_unlock(&d->mu);
}

void detect_free(struct detect *d)
{
	if (!d)
		return;
	sessions_free_all(d);
	detect_rules_free(d->rules);
	domains_free(d->domains);
	free(d->per_rule);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

static bool rate_ok(struct detect *d, struct sess *s, size_t ri, int64_t ts, uint64_t *supp)
{
	struct rate_ent *r = &s->rate[ri];

	if (ts - r->start_us >= (int64_t)d->s.rate_window_ms * 1000 || ts < r->start_us) {
		r->start_us = ts;
		r->count = 0;
	}
	if (d->s.rate_max && r->count >= d->s.rate_max) {
		r->suppressed++;
		d->st.suppressed++;
		return false;
	}
	r->count++;
	*supp = r->suppressed;
	r->suppressed = 0;
	return true;
}

static int raise_alert(struct detect *d, const struct engine_view *v, const struct eval_ctx *x,
		       struct det_hit *hit)
{
	struct detect_alert a = { .rule = v->r->id, .severity = v->r->severity,
				  .session_id = v->s->sid[0] ? v->s->sid : NULL,
				  .trigger = v->event, .tags = v->r->tags, .n_tags = v->r->n_tags };
	struct eval_ctx mx = *x;
	json_t *merged = NULL;
	char *summary;
	int ret;

	if (sess_alloc_rules(v->s, d->rules->n))
		return -ENOMEM;
	if (!rate_ok(d, v->s, v->rule_idx, v->ts_us, &a.suppressed))
		return 0;
	if (hit->extra) {
		merged = json_copy(x->ev);
		if (!merged || json_object_update(merged, hit->extra)) {
			json_decref(merged);
			return -ENOMEM;
		}
		mx.ev = merged;
	}
	summary = tmpl_render(&v->r->summary, &mx);
	json_decref(merged);
	if (!summary)
		return -ENOMEM;
	a.summary = summary;
	a.refs = hit->refs;
	a.n_refs = hit->n_refs;
	ret = d->s.on_alert ? d->s.on_alert(d->s.ctx, &a) : 0;
	free(summary);
	d->st.alerts++;
	if (v->rule_idx < d->n_per_rule)
		d->per_rule[v->rule_idx]++;
	if (ret)
		d->st.emit_errors++;
	return 0;
}

static int eval_rules(struct detect *d, struct engine_view *v, const struct eval_ctx *x)
{
	uint32_t h = event_hash(v->event);
	int ret = 0;

	for (size_t i = 0; i < d->rules->n && ret == 0; i++) {
		const struct drule *r = &d->rules->v[i];
		struct det_hit hit = { .n_refs = 0 };
		bool matched;
		int got;

		if (!rule_wants(r, v->event, h))
			continue;
		matched = !r->cond || cond_eval(r->cond, x);
		v->rule_idx = i;
		v->r = r;
		if (r->det == DET_NONE) {
			if (!matched)
				continue;
			hit.refs[hit.n_refs++] = v->seq;
			got = 1;
		} else {
			got = det_run(v, x, matched, &hit);
		}
		if (got == 1)
			ret = raise_alert(d, v, x, &hit);
		else if (got < 0)
			ret = got;
		json_decref(hit.extra);
	}
	return ret;
}

static const char *base_of(const char *p)
{
	const char *slash = p ? strrchr(p, '/') : NULL;

	return slash ? slash + 1 : p;
}

/* Programs that pick what they do from argv[0]: for them argv[0] is the truth. */
static bool multicall(const char *n)
{
	return strcmp(n, "busybox") == 0 || strcmp(n, "kmod") == 0 || strcmp(n, "toybox") == 0;
}

/*
 * For the dynamic loader (ld-linux*.so* /usr/bin/curl ARGS): the index in args of the
 * loaded program's first argument (after the loader's options and the program), so
 * detectors read the program's own arguments; 0 otherwise.
 */
static json_int_t loader_args_from(json_t *ev, const char *exe_base)
{
	json_t *args = json_object_get(ev, "args"), *a;
	bool skip = false;
	size_t i;

	if (!exe_base || !(strncmp(exe_base, "ld-linux", 8) == 0 || strcmp(exe_base, "ld.so") == 0 ||
			   (strncmp(exe_base, "ld-", 3) == 0 && strstr(exe_base, ".so"))))
		return 0;
	json_array_foreach(args, i, a) {
		const char *s = json_string_value(a);

		if (skip || !s) {
			skip = false;
			continue;
		}
		if (strncmp(s, "--", 2) == 0) {
			skip = strcmp(s, "--library-path") == 0 || strcmp(s, "--preload") == 0 ||
			       strcmp(s, "--audit") == 0 || strcmp(s, "--argv0") == 0;
			continue;
		}
		return (json_int_t)i + 1;
	}
	return 0;
}

/*
 * cmd_name, what rules on process.exec key on: the program that ran, by what the caller
 * cannot choose. The sensor's exe_known_as (a well-known program under any name, a copy
 * included), else the name of `program` (exe; for the loader the program it loads),
 * else of exe; argv[0] only when nothing else is known or for multi-call binaries
 * (busybox: argv[0] chooses the applet). argv0_name keeps argv[0]'s name; args_from is
 * where the program's own arguments start (the loader's come first).
 */
static void add_cmd_name(json_t *ev)
{
	const char *cmd = json_string_value(json_object_get(ev, "cmd"));
	const char *exe = json_string_value(json_object_get(ev, "exe"));
	const char *prog = json_string_value(json_object_get(ev, "program"));
	const char *known = json_string_value(json_object_get(ev, "exe_known_as"));
	const char *name = known ? known : base_of(prog ? prog : exe);

	if (cmd)
		json_object_set_new(ev, "argv0_name", json_string(base_of(cmd)));
	if (!name || !*name || (multicall(name) && cmd))
		name = cmd ? base_of(cmd) : NULL;
	if (name)
		json_object_set_new(ev, "cmd_name", json_string(name));
	json_object_set_new(ev, "args_from", json_integer(loader_args_from(ev, base_of(exe))));
}

static int feed(struct detect *d, json_t *ev)
{
	const char *type = json_string_value(json_object_get(ev, "event"));
	const char *sid = json_string_value(json_object_get(ev, "session_id"));
	struct engine_view v = { .domains = d->domains, .n_rules = d->rules->n };
	struct eval_ctx x = { .ev = ev };
	int ret;

	if (!type || strcmp(type, "alert") == 0)
		return 0;
	v.event = type;
	v.seq = (uint64_t)json_integer_value(json_object_get(ev, "seq"));
	v.ts_us = ts_us_of(json_string_value(json_object_get(ev, "ts")));
	v.s = sess_get(d, sid ? sid : "");
	if (!v.s)
		return -ENOMEM;
	if (strcmp(type, "session.create") == 0)
		sess_set_info(v.s, ev);
	if (strcmp(type, "process.exec") == 0) {
		add_cmd_name(ev);
		sess_note_exec(v.s, &x, v.seq);
	}
	x.session = v.s->info;
	ret = eval_rules(d, &v, &x);
	if (strcmp(type, "session.cleanup") == 0)
		sess_drop(d, v.s);
	return ret;
}

/*
 * Whether anything here reads an event of this type: a rule that lists it (or lists
 * none), or the engine's own book of sessions and processes (feed above). The others,
 * net.flow and process.exit among them, are counted and not parsed: the JSON parse is
 * most of what a line costs here (docs/bench-detect.md).
 */
static bool type_read(const struct detect *d, const char *line, size_t len)
{
	static const char *const book[] = { "session.create", "process.exec", "session.cleanup" };
	struct line_envelope env;
	char type[LINE_EVENT_MAX];
	uint32_t h;

	/* An envelope not where it belongs: the whole line is read (and judged bad). */
	if (line_envelope_parse(line, len, &env) != 0 || env.event_len >= sizeof(type))
		return true;
	memcpy(type, env.event, env.event_len);
	type[env.event_len] = '\0';
	for (size_t i = 0; i < sizeof(book) / sizeof(book[0]); i++)
		if (strcmp(type, book[i]) == 0)
			return true;
	h = event_hash(type);
	for (size_t i = 0; i < d->rules->n; i++)
		if (rule_wants(&d->rules->v[i], type, h))
			return true;
	return false;
}

/*
 * The line read as every reader takes it (journal/envelope.h): duplicate keys accepted,
 * the last one winning, as lines written before 2026-12 repeated the envelope's
 * `source` in package.install and file.mount (now `registry` and `device`). The event
 * type is the envelope's, at its fixed place: keys are the journal's own literals, so
 * no later "event" key can say otherwise.
 */
int detect_feed_shaped(struct detect *d, const char *line, size_t len,
		       const struct shape *shape)
{
	json_t *ev = NULL;
	bool ok, read, shaped = false;
	int ret = 0;

	pthread_mutex_lock(&d->mu);
	d->st.lines++;
	read = type_read(d, line, len);
	if (!read)
		d->st.unread++;
	pthread_mutex_unlock(&d->mu);
	if (!read)
		return 0;
	if (shape) {
		ret = shape_to_json(line, len, shape, &ev);
		if (ret == -ENOMEM)
			return ret;
		shaped = ret == 0;
	}
	ok = shaped || line_json_load(line, len, &ev) == 0;
	pthread_mutex_lock(&d->mu);
	if (shaped)
		d->st.shaped++;
	else
		d->st.parsed++;
	if (shape && !shaped)
		d->st.shape_refused++;
	if (!ok)
		d->st.bad_lines++;
	ret = ok ? feed(d, ev) : 0;
	pthread_mutex_unlock(&d->mu);
	json_decref(ev);
	return ret;
}

int detect_feed_line(struct detect *d, const char *line, size_t len)
{
	return detect_feed_shaped(d, line, len, NULL);
}

int detect_flush(struct detect *d)
{
	int ret;

	pthread_mutex_lock(&d->mu);
	ret = domains_flush(d->domains);
	pthread_mutex_unlock(&d->mu);
	return ret;
}

void detect_get_stats(struct detect *d, struct detect_stats *st)
{
	pthread_mutex_lock(&d->mu);
	*st = d->st;
	st->rules = detect_rules_count(d->rules);
	st->sessions = d->n_sess;
	pthread_mutex_unlock(&d->mu);
}

int detect_metrics(struct detect *d, FILE *f)
{
	int bad = 0;

	pthread_mutex_lock(&d->mu);
	fprintf(f, "# HELP sandgate_detect_lines_total Journal lines evaluated by detection\n"
		   "# TYPE sandgate_detect_lines_total counter\n"
		   "sandgate_detect_lines_total %llu\n"
		   "# HELP sandgate_detect_lines_unread_total Lines of event types no rule reads "
		   "(counted in lines_total, not parsed)\n"
		   "# TYPE sandgate_detect_lines_unread_total counter\n"
		   "sandgate_detect_lines_unread_total %llu\n"
		   "# HELP sandgate_detect_lines_parsed_total Lines read by parsing their JSON "
		   "(no shape from the writer: behind it, or written before this run)\n"
		   "# TYPE sandgate_detect_lines_parsed_total counter\n"
		   "sandgate_detect_lines_parsed_total %llu\n"
		   "# HELP sandgate_detect_lines_shaped_total Lines read from the writer's shape, "
		   "without a parse\n"
		   "# TYPE sandgate_detect_lines_shaped_total counter\n"
		   "sandgate_detect_lines_shaped_total %llu\n"
		   "# HELP sandgate_detect_shapes_refused_total Shapes that did not describe "
		   "their line (the line was parsed)\n"
		   "# TYPE sandgate_detect_shapes_refused_total counter\n"
		   "sandgate_detect_shapes_refused_total %llu\n"
		   "# HELP sandgate_detect_alerts_suppressed_total Alerts dropped by the rate limit\n"
		   "# TYPE sandgate_detect_alerts_suppressed_total counter\n"
		   "sandgate_detect_alerts_suppressed_total %llu\n"
		   "# HELP sandgate_detect_rules Rules loaded\n# TYPE sandgate_detect_rules gauge\n"
		   "sandgate_detect_rules %zu\n"
		   "# HELP sandgate_detect_alerts_total Alerts raised, by rule\n"
		   "# TYPE sandgate_detect_alerts_total counter\n",
		(unsigned long long)d->st.lines, (unsigned long long)d->st.unread,
		(unsigned long long)d->st.parsed, (unsigned long long)d->st.shaped,
		(unsigned long long)d->st.shape_refused,
		(unsigned long long)d->st.suppressed,
		detect_rules_count(d->rules));
	for (size_t i = 0; i < d->n_per_rule && i < detect_rules_count(d->rules); i++)
		fprintf(f, "sandgate_detect_alerts_total{rule=\"%s\",severity=\"%s\"} %llu\n",
			d->rules->v[i].id, d->rules->v[i].severity,
			(unsigned long long)d->per_rule[i]);
	bad = ferror(f) ? -EIO : 0;
	pthread_mutex_unlock(&d->mu);
	return bad;
}
