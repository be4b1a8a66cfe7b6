/*
 * The writer thread: the only code that appends to the journal. Lines are encoded into
 * one buffer and written when the queue runs dry or the buffer is large, so a burst
 * costs one write() per few hundred lines and an idle daemon writes at once.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "journal/handoff.h"
#include "journal/journal_impl.h"

#define FLUSH_AT (256 * 1024)
#define POP_BATCH 256
#define FLUSH_LINGER_MS 1
#define GATHER_NS 500000L   /* once lines flow, the queue's time to fill between pops */
#define STALL_RETRY_MS 1000

static void stats_add(struct journal *j, uint64_t *field, uint64_t n)
{
	pthread_mutex_lock(&j->stats_lock);
	*field += n;
	pthread_mutex_unlock(&j->stats_lock);
}

/* Lines counted since the last call become visible in journal_stats.events_written. */
void writer_publish_lines(struct journal *j)
{
	if (!j->lines_unpublished)
		return;
	stats_add(j, &j->stats.events_written, j->lines_unpublished);
	j->lines_unpublished = 0;
}

/* Encodes e (or, e NULL, the queued frame) as the next line and chains it. Does not
 * free e. */
static int write_line(struct journal *j, const struct event *e, const struct lq_item *frame)
{
	size_t start = j->out.len;
	int ret;

	if (e)
		line_encode(&j->out, j, e, j->pos.size, j->pos.leaf);
	else
		line_encode_framed(&j->out, frame->data, frame->len, j->pos.size, j->pos.leaf);
	if (j->out.oom) {
		j->out.oom = false;
		j->out.len = start;
		return -ENOMEM;
	}
	ret = chain_append(&j->pos, j->out.data + start, j->out.len - start - 1);
	if (ret == 0 && frame && frame->shape_n && j->handoff)
		handoff_put(j->handoff, j->pos.size - 1, j->pos.leaf,
			    j->out.len - start - 1, frame->shape_from, frame->shape_n);
	j->lines_unpublished++;       /* published per batch: no lock per line */
	return ret;
}

/* A line about the journal itself, written in place (never through the queue). */
int writer_emit_sandgate(struct journal *j, struct event *e)
{
	int ret = e ? write_line(j, e, NULL) : -ENOMEM;

	event_free(e);
	return ret;
}

static void report_stall_end(struct journal *j)
{
	uint64_t now = journal_now_ms();
	struct event *e = event_new("journal.disk_full", NULL, EVENT_SRC_SANDGATE);

	if (e) {
		event_str(e, "path", j->dir);
		event_str(e, "error", strerror(-j->stall_errno));
		event_uint(e, "duration_ms", now - j->stall_since_ms);
		event_uint(e, "held", j->stall_held);
		event_uint(e, "lost", j->stall_lost);
	}
	writer_emit_sandgate(j, e);
	if (j->stall_lost) {
		e = event_new("sensor.loss", NULL, EVENT_SRC_SANDGATE);
		if (e) {
			event_str(e, "sensor", "journal");
			event_uint(e, "lost", j->stall_lost);
			event_str(e, "why", "journal write failed (disk full or I/O error); "
					    "events beyond the in-memory hold were dropped");
		}
		writer_emit_sandgate(j, e);
	}
	j->stall_lost = j->stall_held = 0;
}

/* Writes what is buffered; a failure starts (or prolongs) a stall. */
static int flush_or_stall(struct journal *j)
{
	int ret;

	if (j->out.len == 0)
		return 0;
	ret = journal_flush(j);
	if (ret) {
		if (!j->stalled) {
			j->stalled = true;
			j->stall_since_ms = journal_now_ms();
			stats_add(j, &j->stats.write_errors, 1);
		}
		j->stall_errno = ret;
		j->stall_retry_ms = journal_now_ms() + STALL_RETRY_MS;
		return ret;
	}
	if (j->stalled) {
		j->stalled = false;
		report_stall_end(j);
		return journal_flush(j);
	}
	return 0;
}

