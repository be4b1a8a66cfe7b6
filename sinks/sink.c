/*
 * A sink's delivery loop (sinks/sink.h): read a batch after the sent cursor, filter
 * and frame it, write it, and move the durable cursor once the receiver surely holds
 * it. Any failure rewinds to the durable cursor and backs off: the batch is sent again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/envelope.h"
#include "sinks/ocsf.h"
#include "sinks/sink_impl.h"

/*
 * Writes the durable cursor when it moved: at once when forced, else at most every
 * SINK_SAVE_MS. What a crash loses is only the knowledge that lines arrived: they are
 * sent again (at-least-once), never skipped.
 */
static int save_cursor(struct sink *k, bool force)
{
	uint64_t now = sink_now_ms();
	int ret;

	if (!k->dirty || (!force && now < k->saved_ms + SINK_SAVE_MS))
		return 0;
	ret = sink_cursor_save(k->cursor_path, &k->committed);
	if (ret == 0) {
		k->dirty = false;
		k->saved_ms = now;
	}
	return ret;
}

static int dup_opt(char **to, const char *from)
{
	*to = from ? strdup(from) : NULL;
	return from && !*to ? -ENOMEM : 0;
}

static int copy_settings(struct sink *k, const struct sink_settings *s)
{
	k->s = *s;
	k->name = strdup(s->name);
	k->path = s->path ? strdup(s->path) : NULL;
	k->url = s->url ? strdup(s->url) : NULL;
	k->token = s->token ? strdup(s->token) : NULL;
	if ((s->url && !k->url) || (s->token && !k->token) ||
	    dup_opt(&k->ca_file, s->ca_file) || dup_opt(&k->server_name, s->server_name) ||
	    dup_opt(&k->cert_file, s->cert_file) || dup_opt(&k->key_file, s->key_file))
		return -ENOMEM;
	if (!k->cert_file != !k->key_file)
		return -EINVAL;
	k->host = strdup(s->host ? s->host : "-");
	k->events = calloc(s->n_events + 1, sizeof(*k->events));
	if (!k->name || !k->host || !k->events || (s->path && !k->path))
		return -ENOMEM;
	for (size_t i = 0; i < s->n_events; i++)
		if (!(k->events[i] = strdup(s->events[i])))
			return -ENOMEM;
	if (s->addr) {
		if (s->addr_len > sizeof(k->addr))
			return -EINVAL;
		memcpy(&k->addr, s->addr, s->addr_len);
	}
	return 0;
}

