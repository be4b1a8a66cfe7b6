/*
 * What every sensor shares: the connector's progress, which the fanotify and audit
 * threads wait on before they look a pid up, and sensor.loss.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "sensors/shared/sensor.h"
#include "journal/event.h"

void audit_sync_publish(struct audit *a, uint64_t t)
{
	pthread_mutex_lock(&a->sync_mu);
	if (t > a->done_ns)
		a->done_ns = t;
	pthread_cond_broadcast(&a->sync_cv);
	pthread_mutex_unlock(&a->sync_mu);
}

bool audit_sync_wait(struct audit *a, uint64_t t, int timeout_ms)
{
	uint64_t one = 1;
	struct timespec dl;
	bool ok;

	if (!a->pc)
		return true;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&a->sync_mu);
	if (a->done_ns < t)
		(void)!write(a->poke_fd, &one, sizeof(one));
	while (a->done_ns < t)
		if (pthread_cond_timedwait(&a->sync_cv, &a->sync_mu, &dl) != 0)
			break;
	ok = a->done_ns >= t;
	pthread_mutex_unlock(&a->sync_mu);
	return ok;
}

int audit_emit_loss(const char *sensor, int64_t lost, const char *why)
{
	struct event *e = event_new("sensor.loss", NULL, EVENT_SRC_SANDGATE);

	if (!e)
		return -ENOMEM;
	event_str(e, "sensor", sensor);
	if (lost >= 0)
		event_int(e, "lost", lost);
	else
		event_null(e, "lost");
	event_str(e, "why", why);
	return event_emit(e);
}
