#include "journal/event.h"
#include "journal/shape.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static event_submit_fn sink_submit;
static void *sink_ctx;

/*
 * Recycled events. A freed event keeps its body buffer and goes to its thread's cache,
 * and from there in batches to a shared pool that event_new draws from, so a busy
 * producer reuses warm memory without a malloc or a lock per event. The journal frames
 * an event on the thread that emits it and frees it there (journal/queue.c), so the
 * thread's own cache serves it back; the pool is for events freed on another thread
 * than the one that built them (an event handed between threads, one dropped there).
 */
#define CACHE_MAX 64          /* events a thread keeps for itself */
#define CACHE_MOVE 32         /* moved to or from the shared pool under one lock */
#define POOL_MAX 8192         /* beyond this, freed events go back to malloc */
#define BODY_KEEP 4096        /* a body buffer larger than this is not kept */
#define TOK_KEEP 256          /* nor a shape of more tokens than this */

#if defined(__SANITIZE_ADDRESS__)
#define EVENT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EVENT_ASAN 1
#endif
#endif
#ifdef EVENT_ASAN
#include <sanitizer/asan_interface.h>
#define FIELDS(e, from, to) ((char *)(e) + offsetof(struct event, from)), \
	(offsetof(struct event, to) - offsetof(struct event, from))

static void poison(void *p, size_t n, bool on)
{
	if (on)
		ASAN_POISON_MEMORY_REGION(p, n);
	else
		ASAN_UNPOISON_MEMORY_REGION(p, n);
}

/*
 * A pooled event stays poisoned, and so do its body's bytes: a use after free still
 * trips ASan. The link and the body's pointer stay readable (LeakSanitizer follows them).
 */
static void pool_poison(struct event *e, bool on)
{
	poison(FIELDS(e, type, body), on);
	poison(FIELDS(e, depth, pool_next), on);
	poison(e->sid_inline, sizeof(e->sid_inline), on);
	if (e->body.data)
		poison(e->body.data, e->body.cap, on);
}
#define POOL_POISON(e) pool_poison((e), true)
#define POOL_UNPOISON(e) pool_poison((e), false)
#else
#define POOL_POISON(e) ((void)(e))
#define POOL_UNPOISON(e) ((void)(e))
#endif

struct event_cache {
	struct event *head;
	size_t n;
	bool registered;              /* the key's destructor will drain it */
};

static _Thread_local struct event_cache tcache;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct event *pool_head;
static size_t pool_n;                 /* written under pool_lock, read without it */
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static bool cache_key_ok;

static void event_release(struct event *e)
{
	POOL_UNPOISON(e);
	buf_free(&e->body);
	free(e->tok);
	free(e);
}

/* Moves up to n events from the thread's cache to the pool (or to malloc past POOL_MAX). */
static void cache_spill(size_t n)
{
	struct event *e, *drop = NULL;

	pthread_mutex_lock(&pool_lock);
	while (n-- && (e = tcache.head)) {
		tcache.head = e->pool_next;
		tcache.n--;
		if (pool_n < POOL_MAX) {
			e->pool_next = pool_head;
			pool_head = e;
			__atomic_store_n(&pool_n, pool_n + 1, __ATOMIC_RELAXED);
		} else {
			e->pool_next = drop;
			drop = e;
		}
	}
	pthread_mutex_unlock(&pool_lock);
	while ((e = drop)) {
		drop = e->pool_next;
		event_release(e);
	}
}

static void cache_drain(void *unused)
{
	(void)unused;
	cache_spill(SIZE_MAX);
	tcache.registered = false;    /* a later free in this thread registers again */
}

static void cache_key_init(void)
{
	cache_key_ok = pthread_key_create(&cache_key, cache_drain) == 0;
}

/* The thread's cache goes back to the pool when the thread exits (cache_drain). False:
 * this thread cannot keep a cache (no key). */
static bool cache_register(void)
{
	if (tcache.registered)
		return true;
	if (pthread_once(&cache_once, cache_key_init) != 0 || !cache_key_ok ||
	    pthread_setspecific(cache_key, &tcache) != 0)
		return false;
	tcache.registered = true;
	return true;
}

/* Keeps e for reuse; an event the thread cannot cache (no key) is freed. */
static void cache_put(struct event *e)
{
	if (!cache_register()) {
		event_release(e);
		return;
	}
	POOL_POISON(e);
	e->pool_next = tcache.head;
	tcache.head = e;
	if (++tcache.n > CACHE_MAX)
		cache_spill(CACHE_MOVE);
}

/* A recycled event (its body buffer kept, emptied), or a new zeroed one. */
static struct event *cache_get(void)
{
	struct event *e;

	/* Only a thread whose cache is drained at its exit takes from the pool: what it
	 * took and did not use would be lost with it. */
	if (!tcache.head && __atomic_load_n(&pool_n, __ATOMIC_RELAXED) && cache_register()) {
		pthread_mutex_lock(&pool_lock);
		while (tcache.n < CACHE_MOVE && (e = pool_head)) {
			pool_head = e->pool_next;
			__atomic_store_n(&pool_n, pool_n - 1, __ATOMIC_RELAXED);
			e->pool_next = tcache.head;
			tcache.head = e;
			tcache.n++;
		}
		pthread_mutex_unlock(&pool_lock);
	}
	e = tcache.head;
	if (!e)
		return calloc(1, sizeof(*e));
	tcache.head = e->pool_next;
	tcache.n--;
	POOL_UNPOISON(e);
	e->pool_next = NULL;
	buf_reset(&e->body);
	e->depth = 0;
	e->bad = false;
	return e;
}

size_t event_pool_size(void)
{
	return __atomic_load_n(&pool_n, __ATOMIC_RELAXED);
}

