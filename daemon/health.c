/*
 * Health and the operator's figures (daemon/health.h). Sampling runs on the loop
 * thread; the checks compare "when did it last move" against bounds derived from the
 * configured heartbeat and checkpoint intervals, so a quiet host (heartbeats only) is
 * healthy and a journal that stopped writing is not.
 */
#include "daemon/health.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "attribution/attribution.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "daemon/daemon.h"
#include "sessions/sessions.h"
#include "journal/event.h"

#define SAMPLE_MS 1000
#define MIN_BOUND_MS 5000

static uint64_t now_ms(void)
{
	return time_mono_ns() / 1000000;
}

/* "sensor":"NAME" and "lost":N in a sensor.loss body (built by event_str/event_int). */
static void loss_fields(const struct event *e, char *sensor, size_t len, uint64_t *lost)
{
	const char *b = e->body.data ? e->body.data : "", *p, *q;
	size_t n;

	snprintf(sensor, len, "unknown");
	*lost = 0;
	if ((p = strstr(b, "\"sensor\":\"")) != NULL) {
		p += 10;
		q = strchr(p, '"');
		n = q ? (size_t)(q - p) : 0;
		if (n && n < len) {
			memcpy(sensor, p, n);
			sensor[n] = '\0';
		}
	}
	if ((p = strstr(b, "\"lost\":")) != NULL && p[7] >= '0' && p[7] <= '9')
		*lost = strtoull(p + 7, NULL, 10);
}

/* The series of sensor (created when new; the last slot takes the overflow). */
static struct health_loss *loss_slot(struct daemon_health *h, const char *sensor)
{
	for (size_t i = 0; i < h->n_loss; i++)
		if (strcmp(h->loss[i].sensor, sensor) == 0)
			return &h->loss[i];
	if (h->n_loss == HEALTH_SENSORS_MAX)
		return &h->loss[HEALTH_SENSORS_MAX - 1];
	snprintf(h->loss[h->n_loss].sensor, sizeof(h->loss[0].sensor), "%s", sensor);
	return &h->loss[h->n_loss++];
}

int health_submit(void *ctx, struct event *e)
{
	struct daemon *d = ctx;
	struct daemon_health *h = &d->health;

	if (strcmp(e->type, "sensor.loss") == 0) {
		char sensor[32];
		uint64_t lost;
		struct health_loss *l;

		loss_fields(e, sensor, sizeof(sensor), &lost);
		pthread_mutex_lock(&h->lock);
		l = loss_slot(h, sensor);
		l->reports++;
		l->lost += lost;
		pthread_mutex_unlock(&h->lock);
	}
	return journal_submit(d->journal, e);
}

/* Under h->lock: moves the "last moved" times forward from fresh journal figures. */
static void sample_journal(struct daemon *d, uint64_t now)
{
	struct daemon_health *h = &d->health;
	struct journal_stats st;

	journal_get_stats(d->journal, &st);
	if (st.next_seq != h->seq || !h->seq_ms) {
		h->seq = st.next_seq;
		h->seq_ms = now;
	}
	if (st.checkpoints != h->cps || !h->cp_ms) {
		h->cps = st.checkpoints;
		h->cp_ms = now;
	}
}

static void on_tick(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct daemon *d = ctx;
	struct daemon_health *h = &d->health;
	struct session_reg *reg = sessions_registry(d->sessions);
	uint64_t exp, by_state[4] = { 0 };

	(void)l;
	(void)events;
	if (read(fd, &exp, sizeof(exp)) != sizeof(exp))
		return;
	for (size_t i = 0; reg && i < sessions_count(reg); i++) {
		const struct session *s = sessions_at(reg, i);

		if ((unsigned)s->state < 4)
			by_state[s->state]++;
	}
	pthread_mutex_lock(&h->lock);
	memcpy(h->sessions, by_state, sizeof(by_state));
	sample_journal(d, now_ms());
	pthread_mutex_unlock(&h->lock);
}

int health_start(struct daemon *d)
{
	struct itimerspec it = { .it_interval = { SAMPLE_MS / 1000, 0 },
				 .it_value = { SAMPLE_MS / 1000, 0 } };
	int ret;

	d->health.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->health.tfd < 0)
		return -errno;
	if (timerfd_settime(d->health.tfd, 0, &it, NULL) < 0)
		return -errno;
	ret = loop_add(d->loop, d->health.tfd, EPOLLIN, on_tick, d);
	if (ret == 0) {
		pthread_mutex_lock(&d->health.lock);
		sample_journal(d, now_ms());
		pthread_mutex_unlock(&d->health.lock);
	}
	return ret;
}

void health_stop(struct daemon *d)
{
	if (d->health.tfd > 0) {
		loop_del(d->loop, d->health.tfd);
		close(d->health.tfd);
	}
	d->health.tfd = -1;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a > b ? a : b;

	return m > c ? m : c;
}

/* Appends "; reason" (or "reason" first) to why. */
static void add_reason(char *why, size_t len, const char *fmt, ...) LOG_PRINTF(3, 4);
static void add_reason(char *why, size_t len, const char *fmt, ...)
{
	size_t used = strlen(why);
	va_list ap;

	if (used && used + 2 < len) {
		memcpy(why + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	if (used < len)
		vsnprintf(why + used, len - used, fmt, ap);
	va_end(ap);
}

static void check_sensors(struct daemon *d, char *why, size_t len)
{
	const struct sg_config *c = d->cfg;

	if (c->audit.enabled && !d->audit)
		add_reason(why, len, "audit sensors enabled but none runs");
	else if (c->audit.enabled && d->health.sensors_off[0])
		add_reason(why, len, "audit sensors enabled but off: %s", d->health.sensors_off);
	if (c->gateway.enabled && !d->gateway)
		add_reason(why, len, "gateway enabled but not running");
}

bool health_check(struct daemon *d, char *why, size_t len)
{
	const struct sg_journal_config *jc = &d->cfg->journal;
	struct daemon_health *h = &d->health;
	struct journal_stats st;
	uint64_t now = now_ms(), adv_bound, cp_bound, seq_age, cp_age;
	bool unsigned_lines;

	why[0] = '\0';
	/* Heartbeats write a line every heartbeat interval: three missed is a stall. */
	adv_bound = max3(3 * jc->heartbeat_interval_ms, MIN_BOUND_MS, 0);
	cp_bound = max3(3 * jc->checkpoint_interval_ms, adv_bound, MIN_BOUND_MS);
	journal_get_stats(d->journal, &st);
	pthread_mutex_lock(&h->lock);
	sample_journal(d, now);
	seq_age = now - h->seq_ms;
	cp_age = now - h->cp_ms;
	unsigned_lines = h->seq_ms > h->cp_ms;   /* lines written since the last checkpoint */
	pthread_mutex_unlock(&h->lock);
	if (st.stalled)
		add_reason(why, len, "journal writes are failing (%" PRIu64 " events lost)",
			   st.lost);
	if (jc->heartbeat_interval_ms && seq_age > adv_bound)
		add_reason(why, len, "journal has not advanced for %" PRIu64 " ms", seq_age);
	if (unsigned_lines && cp_age > cp_bound)
		add_reason(why, len, "no signed checkpoint for %" PRIu64 " ms", cp_age);
	check_sensors(d, why, len);
	return why[0] == '\0';
}
