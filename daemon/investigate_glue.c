/*
 * The investigation side's wiring: the query index and the sinks, each a consumer of
 * the journal files driven by its own follower thread (journal/tail.h). Nothing here is
 * on the append path: a stalled index or a dead SIEM never slows the writer, and both
 * catch up from their durable cursors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "daemon/daemon.h"
#include "common/timeutil.h"
#include "index/index.h"
#include "journal/journal.h"
#include "retention/retention.h"
#include "sinks/sink.h"
#include "journal/tail.h"

struct investigation {
	char state_dir[4096];
	char journal_dir[4096];
	struct index_db *db;             /* used by the index thread only, once started */
	bool checked;                    /* quick_check done */
	struct tail_worker *index_worker;
	struct handoff *handoff;         /* the journal's shapes of recent lines, or NULL */
	uint64_t index_shaped, index_scanned;   /* index thread writes, metrics read */
	uint64_t index_base_shaped, index_base_scanned;   /* of index dbs closed before */
	struct tail_worker *retention_worker;
	struct retention_settings rs;     /* strings borrowed from hold below */
	char **hold;
	size_t n_hold;
	struct sink *sinks[SG_SINKS_MAX];
	struct tail_worker *sink_workers[SG_SINKS_MAX];
	size_t n_sinks;
	bool curl;                       /* libcurl's global state is set up */
};

/*
 * The file is opened at init (header checks only: fast), so the daemon's descriptors are
 * settled once it answers; the full quick_check, slow on a large index, runs on the
 * index thread's first step and replaces a corrupt file there.
 */
static int index_open(struct investigation *inv, enum index_open_mode mode)
{
	bool rebuilt = false;
	int ret = index_db_open(&inv->db, inv->state_dir, mode, &rebuilt);

	if (ret)
		return ret;
	index_db_set_handoff(inv->db, inv->handoff);
	if (rebuilt)
		log_warnx("index: %s/index/index.db was not a sound index: moved aside to "
			  "index.db.corrupt, rebuilding from the journal", inv->state_dir);
	return 0;
}

static int index_check(struct investigation *inv)
{
	int ret = index_db_quick_check(inv->db);

	inv->checked = ret != -EBUSY;
	if (ret != -EPROTO)
		return ret == -EBUSY ? 0 : ret;
	inv->index_base_shaped = __atomic_load_n(&inv->index_shaped, __ATOMIC_RELAXED);
	inv->index_base_scanned = __atomic_load_n(&inv->index_scanned, __ATOMIC_RELAXED);
	index_db_close(inv->db);
	inv->db = NULL;
	return index_open(inv, INDEX_WRITE_CHECK);
}

static int index_step(void *ctx, size_t *progressed, uint64_t *retry_ms)
{
	struct investigation *inv = ctx;
	int ret = inv->db ? 0 : index_open(inv, INDEX_WRITE_CHECK);

	(void)retry_ms;
	if (ret == 0 && !inv->checked)
		ret = index_check(inv);
	if (ret == 0 && inv->db) {
		uint64_t shaped, scanned;

		ret = index_db_step(inv->db, INDEX_BATCH_LINES, progressed);
		index_db_shape_stats(inv->db, &shaped, &scanned);
		__atomic_store_n(&inv->index_shaped, inv->index_base_shaped + shaped,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&inv->index_scanned, inv->index_base_scanned + scanned,
				 __ATOMIC_RELAXED);
	}
	/* Another indexer (sandgate reindex) holds the file: its turn, ours next. */
	return ret == -EBUSY ? 0 : ret;
}

static void index_error(void *ctx, int err)
{
	struct investigation *inv = ctx;

	log_errno(err, "index: %s/index/index.db (retrying)", inv->state_dir);
}

static int start_index(struct investigation *inv, const struct sg_invest_config *c)
{
	struct tail_settings ts = {
		.journal_dir = inv->journal_dir, .fallback_ms = c->index_poll_ms,
		.linger_ms = 20, .step = index_step, .on_error = index_error, .ctx = inv,
		.background = true, .name = "sg-index",
	};
	int ret = index_open(inv, INDEX_WRITE);

	/* Not fatal: the thread retries (and logs) until the file can be opened. */
	if (ret)
		log_errno(ret, "index: %s/index/index.db (retrying)", inv->state_dir);
	return tail_worker_start(&inv->index_worker, &ts);
}

static void sink_error(void *ctx, int err)
{
	struct sink *s = ctx;

	const char *why = sink_last_error(s);

	if (why[0])
		log_errno(err, "sink %s: delivery failed: %s (retrying with backoff)", sink_name(s),
			  why);
	else
		log_errno(err, "sink %s: delivery failed (retrying with backoff)", sink_name(s));
}

