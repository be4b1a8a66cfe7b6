/*
 * Detection's wiring: the engine (detect/detect.h) follows the journal files in its own
 * thread like the index and the sinks (journal/tail.h), from a durable cursor
 * (STATE_DIR/detect/cursor), and every alert it raises becomes an `alert` event.
 * Rules are reloaded by SIGHUP and by the `detect.reload` verb; a rules set with errors
 * is refused and the running one kept.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fileio.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "daemon/daemon.h"
#include "detect/detect.h"
#include "journal/envelope.h"
#include "journal/event.h"
#include "journal/follow.h"
#include "journal/handoff.h"
#include "journal/journal.h"
#include "journal/tail.h"

struct detection {
	struct detect *eng;
	struct tail_worker *worker;
	char journal_dir[4096];
	char cursor_path[4096];
	struct follow_cursor cur;
	uint64_t skip_below;         /* no cursor yet: lines older than this run are history */
	uint64_t saved_ms;           /* when the cursor was last written (monotonic) */
	bool unsaved;                /* lines judged since */
	struct handoff *handoff;     /* the writer's recent lines' shapes, or NULL */
	struct shape shape;          /* the current line's, when the handoff has it */
};

/*
 * The cursor and the first-seen domains are written (fsync + rename each) at most this
 * often, and at stop. Per batch, at a thousand execs a second, those two fsyncs were
 * most of detection's CPU. A crash re-judges at most this much of the journal: an alert
 * raised again, never one missed.
 */
#define CURSOR_SAVE_MS 1000

static int on_alert(void *ctx, const struct detect_alert *a)
{
	struct event *e = event_new("alert", a->session_id, EVENT_SRC_SANDGATE);

	(void)ctx;
	if (!e)
		return -ENOMEM;
	event_str(e, "rule", a->rule);
	event_str(e, "severity", a->severity);
	event_str(e, "summary", a->summary);
	event_array_begin(e, "refs");
	for (size_t i = 0; i < a->n_refs; i++)
		event_uint(e, NULL, a->refs[i]);
	event_array_end(e);
	event_array_begin(e, "tags");
	for (size_t i = 0; i < a->n_tags; i++)
		event_str(e, NULL, a->tags[i]);
	event_array_end(e);
	event_str(e, "trigger", a->trigger);
	event_uint(e, "suppressed", a->suppressed);
	return event_emit(e);
}

/*
 * No cursor (detection was never on here): the lines written before this run are
 * skipped, not judged now with today's rules and today's time. The journal is still
 * read from its start, to find where they end.
 */
static int cursor_load(struct detection *dt, uint64_t first_seq)
{
	unsigned long long a, b, c;
	FILE *f = fopen(dt->cursor_path, "re");
	int ret = 0;

	if (!f && errno == ENOENT)
		dt->skip_below = first_seq;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	if (fscanf(f, "%llu %llu %llu", &a, &b, &c) == 3)
		dt->cur = (struct follow_cursor){ .next_seq = a, .segment = b, .offset = c };
	else
		ret = -EINVAL;
	fclose(f);
	return ret;
}

static int cursor_save(struct detection *dt)
{
	char buf[96];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			 dt->cur.next_seq, dt->cur.segment, dt->cur.offset);

	return file_replace_atomic(dt->cursor_path, buf, (size_t)n, 0600);
}

/* The cursor, then the first-seen domains: what was judged so far is kept. */
static int save_state(struct detection *dt)
{
	int ret = cursor_save(dt);

	if (ret == 0)
		ret = detect_flush(dt->eng);
	if (ret == 0) {
		dt->unsaved = false;
		dt->saved_ms = time_mono_ns() / 1000000;
	}
	return ret;
}

static int on_line(void *ctx, const char *line, size_t len, const struct follow_pos *pos)
{
	struct detection *dt = ctx;

	uint64_t seq;

	(void)pos;
	if (dt->cur.next_seq < dt->skip_below)
		return 0;
	/* The line's fields from the writer's shape of it when it has one: no parse. */
	if (dt->handoff && line_envelope_seq(line, len, &seq) == 0 &&
	    handoff_get(dt->handoff, seq, line, len, &dt->shape))
		return detect_feed_shaped(dt->eng, line, len, &dt->shape);
	return detect_feed_line(dt->eng, line, len);
}

static int detect_step(void *ctx, size_t *progressed, uint64_t *retry_ms)
{
	struct detection *dt = ctx;
	int ret;

	(void)retry_ms;
	*progressed = 0;
	ret = follow_read(dt->journal_dir, &dt->cur, 2000, on_line, dt, progressed);
	if (ret == -ENOENT)
		return 0;   /* no journal yet */
	if (*progressed)
		dt->unsaved = true;
	if (dt->unsaved && time_mono_ns() / 1000000 - dt->saved_ms >= CURSOR_SAVE_MS) {
		int r = save_state(dt);

		if (ret == 0)
			ret = r;
	}
	return ret;
}

static void detect_error(void *ctx, int err)
{
	(void)ctx;
	log_errno(err, "detection: following the journal (retrying)");
}

static int load_rules(const struct sg_config *c, struct detect_rules **out,
		      struct config_errors *errs)
{
	struct detect_vars v = { .state_dir = c->state_dir, .control_socket = c->control_socket };

	/*
	 * The shipped rules missing is a broken install: an error naming the path, as for a
	 * rules path the config names (before, the daemon ran with no rules, silently).
	 */
	return detect_rules_load_paths(out, c->detect.rules, c->detect.n_rules, &v, errs);
}

