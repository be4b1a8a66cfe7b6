/*
 * Per-session state: what session.create said (tenant, user), the recent process tree
 * (pid -> parent, from process.exec), and per rule the detector rings and rate limits.
 * Bounded: at most SESS_MAX sessions (the oldest is forgotten), SESS_PROCS processes
 * and SESS_RING trigger events per rule and session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/engine_int.h"

static size_t bucket_of(const char *sid)
{
	uint32_t h = 2166136261u;

	for (; *sid; sid++)
		h = (h ^ (unsigned char)*sid) * 16777619u;
	return h % SESS_BUCKETS;
}

void det_state_free(struct det_state **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void sess_free(struct sess *s)
{
	det_state_free(s->det, s->n_rules);
	free(s->rate);
	json_decref(s->info);
	free(s->sid);
	free(s);
}

void sess_drop(struct detect *d, struct sess *s)
{
	struct sess **pp = &d->buckets[bucket_of(s->sid)];

	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
	if (s->older)
		s->older->newer = s->newer;
	else
		d->oldest = s->newer;
	if (s->newer)
		s->newer->older = s->older;
	else
		d->newest = s->older;
	d->n_sess--;
	sess_free(s);
}

struct sess *sess_get(struct detect *d, const char *sid)
{
	size_t b = bucket_of(sid);
	struct sess *s;

	for (s = d->buckets[b]; s; s = s->next)
		if (strcmp(s->sid, sid) == 0)
			return s;
	if (d->n_sess >= SESS_MAX && d->oldest)
		sess_drop(d, d->oldest);
	s = calloc(1, sizeof(*s));
	if (!s || !(s->sid = strdup(sid)) || !(s->info = json_object())) {
		if (s)
			free(s->sid);
		free(s);
		return NULL;
	}
	s->next = d->buckets[b];
	d->buckets[b] = s;
	s->older = d->newest;
	if (d->newest)
		d->newest->newer = s;
	else
		d->oldest = s;
	d->newest = s;
	d->n_sess++;
	return s;
}

void sess_set_info(struct sess *s, json_t *ev)
{
	static const char *keys[] = { "tenant_id", "user_id", "template" };

	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_object_get(ev, keys[i]);

		json_object_set(s->info, keys[i], v ? v : json_null());
	}
}

int sess_alloc_rules(struct sess *s, size_t n)
{
	if (s->n_rules == n && (n == 0 || s->rate))
		return 0;
	det_state_free(s->det, s->n_rules);
	free(s->rate);
	s->det = calloc(n + 1, sizeof(*s->det));
	s->rate = calloc(n + 1, sizeof(*s->rate));
	s->n_rules = n;
	if (!s->det || !s->rate) {
		free(s->det);
		free(s->rate);
		s->det = NULL;
		s->rate = NULL;
		s->n_rules = 0;
		return -ENOMEM;
	}
	return 0;
}

void sessions_reset_rules(struct detect *d)
{
	for (struct sess *s = d->oldest; s; s = s->newer) {
		det_state_free(s->det, s->n_rules);
		free(s->rate);
		s->det = NULL;
		s->rate = NULL;
		s->n_rules = 0;
	}
}

void sessions_free_all(struct detect *d)
{
	while (d->oldest)
		sess_drop(d, d->oldest);
}

void sess_note_exec(struct sess *s, const struct eval_ctx *x, uint64_t seq)
{
	json_t *pid = json_object_get(x->ev, "pid"), *ppid = json_object_get(x->ev, "ppid");
	struct proc_ent *p;

	if (!json_is_integer(pid))
		return;
	p = &s->procs[s->procs_head];
	s->procs_head = (s->procs_head + 1) % SESS_PROCS;
	if (s->n_procs < SESS_PROCS)
		s->n_procs++;
	p->pid = json_integer_value(pid);
	p->ppid = json_is_integer(ppid) ? json_integer_value(ppid) : 0;
	p->seq = seq;
}

/* The most recent exec of pid in the session, or NULL. */
const struct proc_ent *sess_proc(const struct sess *s, int64_t pid)
{
	for (size_t k = 1; k <= s->n_procs; k++) {
		const struct proc_ent *p = &s->procs[(s->procs_head + SESS_PROCS - k) % SESS_PROCS];

		if (p->pid == pid)
			return p;
	}
	return NULL;
}