static void sink_settings_from(struct sink_settings *ss, const struct sg_sink_config *sc,
			       const char *host)
{
	static const enum sink_kind kinds[] = {
		[SG_SINK_FILE] = SINK_FILE, [SG_SINK_STDOUT] = SINK_STDOUT,
		[SG_SINK_SYSLOG_TCP] = SINK_SYSLOG_TCP, [SG_SINK_HEC] = SINK_HEC,
		[SG_SINK_OTLP_HTTP] = SINK_OTLP_HTTP, [SG_SINK_SYSLOG_TLS] = SINK_SYSLOG_TLS,
	};
	static const enum sink_verbosity verbosities[] = {
		[SG_SINK_FULL] = SINK_VERBOSITY_FULL, [SG_SINK_SUMMARY] = SINK_VERBOSITY_SUMMARY,
		[SG_SINK_MINIMAL] = SINK_VERBOSITY_MINIMAL,
	};

	*ss = (struct sink_settings){
		.name = sc->name, .kind = kinds[sc->kind], .path = sc->path,
		.format = sc->format == SG_SINK_OCSF ? SINK_OCSF : SINK_NATIVE,
		.url = sc->url, .token = sc->token, .ca_file = sc->ca_file,
		.server_name = sc->server_name, .cert_file = sc->cert_file,
		.key_file = sc->key_file, .verbosity = verbosities[sc->verbosity],
		.addr = sc->address ? (const struct sockaddr *)&sc->addr : NULL,
		.addr_len = sc->addr_len, .host = host, .events = sc->events,
		.n_events = sc->n_events, .retry_min_ms = sc->retry_min_ms,
		.retry_max_ms = sc->retry_max_ms, .batch_lines = sc->batch_lines,
		.confirm_ms = 1000, .stall_bytes = sc->stall_bytes, .stall_ms = sc->stall_after_ms,
	};
}

/* The sink copies its settings: a SIGHUP replaces d->cfg under it. */
static int start_sink(struct investigation *inv, const struct sg_sink_config *sc,
		      const char *host)
{
	struct tail_settings ts = {
		.journal_dir = inv->journal_dir, .fallback_ms = 1000, .linger_ms = 2,
		.step = sink_step, .on_error = sink_error,
	};
	struct sink_settings ss;
	struct sink *s = NULL;
	int ret;

	sink_settings_from(&ss, sc, host);
	ret = sink_new(&s, inv->state_dir, &ss);
	if (ret)
		return ret;
	ts.ctx = s;
	ret = tail_worker_start(&inv->sink_workers[inv->n_sinks], &ts);
	if (ret) {
		sink_free(s);
		return ret;
	}
	inv->sinks[inv->n_sinks++] = s;
	return 0;
}

static void on_retention(void *ctx, const char *what, const struct retention_item *it)
{
	struct event *e = event_new(what, NULL, EVENT_SRC_SANDGATE);

	(void)ctx;
	if (!e)
		return;
	event_str(e, "segment", it->segment);
	event_uint(e, "first_seq", it->first_seq);
	event_uint(e, "last_seq", it->last_seq);
	event_uint(e, "lines", it->lines);
	event_uint(e, "bytes", it->bytes);
	if (it->cold_path) {
		event_uint(e, "cold_bytes", it->cold_bytes);
		event_str(e, "cold_path", it->cold_path);
	}
	event_str(e, "checkpoint", it->checkpoint);
	if (event_emit(e) != 0)
		log_warnx("retention: %s %s: event not recorded", what, it->segment);
}

