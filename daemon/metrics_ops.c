/*
 * The operator's series of /metrics (issue 18.5): the journal, each sink, each sensor's
 * loss, sessions by state, and health. Labels are bounded sets (sink names from the
 * config, sensor names from the code, session states): never a session id, whose
 * figures belong in the journal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "attribution/attribution.h"
#include "common/timeutil.h"
#include "daemon/daemon.h"
#include "daemon/health.h"
#include "sinks/sink.h"

#define HT(f, name, type, help) \
	fprintf(f, "# HELP " name " " help "\n# TYPE " name " " type "\n")

static void journal_series(struct daemon *d, FILE *f, uint64_t cp_ms, uint64_t now)
{
	struct journal_stats st;

	journal_get_stats(d->journal, &st);
	HT(f, "sandgate_journal_lines_total", "counter", "Lines written to the journal");
	fprintf(f, "sandgate_journal_lines_total %" PRIu64 "\n", st.events_written);
	HT(f, "sandgate_journal_bytes_total", "counter", "Bytes written to the journal");
	fprintf(f, "sandgate_journal_bytes_total %" PRIu64 "\n", st.bytes_written);
	HT(f, "sandgate_journal_next_seq", "gauge", "The seq the next journal line will carry");
	fprintf(f, "sandgate_journal_next_seq %" PRIu64 "\n", st.next_seq);
	HT(f, "sandgate_journal_checkpoints_total", "counter", "Signed checkpoints written");
	fprintf(f, "sandgate_journal_checkpoints_total %" PRIu64 "\n", st.checkpoints);
	HT(f, "sandgate_journal_checkpoint_age_seconds", "gauge",
	   "Seconds since the last signed checkpoint was seen written");
	fprintf(f, "sandgate_journal_checkpoint_age_seconds %.3f\n",
		(double)(now - cp_ms) / 1000.0);
	HT(f, "sandgate_journal_queue_depth", "gauge", "Events waiting to be written");
	fprintf(f, "sandgate_journal_queue_depth %" PRIu64 "\n", st.queue_depth);
	HT(f, "sandgate_journal_lost_events_total", "counter",
	   "Events that could not be written (disk full)");
	fprintf(f, "sandgate_journal_lost_events_total %" PRIu64 "\n", st.lost);
	HT(f, "sandgate_journal_write_errors_total", "counter", "Journal write errors");
	fprintf(f, "sandgate_journal_write_errors_total %" PRIu64 "\n", st.write_errors);
	HT(f, "sandgate_journal_stalled", "gauge", "1 while journal writes fail");
	fprintf(f, "sandgate_journal_stalled %d\n", st.stalled ? 1 : 0);
}

static void sink_series(struct daemon *d, FILE *f, uint64_t next_seq)
{
	static const struct { const char *name, *type, *help; } s[] = {
		{ "sandgate_sink_lag_events", "gauge", "Journal lines the receiver does not hold yet" },
		{ "sandgate_sink_lag_seconds", "gauge", "Seconds since the sink was last caught up" },
		{ "sandgate_sink_failures_total", "counter", "Failed deliveries (each retried)" },
		{ "sandgate_sink_backlog_bytes", "gauge", "Journal bytes after the sink's cursor" },
		{ "sandgate_sink_stalled", "gauge", "1 while the sink is past its stall bound" },
		{ "sandgate_sink_lines_sent_total", "counter", "Lines delivered" },
	};
	struct sink_stats st;
	const char *name;
	size_t n;

	for (size_t k = 0; k < sizeof(s) / sizeof(s[0]); k++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", s[k].name, s[k].help, s[k].name,
			s[k].type);
		n = daemon_sink_stats(d, 0, &name, &st);
		for (size_t i = 0; i < n && daemon_sink_stats(d, i, &name, &st); i++) {
			uint64_t v[] = { next_seq > st.committed_seq ? next_seq - st.committed_seq : 0,
					 st.behind_ms / 1000, st.failures, st.backlog_bytes,
					 st.stalled, st.lines_sent };

			fprintf(f, "%s{sink=\"%s\"} %" PRIu64 "\n", s[k].name, name, v[k]);
		}
	}
}

/* Sensor names come from the code, but a label value must stay [a-z0-9_]. */
static void label_safe(const char *in, char *out, size_t len)
{
	size_t i = 0;

	for (; in[i] && i + 1 < len; i++)
		out[i] = (in[i] >= 'a' && in[i] <= 'z') || (in[i] >= '0' && in[i] <= '9') ? in[i] : '_';
	out[i] = '\0';
}

static void sensor_series(struct daemon *d, FILE *f)
{
	struct daemon_health *h = &d->health;
	char name[32];

	HT(f, "sandgate_sensor_loss_reports_total", "counter", "sensor.loss lines by sensor");
	pthread_mutex_lock(&h->lock);
	for (size_t i = 0; i < h->n_loss; i++) {
		label_safe(h->loss[i].sensor, name, sizeof(name));
		fprintf(f, "sandgate_sensor_loss_reports_total{sensor=\"%s\"} %" PRIu64 "\n", name,
			h->loss[i].reports);
	}
	HT(f, "sandgate_sensor_lost_events_total", "counter",
	   "Events sensors reported lost (counted losses only)");
	for (size_t i = 0; i < h->n_loss; i++) {
		label_safe(h->loss[i].sensor, name, sizeof(name));
		fprintf(f, "sandgate_sensor_lost_events_total{sensor=\"%s\"} %" PRIu64 "\n", name,
			h->loss[i].lost);
	}
	pthread_mutex_unlock(&h->lock);
	HT(f, "sandgate_sensor_up", "gauge", "1 when an enabled sensor runs");
	if (d->cfg->audit.enabled) {
		bool any = d->audit != NULL;
		const char *off = h->sensors_off;

		fprintf(f, "sandgate_sensor_up{sensor=\"exec\"} %d\n", any && !strstr(off, "proc"));
		if (d->cfg->audit.files)
			fprintf(f, "sandgate_sensor_up{sensor=\"files\"} %d\n",
				any && !strstr(off, "files"));
	}
	if (d->cfg->gateway.enabled)
		fprintf(f, "sandgate_sensor_up{sensor=\"gateway\"} %d\n", d->gateway != NULL);
}

int health_metrics(struct daemon *d, FILE *f)
{
	static const char *const states[] = { "created", "running", "paused", "terminated" };
	struct daemon_health *h = &d->health;
	uint64_t sessions[4], cp_ms, seq, now = time_mono_ns() / 1000000;
	char why[HEALTH_REASONS_MAX];
	bool ok = health_check(d, why, sizeof(why));

	pthread_mutex_lock(&h->lock);
	memcpy(sessions, h->sessions, sizeof(sessions));
	cp_ms = h->cp_ms;
	seq = h->seq;
	pthread_mutex_unlock(&h->lock);
	HT(f, "sandgate_healthy", "gauge", "1 when /healthz answers 200");
	fprintf(f, "sandgate_healthy %d\n", ok);
	journal_series(d, f, cp_ms, now);
	sink_series(d, f, seq);
	sensor_series(d, f);
	HT(f, "sandgate_sessions", "gauge", "Sessions in the registry by state");
	for (int i = 0; i < 4; i++)
		fprintf(f, "sandgate_sessions{state=\"%s\"} %" PRIu64 "\n", states[i], sessions[i]);
	return ferror(f) ? -1 : 0;
}
