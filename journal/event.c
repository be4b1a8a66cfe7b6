#include "journal/event.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static event_submit_fn sink_submit;
static void *sink_ctx;

struct event *event_new(const char *type, const char *session_id, enum event_source src)
{
	struct event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	snprintf(e->type, sizeof(e->type), "%s", type);
	if (session_id) {
		e->session_id = strdup(session_id);
		if (!e->session_id) {
			free(e);
			return NULL;
		}
	}
	e->source = src;
	clock_gettime(CLOCK_REALTIME, &e->ts);
	buf_init(&e->body);
	return e;
}

void event_free(struct event *e)
{
	if (!e)
		return;
	free(e->session_id);
	buf_free(&e->body);
	free(e);
}

void event_set_time(struct event *e, const struct timespec *wall)
{
	e->ts = *wall;
}

/* Separator and key; at depth 0 every field follows the envelope, so always a comma. */
static void event_key(struct event *e, const char *key)
{
	if (e->depth == 0 || e->need_comma[e->depth])
		buf_putc(&e->body, ',');
	e->need_comma[e->depth] = true;
	if (e->depth == 0 && !key) {
		e->bad = true;
		key = "";
	}
	/* Keys are the caller's literals ([a-z0-9_]), never sandbox bytes: no escaping. */
	if (key) {
		buf_putc(&e->body, '"');
		buf_puts(&e->body, key);
		buf_put(&e->body, "\":", 2);
	}
}

void event_strn(struct event *e, const char *key, const char *val, size_t len)
{
	event_key(e, key);
	if (val)
		buf_put_json_str(&e->body, val, len);
	else
		buf_puts(&e->body, "null");
}

void event_str(struct event *e, const char *key, const char *val)
{
	event_strn(e, key, val, val ? strlen(val) : 0);
}

void event_int(struct event *e, const char *key, int64_t v)
{
	event_key(e, key);
	buf_put_i64(&e->body, v);
}

void event_uint(struct event *e, const char *key, uint64_t v)
{
	event_key(e, key);
	buf_put_u64(&e->body, v);
}

void event_bool(struct event *e, const char *key, bool v)
{
	event_key(e, key);
	buf_puts(&e->body, v ? "true" : "false");
}

void event_null(struct event *e, const char *key)
{
	event_key(e, key);
	buf_puts(&e->body, "null");
}

void event_double(struct event *e, const char *key, double v)
{
	event_key(e, key);
	if (isfinite(v))
		buf_printf(&e->body, "%.17g", v);
	else
		buf_puts(&e->body, "null");
}

void event_raw(struct event *e, const char *key, const char *json)
{
	event_key(e, key);
	buf_puts(&e->body, json);
}

static void event_open(struct event *e, const char *key, char c)
{
	event_key(e, key);
	buf_putc(&e->body, c);
	if (e->depth + 1 >= EVENT_MAX_DEPTH) {
		e->bad = true;
		return;
	}
	e->depth++;
	e->need_comma[e->depth] = false;
}

static void event_close(struct event *e, char c)
{
	if (e->depth == 0) {
		e->bad = true;
		return;
	}
	buf_putc(&e->body, c);
	e->depth--;
}

void event_object_begin(struct event *e, const char *key) { event_open(e, key, '{'); }
void event_object_end(struct event *e) { event_close(e, '}'); }
void event_array_begin(struct event *e, const char *key) { event_open(e, key, '['); }
void event_array_end(struct event *e) { event_close(e, ']'); }

const char *event_source_str(enum event_source src)
{
	switch (src) {
	case EVENT_SRC_KERNEL: return "kernel";
	case EVENT_SRC_GATEWAY: return "gateway";
	case EVENT_SRC_ORCHESTRATOR: return "orchestrator";
	case EVENT_SRC_SANDGATE: return "sandgate";
	}
	return "sandgate";
}

void event_set_sink(event_submit_fn submit, void *ctx)
{
	sink_submit = submit;
	sink_ctx = ctx;
}

int event_emit(struct event *e)
{
	int ret;

	if (!e)
		return -ENOMEM;
	if (e->body.oom) {
		ret = -ENOMEM;
		goto fail;
	}
	if (e->bad || e->depth != 0) {
		ret = -EINVAL;
		goto fail;
	}
	if (!sink_submit) {
		ret = -ENOTCONN;
		goto fail;
	}
	return sink_submit(sink_ctx, e);
fail:
	event_free(e);
	return ret;
}
