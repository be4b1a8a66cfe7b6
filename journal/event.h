/*
 * The one way any part of sandgate records something: build an event, set its fields,
 * emit it. The journal adds the envelope's seq, prev and host; the producer gives the
 * type, the session, the source and (optionally) the time it observed the thing.
 *
 *	struct event *e = event_new("process.exit", sid, EVENT_SRC_KERNEL);
 *	event_int(e, "pid", pid);
 *	event_null(e, "signal");
 *	rc = event_emit(e);        // takes ownership, even on failure
 *
 * Field values are arbitrary bytes (a sandbox controls many of them); they are encoded
 * as valid single-line JSON whatever they hold (common/buf.h). Keys are the caller's
 * own literals. Inside an array pass key = NULL. A NULL string value is JSON null:
 * missing values are null, never omitted (interface.md).
 */
#ifndef SANDGATE_JOURNAL_EVENT_H
#define SANDGATE_JOURNAL_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/buf.h"

struct shape_tok;

enum event_source {
	EVENT_SRC_KERNEL,
	EVENT_SRC_GATEWAY,
	EVENT_SRC_ORCHESTRATOR,
	EVENT_SRC_SANDGATE,
};

#define EVENT_TYPE_MAX 48
#define EVENT_MAX_DEPTH 16
#define EVENT_SID_INLINE 65   /* a session id (64 bytes at most) needs no allocation */

struct event {
	char type[EVENT_TYPE_MAX];
	char *session_id;            /* NULL: host-level event */
	enum event_source source;
	struct timespec ts;          /* wall time of the observation */
	struct buf body;             /* the event's own fields: ,"k":v,"k":v (leading comma) */
	/* The body's shape (journal/shape.h), offsets from the body's start, built with it. */
	struct shape_tok *tok;
	uint32_t n_tok, cap_tok;
	uint32_t open_tok[EVENT_MAX_DEPTH];   /* the token of each open container */
	uint32_t open_at[EVENT_MAX_DEPTH];    /* and where in the body it starts */
	bool no_shape;               /* too many tokens, or a value we cannot describe */
	int depth;
	bool need_comma[EVENT_MAX_DEPTH];
	bool bad;                    /* a builder misuse (depth); emit refuses it */
	/* Private to event.c: recycled events (the pool) and the usual session id's room. */
	struct event *pool_next;
	char sid_inline[EVENT_SID_INLINE];
};

/* Returns NULL only when out of memory. ts is set to now. */
struct event *event_new(const char *type, const char *session_id, enum event_source src);
void event_free(struct event *e);
/* Events freed and kept for reuse in the shared pool (threads' own caches aside). */
size_t event_pool_size(void);

void event_set_time(struct event *e, const struct timespec *wall);
void event_str(struct event *e, const char *key, const char *val);
void event_strn(struct event *e, const char *key, const char *val, size_t len);
void event_int(struct event *e, const char *key, int64_t v);
void event_uint(struct event *e, const char *key, uint64_t v);
void event_bool(struct event *e, const char *key, bool v);
void event_null(struct event *e, const char *key);
void event_double(struct event *e, const char *key, double v);   /* NaN/inf: null */
/* A value that is already JSON we produced ourselves (never sandbox bytes). */
void event_raw(struct event *e, const char *key, const char *json);
void event_object_begin(struct event *e, const char *key);
void event_object_end(struct event *e);
void event_array_begin(struct event *e, const char *key);
void event_array_end(struct event *e);

const char *event_source_str(enum event_source src);

/*
 * Where emitted events go: the daemon points this at its journal; tests and tools may
 * point it elsewhere. submit takes ownership of e and returns 0 or -errno.
 */
typedef int (*event_submit_fn)(void *ctx, struct event *e);
void event_set_sink(event_submit_fn submit, void *ctx);

/*
 * Hands e to the sink. Takes ownership. Returns 0; -ENOTCONN when no sink is set;
 * -ENOMEM when building the event ran out of memory; -EINVAL on a builder misuse; or
 * the sink's error. May block while the journal's queue is full: the packet path
 * holds its verdict rather than allow what it cannot record.
 */
int event_emit(struct event *e);

#endif