static int make_paths(struct sink *k, const char *state_dir)
{
	char dir[4096];

	if ((size_t)snprintf(dir, sizeof(dir), "%s/sinks", state_dir) >= sizeof(dir) ||
	    (size_t)snprintf(k->cursor_path, sizeof(k->cursor_path), "%s/%s.cursor", dir,
			     k->name) >= sizeof(k->cursor_path) ||
	    (size_t)snprintf(k->journal_dir, sizeof(k->journal_dir), "%s/journal",
			     state_dir) >= sizeof(k->journal_dir))
		return -ENAMETOOLONG;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int sink_new(struct sink **out, const char *state_dir, const struct sink_settings *s)
{
	struct sink *k = calloc(1, sizeof(*k));
	int ret;

	if (!k)
		return -ENOMEM;
	k->fd = -1;
	buf_init(&k->out);
	buf_init(&k->ocsf);
	buf_init(&k->http);
	ret = copy_settings(k, s);
	if (ret == 0)
		ret = make_paths(k, state_dir);
	if (ret == 0)
		ret = sink_stats_init(k, state_dir);
	if (ret == 0)
		ret = sink_cursor_load(k->cursor_path, &k->committed);
	if (ret) {
		sink_free(k);
		return ret;
	}
	k->sent = k->committed;
	/* A new sink's cursor is written at once: retention waits for it from the first
	 * line, not only once it has delivered something (retention/retention.h). */
	if (access(k->cursor_path, F_OK) < 0 && errno == ENOENT) {
		k->dirty = true;
		ret = save_cursor(k, true);
		if (ret) {
			sink_free(k);
			return ret;
		}
	}
	*out = k;
	return 0;
}

void sink_free(struct sink *k)
{
	if (!k)
		return;
	/* Stopping: nobody to tell of a failed save, which only means duplicates later. */
	(void)save_cursor(k, true);
	sink_stats_fini(k);
	sink_io_close(k);
	sink_tls_free(k);
	buf_free(&k->out);
	follow_buf_free(&k->rd);
	buf_free(&k->ocsf);
	buf_free(&k->http);
	for (size_t i = 0; k->events && k->events[i]; i++)
		free(k->events[i]);
	free(k->events);
	free(k->name);
	free(k->path);
	free(k->url);
	free(k->token);
	free(k->ca_file);
	free(k->server_name);
	free(k->cert_file);
	free(k->key_file);
	free(k->host);
	free(k);
}

const char *sink_name(const struct sink *k)
{
	return k->name;
}

const char *sink_last_error(const struct sink *k)
{
	return k->err_detail;
}

bool sink_is_syslog(const struct sink *k)
{
	return k->s.kind == SINK_SYSLOG_TCP || k->s.kind == SINK_SYSLOG_TLS;
}

static int on_line(void *ctx, const char *line, size_t len, const struct follow_pos *pos)
{
	struct sink *k = ctx;
	struct line_envelope env;

	const char *msg = line;
	size_t msg_len = len;
	int ret;

	(void)pos;
	/* A line without an envelope is damage that verify reports; it is not sent. */
	if (line_envelope_parse(line, len, &env) ||
	    !sink_filter_pass(k->events, k->s.n_events, env.event, env.event_len) ||
	    !sink_verbosity_pass(k->s.verbosity, env.event, env.event_len, line, len))
		return 0;
	if (k->s.format == SINK_OCSF) {
		buf_reset(&k->ocsf);
		ret = ocsf_render(&k->ocsf, line, len);
		if (ret)
			return ret == -EINVAL ? 0 : ret;   /* not renderable: skipped like damage */
		msg = k->ocsf.data;
		msg_len = k->ocsf.len;
	}
	if (sink_is_syslog(k))
		return sink_syslog_frame(&k->out, k->host, line, len, msg, msg_len);
	if (k->s.kind == SINK_HEC)
		return sink_hec_event(&k->out, k->host, line, len, msg, msg_len,
				      k->s.format == SINK_OCSF);
	if (k->s.kind == SINK_OTLP_HTTP)
		return sink_otlp_record(&k->out, line, len, msg, msg_len, k->out.len == 0);
	buf_put(&k->out, msg, msg_len);
	buf_putc(&k->out, '\n');
	return k->out.oom ? -ENOMEM : 0;
}

/* syslog: batches the peer's TCP acknowledged, sent confirm_ms ago, become durable. */
static int confirm(struct sink *k)
{
	uint64_t now = sink_now_ms();
	size_t done = 0;
	int unacked = 0, ret;

	if (k->n_pending == 0)
		return 0;
	ret = sink_io_unacked(k, &unacked);
	if (ret || unacked)
		return ret;
	while (done < k->n_pending && k->pending[done].sent_ms + k->s.confirm_ms <= now)
		k->committed = k->pending[done++].after;
	if (!done)
		return 0;
	memmove(k->pending, k->pending + done, (k->n_pending - done) * sizeof(k->pending[0]));
	k->n_pending -= done;
	k->dirty = true;
	return save_cursor(k, false);
}

/* Rewinds to what is durable and schedules the retry with exponential backoff. */
static int fail(struct sink *k, int err, uint64_t *retry_ms)
{
	sink_io_close(k);
	k->sent = k->committed;
	k->n_pending = 0;
	k->backoff_ms = k->backoff_ms ? k->backoff_ms * 2 : k->s.retry_min_ms;
	if (k->backoff_ms > k->s.retry_max_ms)
		k->backoff_ms = k->s.retry_max_ms;
	*retry_ms = k->backoff_ms;
	k->reconnects++;
	return err;
}

static int delivered(struct sink *k, const struct follow_cursor *c)
{
	k->sent = *c;
	k->backoff_ms = 0;
	if (!sink_is_syslog(k)) {
		k->committed = *c;
		k->dirty = true;
		/* A file sink's lines are on disk already: its cursor follows at once, so a
		 * restart writes every line once. */
		return save_cursor(k, k->s.kind == SINK_FILE || k->s.kind == SINK_STDOUT);
	}
	k->pending[k->n_pending++] = (struct sink_pending){ *c, sink_now_ms() };
	return 0;
}

/* Opens the transport and checks a TCP peer is still there; confirms what it holds. */
static int prepare(struct sink *k)
{
	int ret = sink_io_open(k);

	if (ret == 0 && sink_is_syslog(k))
		ret = sink_io_alive(k);
	if (ret == 0 && sink_is_syslog(k))
		ret = confirm(k);
	return ret;
}

static int step_once(struct sink *k, size_t *progressed, uint64_t *retry_ms)
{
	struct follow_cursor c;
	size_t n = 0;
	int ret;

	k->err_detail[0] = '\0';   /* what the failure below, if any, explains */
	ret = prepare(k);
	*progressed = 0;
	if (ret)
		return fail(k, ret, retry_ms);
	if (k->n_pending == SINK_PENDING_MAX)
		return 0;   /* the receiver is slow: wait for confirmations */
	c = k->sent;
	buf_reset(&k->out);
	ret = follow_read_buf(k->journal_dir, &c, k->s.batch_lines, on_line, k, &n, &k->rd);
	if (ret == -ENOENT) {
		k->idle = true;
		return 0;   /* no journal yet */
	}
	if (ret == 0 && k->out.len)
		ret = sink_io_write(k, k->out.data, k->out.len);
	if (ret)
		return fail(k, ret, retry_ms);
	if (n == 0) {
		k->idle = k->n_pending == 0;
		return save_cursor(k, true);   /* caught up: nothing may wait in memory */
	}
	k->lines_sent += n;
	*progressed = n;
	return delivered(k, &c);
}

int sink_step(void *ctx, size_t *progressed, uint64_t *retry_ms)
{
	struct sink *k = ctx;
	int ret;

	k->idle = false;
	ret = step_once(k, progressed, retry_ms);
	sink_track(k, ret, *progressed);
	return ret;
}