static struct event *checkpoint_event(const struct checkpoint *cp, const char *note, int len)
{
	struct event *e = event_new("journal.checkpoint", NULL, EVENT_SRC_SANDGATE);
	unsigned char b64[64];

	if (!e)
		return NULL;
	EVP_EncodeBlock(b64, cp->root, MERKLE_HASH_LEN);
	event_uint(e, "size", cp->size);
	event_str(e, "root", (const char *)b64);
	event_strn(e, "note", note, (size_t)len);
	return e;
}

static int hand_to_syncer(struct journal *j, const char *note, int len)
{
	struct pending_cp p;

	memset(&p, 0, sizeof(p));
	p.state.pos = j->pos;
	memcpy(p.state.segment, j->seg_name, sizeof(p.state.segment));
	p.state.offset = j->seg_len;
	p.note = strndup(note, (size_t)len);
	p.note_len = (size_t)len;
	p.fd = dup(j->seg_fd);
	if (!p.note || p.fd < 0) {
		free(p.note);
		if (p.fd >= 0)
			close(p.fd);
		return -ENOMEM;
	}
	return syncer_submit(j, &p);
}

/* Signs the tree as it stands, hands it to the syncer, and writes it as the next line. */
int writer_checkpoint(struct journal *j)
{
	char note[NOTE_MAX_LEN];
	struct checkpoint cp;
	char *copy;
	int len, ret;

	if (j->pos.size == j->last_cp_size || j->stalled)
		return 0;
	ret = flush_or_stall(j);
	if (ret)
		return ret;
	memset(&cp, 0, sizeof(cp));
	snprintf(cp.origin, sizeof(cp.origin), "%s", j->origin);
	cp.size = j->pos.size;
	merkle_range_root(&j->pos.range, cp.root);
	len = note_sign_checkpoint(j->signer, &cp, note, sizeof(note));
	if (len < 0)
		return len;
	ret = hand_to_syncer(j, note, len);
	if (ret)
		return ret;
	copy = strndup(note, (size_t)len);
	if (copy) {
		free(j->last_note);
		j->last_note = copy;
	}
	ret = writer_emit_sandgate(j, checkpoint_event(&cp, note, len));
	j->last_cp_size = j->pos.size;
	j->last_cp_ms = journal_now_ms();
	stats_add(j, &j->stats.checkpoints, 1);
	return ret;
}

/* First line of a segment: where the chain came from, so a segment is never an orphan. */
int writer_segment_head(struct journal *j, const char *type)
{
	struct event *e = event_new(type, NULL, EVENT_SRC_SANDGATE);

	if (e) {
		event_str(e, "segment", j->seg_name);
		event_str(e, "previous_checkpoint", j->last_note);
	}
	return writer_emit_sandgate(j, e);
}

/* by_age: also rotate an old segment (the timers ask; per line only the size counts). */
static int maybe_rotate(struct journal *j, bool by_age)
{
	int ret;

	if (j->stalled || j->seg_len + j->out.len == 0)
		return 0;
	if (j->seg_len + j->out.len < j->cfg.segment_max_bytes &&
	    (!by_age || journal_now_ms() - j->seg_opened_ms < j->cfg.segment_max_age_ms))
		return 0;
	ret = writer_checkpoint(j);
	if (ret == 0)
		ret = flush_or_stall(j);
	if (ret == 0)
		ret = segment_open_new(j, j->pos.size);
	if (ret == 0)
		ret = writer_segment_head(j, "journal.segment");
	return ret;
}