int daemon_detect_check(const struct sg_config *c, struct config_errors *errs, size_t *n)
{
	struct detect_rules *r = NULL;
	int ret;

	*n = 0;
	if (!c->detect.enabled)
		return 0;
	ret = load_rules(c, &r, errs);
	*n = detect_rules_count(r);
	detect_rules_free(r);
	return ret;
}

static void log_errors(const struct config_errors *errs)
{
	char line[1024];

	for (size_t i = 0; i < config_errors_count(errs); i++) {
		config_error_format(config_errors_at(errs, i), line, sizeof(line));
		log_warnx("detection: %s", line);
	}
}

static void reload_event(bool ok, size_t rules, const char *err)
{
	struct event *e = event_new("detect.reload", NULL, EVENT_SRC_SANDGATE);

	if (!e)
		return;
	event_bool(e, "ok", ok);
	event_uint(e, "rules", rules);
	event_str(e, "error", err);
	if (event_emit(e))
		log_warnx("detection: detect.reload not recorded");
}

/* 0 with the new rules in place, or -errno with the first error in err. */
static int reload(struct daemon *d, char *err, size_t errlen, size_t *n)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct detect_rules *r = NULL;
	int ret;

	*n = 0;
	if (!d->detection)
		return snprintf(err, errlen, "detection is not running"), -ENOTCONN;
	ret = load_rules(d->cfg, &r, &errs);
	if (ret) {
		log_errors(&errs);
		if (config_errors_count(&errs))
			config_error_format(config_errors_at(&errs, 0), err, errlen);
		else
			snprintf(err, errlen, "%s", strerror(-ret));
	} else {
		*n = detect_rules_count(r);
		detect_set_rules(d->detection->eng, r);
		log_info("detection: %zu rules loaded", *n);
	}
	reload_event(ret == 0, *n, ret ? err : NULL);
	config_errors_free(&errs);
	return ret;
}

void detect_reload(struct daemon *d)
{
	char err[512];
	size_t n;

	if (d->detection)
		(void)reload(d, err, sizeof(err), &n);   /* logged and recorded */
}

static int verb_reload(void *ctx, const struct control_peer *peer,
		       const struct control_request *req, json_t **result, char *err,
		       size_t errlen)
{
	size_t n = 0;
	int ret;

	(void)peer;
	(void)req;
	ret = reload(ctx, err, errlen, &n);
	if (ret)
		return ret == -ENOMEM ? ret : -EINVAL;
	*result = json_pack("{s:I}", "rules", (json_int_t)n);
	return *result ? 0 : -ENOMEM;
}

static int start(struct daemon *d, struct detection *dt, struct detect_rules *r)
{
	const struct sg_detect_config *c = &d->cfg->detect;
	struct detect_settings s = {
		.rate_max = (unsigned)c->rate_limit, .rate_window_ms = c->rate_interval_ms,
		.state_dir = d->cfg->state_dir, .on_alert = on_alert, .ctx = dt,
	};
	struct tail_settings ts = {
		.journal_dir = dt->journal_dir, .fallback_ms = 1000, .linger_ms = 5,
		.step = detect_step, .on_error = detect_error, .ctx = dt,
		.background = true, .name = "sg-detect",
	};
	int ret = detect_new(&dt->eng, &s, r);

	if (ret == 0)
		ret = cursor_load(dt, d->first_seq);
	if (ret == -EINVAL)
		log_warnx("detection: %s unreadable: reading the whole journal again",
			  dt->cursor_path);
	if (ret == 0 || ret == -EINVAL)
		ret = tail_worker_start(&dt->worker, &ts);
	return ret;
}

int daemon_detect_init(struct daemon *d)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct detect_rules *r = NULL;
	struct detection *dt;
	int ret;

	if (!d->cfg->detect.enabled)
		return 0;
	ret = load_rules(d->cfg, &r, &errs);
	log_errors(&errs);
	config_errors_free(&errs);
	if (ret)
		return ret;
	dt = calloc(1, sizeof(*dt));
	if (!dt) {
		detect_rules_free(r);
		return -ENOMEM;
	}
	d->detection = dt;
	dt->handoff = d->journal ? journal_handoff(d->journal) : NULL;
	snprintf(dt->journal_dir, sizeof(dt->journal_dir), "%s/journal", d->cfg->state_dir);
	snprintf(dt->cursor_path, sizeof(dt->cursor_path), "%s/detect/cursor",
		 d->cfg->state_dir);
	log_info("detection: %zu rules loaded", detect_rules_count(r));
	ret = start(d, dt, r);
	if (ret == 0)
		ret = control_register(d->control, "detect.reload", verb_reload, d);
	return ret;
}

void daemon_detect_fini(struct daemon *d)
{
	struct detection *dt = d->detection;

	if (!dt)
		return;
	tail_worker_stop(dt->worker);
	if (dt->unsaved && cursor_save(dt))
		log_warnx("detection: cursor %s not saved: lines since the last save will be "
			  "judged again", dt->cursor_path);
	if (dt->eng && detect_flush(dt->eng))
		log_warnx("detection: first-seen domains not saved");
	detect_free(dt->eng);
	shape_free(&dt->shape);
	free(dt);
	d->detection = NULL;
}

int daemon_detect_metrics(struct daemon *d, FILE *f)
{
	return d->detection && d->detection->eng ? detect_metrics(d->detection->eng, f) : 0;
}
