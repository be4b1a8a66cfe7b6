/* The journal's lifecycle: open (with recovery), start, submit, close. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/handoff.h"
#include "journal/journal_impl.h"

#define LINE_BODY_MAX (1024 * 1024 - 4096)
#define FRAME_KEEP (64 * 1024)     /* a thread's frame buffer above this is given back */

void journal_settings_default(struct journal_settings *s, const char *state_dir,
			      const char *host)
{
	memset(s, 0, sizeof(*s));
	s->state_dir = state_dir;
	s->host = host;
	s->segment_max_bytes = 64ull << 20;
	s->segment_max_age_ms = 3600ull * 1000;
	s->fsync = JOURNAL_FSYNC_CHECKPOINT;
	s->checkpoint_interval_ms = 1000;
	s->checkpoint_events = 1000;
	s->heartbeat_interval_ms = 10000;
	s->queue_capacity = 65536;
	s->stall_buffer_max = 64ull << 20;
	s->handoff_bytes = 24u << 20;
}

/* The journal directory must be ours alone: root-owned (our euid) and 0700. */
static int secure_dir(const char *path, char *err, size_t errlen)
{
	struct stat sb;

	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		return -errno;
	}
	if (stat(path, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", path);
		return -ENOTDIR;
	}
	if (sb.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: owned by uid %u, not by us (uid %u)", path,
			 (unsigned)sb.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if ((sb.st_mode & 07777) != 0700 && chmod(path, 0700) < 0) {
		snprintf(err, errlen, "%s: cannot set mode 0700: %s", path, strerror(errno));
		return -errno;
	}
	if (access(path, W_OK | X_OK) < 0) {
		snprintf(err, errlen, "%s: not writable: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

/* The ring's bytes: LQ_BYTES_PER_LINE a line of the capacity (16 MiB at the default
 * 65,536), never less than LQ_MIN_BYTES. */
static size_t queue_bytes(size_t lines)
{
	size_t bytes = lines <= SIZE_MAX / LQ_BYTES_PER_LINE ? lines * LQ_BYTES_PER_LINE
							      : SIZE_MAX;

	if (bytes > (size_t)1 << 30)
		bytes = (size_t)1 << 30;
	return bytes < LQ_MIN_BYTES ? LQ_MIN_BYTES : bytes;
}

/* ,"host":"..." once: every line has it. */
static int host_json_init(struct journal *j)
{
	struct buf b;

	buf_init(&b);
	buf_put(&b, ",\"host\":", 8);
	buf_put_json_str(&b, j->host, strlen(j->host));
	buf_putc(&b, '\0');
	if (b.oom) {
		buf_free(&b);
		return -ENOMEM;
	}
	j->host_json = b.data;
	return 0;
}

static int journal_alloc(struct journal **out, const struct journal_settings *s)
{
	struct journal *j = calloc(1, sizeof(*j));
	char origin[NOTE_KEY_NAME_MAX];

	if (!j)
		return -ENOMEM;
	j->cfg = *s;
	j->seg_fd = -1;
	j->witness_fd = -1;
	snprintf(origin, sizeof(origin), "sandgate/%s", s->host);
	j->state_dir = strdup(s->state_dir);
	j->host = strdup(s->host);
	j->origin = strdup(s->origin ? s->origin : origin);
	buf_init(&j->out);
	buf_init(&j->line);
	pthread_mutex_init(&j->stats_lock, NULL);
	snprintf(j->dir, sizeof(j->dir), "%s/journal", s->state_dir);
	*out = j;
	j->witness_dir = s->witness_dir ? strdup(s->witness_dir) : NULL;
	if (!j->state_dir || !j->host || !j->origin || (s->witness_dir && !j->witness_dir))
		return -ENOMEM;
	if (host_json_init(j))
		return -ENOMEM;
	if (lq_init(&j->queue, s->queue_capacity, queue_bytes(s->queue_capacity)) ||
	    syncer_init(&j->sync))
		return -ENOMEM;
	if (s->handoff_bytes && !(j->handoff = handoff_new(s->handoff_bytes)))
		return -ENOMEM;
	return 0;
}

static void journal_free(struct journal *j)
{
	if (!j)
		return;
	lq_destroy(&j->queue);
	handoff_free(j->handoff);
	syncer_destroy(&j->sync);
	free(j->host_json);
	if (j->seg_fd >= 0)
		close(j->seg_fd);
	if (j->witness_fd >= 0)
		close(j->witness_fd);
	free(j->witness_dir);
	note_signer_free(j->signer);
	buf_free(&j->out);
	buf_free(&j->line);
	free(j->last_note);
	free(j->state_dir);
	free(j->host);
	free(j->origin);
	pthread_mutex_destroy(&j->stats_lock);
	free(j);
}

int journal_open(struct journal **out, const struct journal_settings *s,
		 struct note_signer *signer, char *err, size_t errlen)
{
	struct journal *j = NULL;
	int ret;

	err[0] = '\0';
	ret = journal_alloc(&j, s);
	if (j)
		j->signer = signer;
	else
		note_signer_free(signer);
	if (ret) {
		snprintf(err, errlen, "journal: out of memory");
		goto fail;
	}
	ret = secure_dir(s->state_dir, err, errlen);
	if (ret == 0)
		ret = secure_dir(j->dir, err, errlen);
	if (ret == 0)
		ret = journal_recover(j, err, errlen);
	/* Not fatal: without it daemon.start says nothing of the previous run. */
	if (ret == 0 && journal_prev_read(j) != 0)
		memset(&j->prev, 0, sizeof(j->prev));
	if (ret == 0)
		ret = witness_open(j, err, errlen);
	if (ret)
		goto fail;
	*out = j;
	return 0;
fail:
	journal_free(j);
	return ret;
}

static int write_open_lines(struct journal *j)
{
	struct event *e;
	int ret;

	ret = segment_open_new(j, j->pos.size);
	if (ret == 0)
		ret = writer_segment_head(j, "journal.open");
	if (ret || !j->open_recovery_cut)
		return ret;
	e = event_new("journal.recovery", NULL, EVENT_SRC_SANDGATE);
	if (e) {
		event_str(e, "why", "torn tail after an unclean stop");
		event_uint(e, "cut_at_seq", j->open_recovery_seq);
		event_uint(e, "cut_bytes", j->open_recovery_cut);
		event_uint(e, "kept_lines", j->open_recovery_kept);
		event_str(e, "saved_to", j->open_recovery_file);
	}
	j->stats.recoveries++;
	return writer_emit_sandgate(j, e);
}

static int write_start_lines(struct journal *j)
{
	int ret = write_open_lines(j);

	return ret ? ret : witness_report(j);
}

int journal_start(struct journal *j)
{
	int ret;

	j->last_cp_ms = j->last_line_ms = journal_now_ms();
	ret = write_start_lines(j);
	if (ret)
		return ret;
	ret = -pthread_create(&j->syncer_thread, NULL, syncer_main, j);
	if (ret)
		return ret;
	ret = -pthread_create(&j->writer_thread, NULL, writer_main, j);
	if (ret) {
		syncer_stop(j);
		pthread_join(j->syncer_thread, NULL);
		return ret;
	}
	j->threads_started = true;
	return 0;
}

/*
 * Each producer thread frames its events in a buffer of its own (freed when the thread
 * exits): the encoding is paid where the event was built, while it is in that CPU's
 * cache, and the event goes back to the thread's own cache at once (queue.c says why).
 */
struct frame_buf {
	struct buf b;
	bool registered;
};
static _Thread_local struct frame_buf frame_tls;
static pthread_key_t frame_key;
static pthread_once_t frame_once = PTHREAD_ONCE_INIT;
static bool frame_key_ok;

static void frame_buf_free(void *unused)
{
	(void)unused;
	buf_free(&frame_tls.b);
	frame_tls.registered = false;
}

static void frame_key_init(void)
{
	frame_key_ok = pthread_key_create(&frame_key, frame_buf_free) == 0;
}

/* The thread's frame buffer, emptied; NULL when it cannot be freed at the thread's exit. */
static struct buf *frame_buf(void)
{
	if (!frame_tls.registered) {
		if (pthread_once(&frame_once, frame_key_init) != 0 || !frame_key_ok ||
		    pthread_setspecific(frame_key, &frame_tls) != 0)
			return NULL;
		buf_init(&frame_tls.b);
		frame_tls.registered = true;
	}
	buf_reset(&frame_tls.b);
	return &frame_tls.b;
}

int journal_submit(void *ctx, struct event *e)
{
	struct journal *j = ctx;
	struct buf own, *b;
	size_t shape_len;
	int ret;

	if (e->body.len > LINE_BODY_MAX) {
		event_free(e);
		return -EMSGSIZE;
	}
	b = frame_buf();
	if (!b) {                       /* no thread key: a buffer for this event alone */
		buf_init(&own);
		b = &own;
	}
	shape_len = line_frame(b, j, e, j->handoff != NULL);
	event_free(e);
	if (b->oom) {
		ret = -ENOMEM;
	} else {
		/* The frame, then its shape's tokens (line_frame): the queue takes the frame,
		 * the handoff the tokens. */
		struct lq_shape shape = { .h = j->handoff, .tok = b->data + b->len - shape_len,
					  .n = shape_len / sizeof(struct shape_tok) };

		ret = lq_push(&j->queue, b->data, b->len - shape_len,
			      shape_len ? &shape : NULL);
	}
	if (b == &own)
		buf_free(&own);
	else if (b->cap > FRAME_KEEP) {   /* one huge line does not pin its buffer */
		buf_free(b);
		buf_init(b);
	}
	return ret;
}

struct handoff *journal_handoff(struct journal *j)
{
	return j->handoff;
}

void journal_on_checkpoint(struct journal *j, journal_checkpoint_fn fn, void *ctx)
{
	j->on_cp = fn;
	j->on_cp_ctx = ctx;
}

void journal_get_stats(struct journal *j, struct journal_stats *out)
{
	size_t hw;

	pthread_mutex_lock(&j->stats_lock);
	*out = j->stats;
	pthread_mutex_unlock(&j->stats_lock);
	out->queue_depth = lq_depth(&j->queue, &hw);
	out->queue_high_water = hw;
	out->next_seq = __atomic_load_n(&j->pos.size, __ATOMIC_RELAXED);
	out->stalled = __atomic_load_n(&j->stalled, __ATOMIC_RELAXED);
	out->witness_same_fs = j->witness_same_fs;
	out->witness_rollback = j->witness_rollback;
}

int journal_close(struct journal *j)
{
	int ret = 0;

	if (!j)
		return 0;
	if (j->threads_started) {
		lq_close(&j->queue);
		pthread_join(j->writer_thread, NULL);
		syncer_wait_idle(j);
		syncer_stop(j);
		pthread_join(j->syncer_thread, NULL);
		ret = j->sync.error;
	}
	if (j->out.len)
		ret = ret ? ret : -EIO;
	if (j->seg_fd >= 0 && j->cfg.fsync != JOURNAL_FSYNC_NEVER && fdatasync(j->seg_fd) < 0)
		ret = ret ? ret : -errno;
	journal_free(j);
	return ret;
}
