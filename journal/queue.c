/* The bounded queue between producers and the journal writer. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "journal/journal_impl.h"

int equeue_init(struct event_queue *q, size_t cap)
{
	pthread_condattr_t ca;
	int ret = -ENOMEM;

	if (cap == 0)
		return -EINVAL;
	q->ring = calloc(cap, sizeof(*q->ring));
	if (!q->ring)
		return -ENOMEM;
	q->cap = cap;
	q->head = q->count = q->high_water = 0;
	q->closing = false;
	if (pthread_condattr_init(&ca))
		goto out;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (pthread_mutex_init(&q->lock, NULL) == 0 &&
	    pthread_cond_init(&q->not_empty, &ca) == 0 &&
	    pthread_cond_init(&q->not_full, NULL) == 0)
		ret = 0;
	pthread_condattr_destroy(&ca);
out:
	if (ret) {
		free(q->ring);
		q->ring = NULL;
	}
	return ret;
}

void equeue_destroy(struct event_queue *q)
{
	size_t i;

	if (!q->ring)
		return;
	for (i = 0; i < q->count; i++)
		event_free(q->ring[(q->head + i) % q->cap]);
	free(q->ring);
	q->ring = NULL;
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->not_empty);
	pthread_cond_destroy(&q->not_full);
}

int equeue_push(struct event_queue *q, struct event *e)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == q->cap && !q->closing)
		pthread_cond_wait(&q->not_full, &q->lock);
	if (q->closing) {
		pthread_mutex_unlock(&q->lock);
		event_free(e);
		return -ESHUTDOWN;
	}
	q->ring[(q->head + q->count) % q->cap] = e;
	q->count++;
	if (q->count > q->high_water)
		q->high_water = q->count;
	if (q->count == 1)
		pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

static void deadline_ts(uint64_t ms, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ms / 1000);
	ts->tv_nsec = (long)(ms % 1000) * 1000000;
}

size_t equeue_pop(struct event_queue *q, struct event **out, size_t max, uint64_t deadline_ms)
{
	struct timespec ts;
	size_t n = 0;

	deadline_ts(deadline_ms, &ts);
	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && !q->closing) {
		if (pthread_cond_timedwait(&q->not_empty, &q->lock, &ts) == ETIMEDOUT)
			break;
	}
	while (n < max && q->count > 0) {
		out[n++] = q->ring[q->head];
		q->head = (q->head + 1) % q->cap;
		q->count--;
	}
	if (n)
		pthread_cond_broadcast(&q->not_full);
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* After close, producers get -ESHUTDOWN; the writer still drains what is queued. */
void equeue_close(struct event_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closing = true;
	pthread_cond_broadcast(&q->not_empty);
	pthread_cond_broadcast(&q->not_full);
	pthread_mutex_unlock(&q->lock);
}

size_t equeue_depth(struct event_queue *q, size_t *high_water)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = q->count;
	if (high_water)
		*high_water = q->high_water;
	pthread_mutex_unlock(&q->lock);
	return n;
}
