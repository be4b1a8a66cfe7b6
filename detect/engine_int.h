/* The engine's own state (detect/engine.c, detect/session_state.c). */
#ifndef SANDGATE_DETECT_ENGINE_INT_H
#define SANDGATE_DETECT_ENGINE_INT_H

#include <pthread.h>

#include "detect/detect_int.h"

#define SESS_BUCKETS 1024
#define SESS_MAX 4096          /* sessions tracked; the oldest is forgotten beyond */

struct detect {
	pthread_mutex_t mu;          /* feed, set_rules and metrics come from three threads */
	struct detect_settings s;
	struct detect_rules *rules;
	struct sess *buckets[SESS_BUCKETS];
	struct sess *oldest, *newest;
	size_t n_sess;
	struct domain_set *domains;
	struct detect_stats st;
	uint64_t *per_rule;          /* alerts per rule index */
	size_t n_per_rule;
};

/* The state of session sid ("" host-level), created on first sight. NULL: no memory. */
struct sess *sess_get(struct detect *d, const char *sid);
/* Keeps tenant_id, user_id, template of a session.create event. */
void sess_set_info(struct sess *s, json_t *ev);
void sess_drop(struct detect *d, struct sess *s);
void sessions_reset_rules(struct detect *d);
void sessions_free_all(struct detect *d);

#endif
