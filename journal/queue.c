/*
 * The bounded queue between producers and the journal writer: a ring of bytes holding
 * each event already framed as the end of its line (journal.c, journal_submit), in
 * submission order.
 *
 * Why bytes and not event pointers: under a burst the queue is full, and an event the
 * writer takes was built tens of thousands of events earlier on another CPU: its struct
 * and body were out of every cache, each event crossed threads twice (built by the
 * producer, freed by the writer, recycled through a shared pool), and the producer paid
 * the writer's encoding on the writer's core. Copied into the ring, a line is read
 * front to back where the one before it ended (the prefetcher's case), and the event
 * goes back to its producer's own cache at once. docs/bench-journal.md has the figures.
 *
 * An entry is a header (the frame's length, 4 bytes; the number of the line's shape
 * tokens, 4, and where the handoff holds them, 8: journal/handoff.h) and the frame,
 * padded to 8 bytes, never split at the end of the ring: an entry that does not fit
 * before the end goes to the start, and the bytes skipped are marked (LQ_WRAP, or fewer
 * than a header's 16 left) and counted as used until the writer passes them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "journal/handoff.h"
#include "journal/journal_impl.h"

#define LQ_HDR 16u
#define LQ_WRAP UINT32_MAX

static size_t entry_size(size_t len)
{
	return LQ_HDR + ((len + 7u) & ~(size_t)7u);
}

int lq_init(struct line_queue *q, size_t cap_lines, size_t cap_bytes)
{
	pthread_condattr_t ca;
	int ret = -ENOMEM;

	if (cap_lines == 0 || cap_bytes < LQ_MIN_BYTES)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	q->size = cap_bytes & ~(size_t)7u;
	q->ring = malloc(q->size);
	if (!q->ring)
		return -ENOMEM;
	q->cap_lines = cap_lines;
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

void lq_destroy(struct line_queue *q)
{
	if (!q->ring)
		return;
	free(q->ring);
	q->ring = NULL;
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->not_empty);
	pthread_cond_destroy(&q->not_full);
}

/* Where an entry of need bytes goes, wrapping if it must; SIZE_MAX: no room now. */
static size_t lq_place(struct line_queue *q, size_t need)
{
	size_t waste;

	if (q->used == 0)
		q->rd = q->wr = 0;
	if (q->count >= q->cap_lines)
		return SIZE_MAX;
	if (q->wr < q->rd)
		return q->rd - q->wr >= need ? q->wr : SIZE_MAX;
	if (q->wr == q->rd && q->used)
		return SIZE_MAX;                        /* full to the byte */
	if (q->size - q->wr >= need)
		return q->wr;
	if (q->rd < need)
		return SIZE_MAX;
	/* To the start: the tail of the ring is skipped, and used until the writer passes. */
	waste = q->size - q->wr;
	if (waste >= LQ_HDR) {
		uint32_t mark = LQ_WRAP;

		memcpy(q->ring + q->wr, &mark, sizeof(mark));
	}
	q->used += waste;
	q->wr = 0;
	return 0;
}

int lq_push(struct line_queue *q, const char *data, size_t len, const struct lq_shape *shape)
{
	size_t need = entry_size(len), at = 0;
	uint32_t l32 = (uint32_t)len, n32 = 0;
	uint64_t from = 0;

	if (len >= LQ_WRAP || need > q->size)
		return -EMSGSIZE;
	pthread_mutex_lock(&q->lock);
	while (!q->closing && (at = lq_place(q, need)) == SIZE_MAX)
		pthread_cond_wait(&q->not_full, &q->lock);
	if (q->closing) {
		pthread_mutex_unlock(&q->lock);
		return -ESHUTDOWN;
	}
	/* Claimed here, in queue order, while no other producer claims. */
	if (shape && shape->h && shape->n <= UINT32_MAX &&
	    handoff_claim(shape->h, shape->tok, shape->n, &from))
		n32 = (uint32_t)shape->n;
	memcpy(q->ring + at, &l32, sizeof(l32));
	memcpy(q->ring + at + 4, &n32, sizeof(n32));
	memcpy(q->ring + at + 8, &from, sizeof(from));
	memcpy(q->ring + at + LQ_HDR, data, len);
	q->wr = at + need;
	q->used += need;
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

size_t lq_peek(struct line_queue *q, struct lq_item *out, size_t max, uint64_t deadline_ms)
{
	struct timespec ts;
	size_t n = 0, pos, used = 0;
	uint32_t len;

	deadline_ts(deadline_ms, &ts);
	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && !q->closing) {
		if (pthread_cond_timedwait(&q->not_empty, &q->lock, &ts) == ETIMEDOUT)
			break;
	}
	pos = q->rd;
	while (n < max && n < q->count) {
		if (q->size - pos >= LQ_HDR)
			memcpy(&len, q->ring + pos, sizeof(len));
		if (q->size - pos < LQ_HDR || len == LQ_WRAP) {
			used += q->size - pos;
			pos = 0;
			memcpy(&len, q->ring, sizeof(len));
		}
		out[n].data = q->ring + pos + LQ_HDR;
		out[n].len = len;
		memcpy(&out[n].shape_n, q->ring + pos + 4, sizeof(out[n].shape_n));
		memcpy(&out[n].shape_from, q->ring + pos + 8, sizeof(out[n].shape_from));
		n++;
		pos += entry_size(len);
		used += entry_size(len);
	}
	q->peek_n = n;
	q->peek_pos = pos;
	q->peek_used = used;
	pthread_mutex_unlock(&q->lock);
	return n;
}

void lq_release(struct line_queue *q)
{
	pthread_mutex_lock(&q->lock);
	if (q->peek_n) {
		q->rd = q->peek_pos;
		q->used -= q->peek_used;
		q->count -= q->peek_n;
		q->peek_n = q->peek_used = 0;
		pthread_cond_broadcast(&q->not_full);
	}
	pthread_mutex_unlock(&q->lock);
}

/* After close, producers get -ESHUTDOWN; the writer still drains what is queued. */
void lq_close(struct line_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closing = true;
	pthread_cond_broadcast(&q->not_empty);
	pthread_cond_broadcast(&q->not_full);
	pthread_mutex_unlock(&q->lock);
}

size_t lq_depth(struct line_queue *q, size_t *high_water)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = q->count;
	if (high_water)
		*high_water = q->high_water;
	pthread_mutex_unlock(&q->lock);
	return n;
}