/* SANDGATE_RETENTION_NOW (RFC 3339) replaces the clock: the tests' fake clock. */
static int64_t retention_now(void)
{
	const char *fake = getenv("SANDGATE_RETENTION_NOW");
	struct timespec now, t;

	clock_gettime(CLOCK_REALTIME, &now);
	if (fake && time_parse(fake, &now, &t) == 0)
		now = t;
	return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

static int retention_step(void *ctx, size_t *progressed, uint64_t *retry_ms)
{
	struct investigation *inv = ctx;

	(void)retry_ms;
	*progressed = 0;
	return retention_pass(&inv->rs, retention_now(), on_retention, inv);
}

static void retention_error(void *ctx, int err)
{
	struct investigation *inv = ctx;

	log_errno(err, "retention: %s (next pass retries)", inv->state_dir);
}

static int start_retention(struct investigation *inv, const struct sg_invest_config *c)
{
	struct tail_settings ts = {
		.journal_dir = inv->journal_dir, .fallback_ms = c->retention_interval_ms,
		.timer_only = true, .wait_first = true, .step = retention_step,
		.on_error = retention_error,
		.ctx = inv,
	};

	inv->hold = calloc(c->n_hold_sessions + 1, sizeof(*inv->hold));
	if (!inv->hold)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_hold_sessions; i++, inv->n_hold++)
		if (!(inv->hold[i] = strdup(c->hold_sessions[i])))
			return -ENOMEM;
	inv->rs = (struct retention_settings){
		.state_dir = inv->state_dir, .index = c->index_enabled, .hot_ms = c->hot_ms,
		.cold_ms = c->cold_ms,
		.hold_all = c->hold_all, .hold_sessions = inv->hold, .n_hold = inv->n_hold,
	};
	return tail_worker_start(&inv->retention_worker, &ts);
}

int daemon_investigation_init(struct daemon *d)
{
	const struct sg_invest_config *c = &d->cfg->invest;
	struct investigation *inv = calloc(1, sizeof(*inv));
	int ret = 0;

	if (!inv)
		return -ENOMEM;
	d->investigation = inv;
	snprintf(inv->state_dir, sizeof(inv->state_dir), "%s", d->cfg->state_dir);
	inv->handoff = d->journal ? journal_handoff(d->journal) : NULL;
	snprintf(inv->journal_dir, sizeof(inv->journal_dir), "%s/journal", d->cfg->state_dir);
	if (c->index_enabled)
		ret = start_index(inv, c);
	if (ret)
		log_errno(ret, "index: cannot start its follower");
	if (ret == 0 && c->retention_enabled && (ret = start_retention(inv, c)) != 0)
		log_errno(ret, "retention: cannot start");
	for (size_t i = 0; ret == 0 && !inv->curl && i < c->n_sinks; i++)
		if (c->sinks[i].kind == SG_SINK_HEC || c->sinks[i].kind == SG_SINK_OTLP_HTTP) {
			/* Once, here on the main thread: curl_global_init is not thread-safe. */
			ret = sink_curl_global_init();
			inv->curl = ret == 0;
		}
	for (size_t i = 0; ret == 0 && i < c->n_sinks; i++) {
		ret = start_sink(inv, &c->sinks[i], d->cfg->host);
		if (ret)
			log_errno(ret, "sink %s: cannot start", c->sinks[i].name);
	}
	return ret;
}

void daemon_investigation_fini(struct daemon *d)
{
	struct investigation *inv = d->investigation;

	if (!inv)
		return;
	tail_worker_stop(inv->retention_worker);
	for (size_t i = 0; i < inv->n_hold; i++)
		free(inv->hold[i]);
	free(inv->hold);
	tail_worker_stop(inv->index_worker);
	index_db_close(inv->db);
	for (size_t i = 0; i < inv->n_sinks; i++) {
		tail_worker_stop(inv->sink_workers[i]);
		sink_free(inv->sinks[i]);
	}
	if (inv->curl)
		sink_curl_global_cleanup();
	free(inv);
	d->investigation = NULL;
}

size_t daemon_sink_stats(struct daemon *d, size_t i, const char **name, struct sink_stats *st)
{
	struct investigation *inv = d->investigation;

	if (!inv || i >= inv->n_sinks)
		return 0;
	*name = sink_name(inv->sinks[i]);
	sink_get_stats(inv->sinks[i], st);
	return inv->n_sinks;
}

int daemon_investigation_metrics(struct daemon *d, FILE *f)
{
	struct investigation *inv = d->investigation;

	if (!inv || !inv->index_worker)
		return 0;
	fprintf(f, "# HELP sandgate_index_lines_shaped_total Lines indexed from the writer's "
		   "shape of them, their JSON not read\n"
		   "# TYPE sandgate_index_lines_shaped_total counter\n"
		   "sandgate_index_lines_shaped_total %llu\n"
		   "# HELP sandgate_index_lines_scanned_total Lines indexed by scanning their JSON "
		   "(no shape: behind the writer, or written before this run)\n"
		   "# TYPE sandgate_index_lines_scanned_total counter\n"
		   "sandgate_index_lines_scanned_total %llu\n",
		(unsigned long long)__atomic_load_n(&inv->index_shaped, __ATOMIC_RELAXED),
		(unsigned long long)__atomic_load_n(&inv->index_scanned, __ATOMIC_RELAXED));
	return ferror(f) ? -EIO : 0;
}