struct event *event_new(const char *type, const char *session_id, enum event_source src)
{
	struct event *e = cache_get();
	size_t n;

	if (!e)
		return NULL;
	n = strnlen(type, sizeof(e->type) - 1);
	memcpy(e->type, type, n);
	e->type[n] = '\0';
	e->session_id = NULL;
	if (session_id) {
		n = strlen(session_id);
		if (n < sizeof(e->sid_inline)) {
			memcpy(e->sid_inline, session_id, n + 1);
			e->session_id = e->sid_inline;
		} else if (!(e->session_id = strdup(session_id))) {
			event_free(e);
			return NULL;
		}
	}
	e->source = src;
	e->n_tok = 0;
	e->no_shape = false;
	clock_gettime(CLOCK_REALTIME, &e->ts);
	return e;
}

void event_free(struct event *e)
{
	if (!e)
		return;
	if (e->session_id != e->sid_inline)
		free(e->session_id);
	e->session_id = NULL;
	if (e->body.cap > BODY_KEEP || e->body.oom)
		buf_free(&e->body);
	if (e->cap_tok > TOK_KEEP) {
		free(e->tok);
		e->tok = NULL;
		e->cap_tok = 0;
	}
	cache_put(e);
}

void event_set_time(struct event *e, const struct timespec *wall)
{
	e->ts = *wall;
}

/*
 * The value just written (the last token) is of kind k. A string's raw_len is its bytes
 * before encoding: the encoded text longer than those and its quotes holds an escape
 * (or a replaced invalid byte: flagged too, and decoded as having none).
 */
static void tok_end(struct event *e, enum shape_kind k, size_t raw_len)
{
	struct shape_tok *t;

	if (e->no_shape || e->n_tok == 0)
		return;
	t = &e->tok[e->n_tok - 1];
	t->len = (uint32_t)(e->body.len - t->len);
	t->kind = (uint8_t)k;
	if (k == SHAPE_STRING && t->len != raw_len + 2)
		t->kind |= SHAPE_ESC;
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
	/*
	 * The value about to be written: a token at the body's end (its length and kind set
	 * by tok_end once written). A shape that cannot be kept is dropped, not the event:
	 * its readers parse the line instead. (Here, not in a helper of its own: the
	 * contract test follows builders' calls only so deep.)
	 */
	if (e->no_shape)
		return;
	if (e->n_tok == e->cap_tok) {
		uint32_t cap = e->cap_tok ? e->cap_tok * 2 : 32;
		struct shape_tok *grown;

		if (cap > SHAPE_MAX_TOKENS || !(grown = realloc(e->tok, cap * sizeof(*grown)))) {
			e->no_shape = true;
			return;
		}
		e->tok = grown;
		e->cap_tok = cap;
	}
	/* len holds the value's start until tok_end makes it the length. */
	e->tok[e->n_tok++] = (struct shape_tok){
		.len = (uint32_t)e->body.len,
		.key_len = (uint16_t)(key ? strlen(key) : 0),
		.depth = (uint8_t)e->depth,
	};
}

void event_strn(struct event *e, const char *key, const char *val, size_t len)
{
	event_key(e, key);
	if (val)
		buf_put_json_str(&e->body, val, len);
	else
		buf_puts(&e->body, "null");
	tok_end(e, val ? SHAPE_STRING : SHAPE_NULL, len);
}

void event_str(struct event *e, const char *key, const char *val)
{
	event_strn(e, key, val, val ? strlen(val) : 0);
}

void event_int(struct event *e, const char *key, int64_t v)
{
	event_key(e, key);
	buf_put_i64(&e->body, v);
	tok_end(e, SHAPE_NUMBER, 0);
}

void event_uint(struct event *e, const char *key, uint64_t v)
{
	event_key(e, key);
	buf_put_u64(&e->body, v);
	tok_end(e, SHAPE_NUMBER, 0);
	/* Above int64, jansson refuses the whole line: let its readers say so, as before. */
	if (v > INT64_MAX)
		e->no_shape = true;
}

void event_bool(struct event *e, const char *key, bool v)
{
	event_key(e, key);
	buf_puts(&e->body, v ? "true" : "false");
	tok_end(e, v ? SHAPE_TRUE : SHAPE_FALSE, 0);
}

void event_null(struct event *e, const char *key)
{
	event_key(e, key);
	buf_puts(&e->body, "null");
	tok_end(e, SHAPE_NULL, 0);
}

void event_double(struct event *e, const char *key, double v)
{
	event_key(e, key);
	if (isfinite(v))
		buf_printf(&e->body, "%.17g", v);
	else
		buf_puts(&e->body, "null");
	tok_end(e, isfinite(v) ? SHAPE_NUMBER : SHAPE_NULL, 0);
}

void event_raw(struct event *e, const char *key, const char *json)
{
	event_key(e, key);
	buf_puts(&e->body, json);
	e->no_shape = true;      /* JSON text of its own: its readers parse it */
}

static void event_open(struct event *e, const char *key, char c)
{
	event_key(e, key);
	buf_putc(&e->body, c);
	tok_end(e, c == '{' ? SHAPE_OBJECT : SHAPE_ARRAY, 0);
	if (e->depth + 1 >= EVENT_MAX_DEPTH) {
		e->bad = true;
		return;
	}
	e->depth++;
	e->open_tok[e->depth] = e->n_tok - 1;
	e->open_at[e->depth] = (uint32_t)(e->body.len - 1);
	e->need_comma[e->depth] = false;
}

static void event_close(struct event *e, char c)
{
	if (e->depth == 0) {
		e->bad = true;
		return;
	}
	buf_putc(&e->body, c);
	if (!e->no_shape)
		e->tok[e->open_tok[e->depth]].len = (uint32_t)(e->body.len - e->open_at[e->depth]);
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