/* A queued line (lq_item) as the next line of the journal. */
static int writer_write_frame(struct journal *j, const struct lq_item *frame)
{
	int ret;

	if (j->stalled && j->out.len >= j->cfg.stall_buffer_max) {
		j->stall_lost++;
		stats_add(j, &j->stats.lost, 1);
		return -ENOSPC;
	}
	maybe_rotate(j, false);
	ret = write_line(j, NULL, frame);
	if (j->stalled)
		j->stall_held++;
	if (j->pos.size - j->last_cp_size >= j->cfg.checkpoint_events)
		writer_checkpoint(j);
	if (j->out.len >= FLUSH_AT && !j->stalled)
		flush_or_stall(j);
	return ret;
}

static void heartbeat(struct journal *j)
{
	struct event *e = event_new("journal.heartbeat", NULL, EVENT_SRC_SANDGATE);
	size_t hw, depth = lq_depth(&j->queue, &hw);

	if (e) {
		event_uint(e, "next_seq", j->pos.size + 1);
		event_uint(e, "queue_depth", depth);
		event_uint(e, "lost_total", j->stats.lost);
	}
	writer_emit_sandgate(j, e);
	j->last_line_ms = journal_now_ms();
}

static uint64_t next_deadline(const struct journal *j)
{
	uint64_t d = j->last_line_ms + j->cfg.heartbeat_interval_ms;

	if (j->pos.size > j->last_cp_size && j->last_cp_ms + j->cfg.checkpoint_interval_ms < d)
		d = j->last_cp_ms + j->cfg.checkpoint_interval_ms;
	if (j->stalled && j->stall_retry_ms < d)
		d = j->stall_retry_ms;
	return d;
}

static void run_timers(struct journal *j)
{
	uint64_t now = journal_now_ms();

	if (j->stalled && now >= j->stall_retry_ms)
		flush_or_stall(j);
	/* A quiet journal still rotates by age: heartbeats alone must not pin a segment. */
	maybe_rotate(j, true);
	if (now - j->last_line_ms >= j->cfg.heartbeat_interval_ms)
		heartbeat(j);
	if (j->pos.size > j->last_cp_size && now - j->last_cp_ms >= j->cfg.checkpoint_interval_ms)
		writer_checkpoint(j);
}

/*
 * With lines buffered, wait at most FLUSH_LINGER_MS for more before writing them: on a
 * busy host that turns a write() per wake-up into one per burst; on a quiet one a line
 * reaches the file a millisecond later.
 */
static uint64_t pop_deadline(const struct journal *j, uint64_t now)
{
	uint64_t d = next_deadline(j);

	if (j->out.len && !j->stalled && now + FLUSH_LINGER_MS < d)
		d = now + FLUSH_LINGER_MS;
	return d;
}

void *writer_main(void *arg)
{
	struct journal *j = arg;
	struct lq_item batch[POP_BATCH];
	size_t n, i;

	(void)pthread_setname_np(pthread_self(), "sg-journal");
	for (;;) {
		n = lq_peek(&j->queue, batch, POP_BATCH, pop_deadline(j, journal_now_ms()));
		for (i = 0; i < n; i++)
			writer_write_frame(j, &batch[i]);
		lq_release(&j->queue);
		if (n)
			j->last_line_ms = journal_now_ms();
		writer_publish_lines(j);
		/*
		 * Lines are flowing and the queue is empty: nap instead of waiting on the
		 * condition. A waiting writer makes every producer (an NFQUEUE worker, the
		 * fanotify thread) pay a futex wake-up per event; a napping one costs them
		 * nothing, and the next pop takes what gathered. Only below POP_BATCH: a full
		 * pop means the queue is not empty, no nap.
		 */
		if (n > 0 && n < POP_BATCH) {
			const struct timespec nap = { 0, GATHER_NS };

			(void)nanosleep(&nap, NULL);
		}
		if (n == 0) {
			if (!j->stalled)
				flush_or_stall(j);
			if (__atomic_load_n(&j->queue.closing, __ATOMIC_ACQUIRE) &&
			    lq_depth(&j->queue, NULL) == 0)
				break;
		}
		run_timers(j);
	}
	writer_checkpoint(j);
	flush_or_stall(j);
	return NULL;
}
