/*
 * The syncer makes checkpoints durable off the writer's path: fdatasync the segment,
 * append the note to the checkpoints file, persist the state, tell the sinks. Several
 * pending checkpoints share one round of fsyncs, so a slow disk lowers the checkpoint
 * publication rate, never the append rate.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal/journal_impl.h"

#define SYNCER_CAP 1024

int syncer_init(struct syncer *s)
{
	memset(s, 0, sizeof(*s));
	s->items = calloc(SYNCER_CAP, sizeof(*s->items));
	s->batch = calloc(SYNCER_CAP, sizeof(*s->batch));
	if (!s->items || !s->batch) {
		free(s->items);
		free(s->batch);
		s->items = s->batch = NULL;
		return -ENOMEM;
	}
	s->cap = SYNCER_CAP;
	if (pthread_mutex_init(&s->lock, NULL) || pthread_cond_init(&s->wake, NULL) ||
	    pthread_cond_init(&s->idle, NULL)) {
		free(s->items);
		free(s->batch);
		s->items = s->batch = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void pending_free(struct pending_cp *cp)
{
	free(cp->note);
	if (cp->fd >= 0)
		close(cp->fd);
}

void syncer_destroy(struct syncer *s)
{
	size_t i;

	if (!s->items)
		return;
	for (i = 0; i < s->count; i++)
		pending_free(&s->items[i]);
	free(s->items);
	free(s->batch);
	s->items = s->batch = NULL;
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->idle);
}

/* Takes ownership of cp's note and fd. Waits while the syncer is SYNCER_CAP behind. */
int syncer_submit(struct journal *j, struct pending_cp *cp)
{
	struct syncer *s = &j->sync;

	pthread_mutex_lock(&s->lock);
	while (s->count == s->cap && !s->stop)
		pthread_cond_wait(&s->idle, &s->lock);
	if (s->stop) {
		pthread_mutex_unlock(&s->lock);
		pending_free(cp);
		return -ESHUTDOWN;
	}
	s->items[s->count++] = *cp;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static int append_notes(struct journal *j, struct pending_cp *items, size_t n)
{
	char path[JOURNAL_PATH_MAX];
	struct buf b;
	off_t before;
	size_t i;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/checkpoints", j->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	buf_init(&b);
	for (i = 0; i < n; i++) {
		buf_put(&b, items[i].note, items[i].note_len);
		buf_putc(&b, '\n');
	}
	before = lseek(fd, 0, SEEK_END);
	if (b.oom)
		ret = -ENOMEM;
	else if (write(fd, b.data, b.len) != (ssize_t)b.len)
		ret = errno ? -errno : -ENOSPC;
	/* Never leave half a note: cut back to where this round started. */
	if (ret && before >= 0 && ftruncate(fd, before) < 0)
		ret = -errno;
	if (ret == 0 && j->cfg.fsync != JOURNAL_FSYNC_NEVER && fdatasync(fd) < 0)
		ret = -errno;
	close(fd);
	buf_free(&b);
	return ret;
}

/* One round: everything pending becomes durable, published and persisted. */
static int sync_round(struct journal *j, struct pending_cp *items, size_t n)
{
	size_t i;
	int ret = 0, wret;

	for (i = 0; i < n && ret == 0; i++) {
		bool newest_of_segment =
			i + 1 == n || strcmp(items[i].state.segment, items[i + 1].state.segment);

		/* fdatasync covers the whole file: only the newest checkpoint per segment. */
		if (j->cfg.fsync != JOURNAL_FSYNC_NEVER && newest_of_segment &&
		    fdatasync(items[i].fd) < 0)
			ret = -errno;
	}
	if (ret == 0)
		ret = append_notes(j, items, n);
	if (ret == 0)
		ret = state_save(j->dir, &items[n - 1].state);
	if (ret == 0 && j->on_cp)
		for (i = 0; i < n; i++)
			j->on_cp(j->on_cp_ctx, items[i].note, items[i].note_len);
	/* Not fatal to the journal: counted (journal_stats.witness_errors). After the
	 * state, so the witness is never ahead of what a restart recovers. */
	wret = ret == 0 ? witness_append(j, items, n) : 0;
	pthread_mutex_lock(&j->stats_lock);
	if (wret)
		j->stats.witness_errors++;
	if (ret == 0)
		j->stats.checkpoints_durable += n;
	else
		j->stats.write_errors++;
	pthread_mutex_unlock(&j->stats_lock);
	return ret;
}

void *syncer_main(void *arg)
{
	struct journal *j = arg;
	struct syncer *s = &j->sync;
	struct pending_cp *batch = s->batch;
	size_t n, i;
	int ret;

	(void)pthread_setname_np(pthread_self(), "sg-syncer");
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (s->count == 0 && !s->stop)
			pthread_cond_wait(&s->wake, &s->lock);
		if (s->count == 0 && s->stop)
			break;
		n = s->count;
		memcpy(batch, s->items, n * sizeof(*batch));
		s->count = 0;
		s->busy = true;
		pthread_mutex_unlock(&s->lock);
		ret = sync_round(j, batch, n);
		for (i = 0; i < n; i++)
			pending_free(&batch[i]);
		pthread_mutex_lock(&s->lock);
		/* The latest round decides: a stall that has passed is not an error at close. */
		s->error = ret;
		s->busy = false;
		pthread_cond_broadcast(&s->idle);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void syncer_wait_idle(struct journal *j)
{
	struct syncer *s = &j->sync;

	pthread_mutex_lock(&s->lock);
	while (s->count > 0 || s->busy)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

void syncer_stop(struct journal *j)
{
	struct syncer *s = &j->sync;

	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_broadcast(&s->wake);
	pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
}
