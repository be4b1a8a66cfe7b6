/*
 * The stateful detectors other than pipe to shell. Each keeps, per rule and session, a
 * ring of the recent events its condition selected, and looks at it when a trigger
 * arrives:
 *   exfiltration   selected reads, then a net.connect from a related process (the same
 *                  pid, or one sharing a known ancestor) within the window;
 *   cleanup        selected deletions within the window before session.terminate;
 *   blocked_burst  threshold selected events (blocked egress) within the window;
 *   first_domain   a selected event names a domain its tenant never reached before.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect_int.h"

struct det_state *det_state_of(const struct engine_view *v, bool create)
{
	struct sess *s = v->s;

	if (!create && (s->n_rules != v->n_rules || !s->det))
		return NULL;
	if (sess_alloc_rules(s, v->n_rules))
		return NULL;
	if (!s->det[v->rule_idx] && create)
		s->det[v->rule_idx] = calloc(1, sizeof(struct det_state));
	return s->det[v->rule_idx];
}

struct ring_ent *ring_push(struct det_state *st, const struct engine_view *v, int64_t pid,
			   const char *note)
{
	struct ring_ent *e = &st->ring[st->head];

	memset(e, 0, sizeof(*e));
	st->head = (st->head + 1) % SESS_RING;
	if (st->n < SESS_RING)
		st->n++;
	e->seq = v->seq;
	e->ts_us = v->ts_us;
	e->pid = pid;
	snprintf(e->note, sizeof(e->note), "%s", note ? note : "");
	return e;
}

/* The k-th most recent entry (k from 1). */
struct ring_ent *ring_at(struct det_state *st, size_t k)
{
	return &st->ring[(st->head + SESS_RING - k) % SESS_RING];
}

bool ring_live(const struct engine_view *v, const struct ring_ent *e)
{
	int64_t age = v->ts_us - e->ts_us;

	return age >= -RING_SKEW_US && age <= (int64_t)v->r->window_ms * 1000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Refs: the trigger plus the most recent entries that pass keep(), ascending. */
static size_t collect(struct det_state *st, const struct engine_view *v, struct det_hit *hit,
		      bool (*keep)(const struct engine_view *, const struct ring_ent *, void *),
		      void *arg, const char **last_note)
{
	size_t n = 0;

	*last_note = NULL;
	for (size_t k = 1; k <= st->n; k++) {
		struct ring_ent *e = ring_at(st, k);

		if (e->seq == UINT64_MAX || !keep(v, e, arg))
			continue;
		if (!*last_note)
			*last_note = e->note;
		if (hit->n_refs < DETECT_MAX_REFS - 1)
			hit->refs[hit->n_refs++] = e->seq;
		n++;
	}
	return n;
}

void det_finish_refs(struct det_hit *hit, uint64_t trigger)
{
	bool have = false;

	for (size_t i = 0; i < hit->n_refs; i++)
		have |= hit->refs[i] == trigger;
	if (!have && hit->n_refs < DETECT_MAX_REFS)
		hit->refs[hit->n_refs++] = trigger;
	qsort(hit->refs, hit->n_refs, sizeof(hit->refs[0]), cmp_u64);
}

static void ring_forget(struct det_state *st)
{
	for (size_t k = 1; k <= st->n; k++)
		ring_at(st, k)->seq = UINT64_MAX;   /* used: never counted again */
}

static int64_t pid_of(const struct eval_ctx *x)
{
	json_t *p = json_object_get(x->ev, "pid");

	return json_is_integer(p) ? json_integer_value(p) : -1;
}

/* pid and its ancestors that exec'd in the session (at most 6). */
static size_t chain(const struct sess *s, int64_t pid, int64_t out[6])
{
	size_t n = 0;

	out[n++] = pid;
	while (n < 6) {
		const struct proc_ent *p = sess_proc(s, out[n - 1]);

		if (!p || p->ppid <= 0 || !sess_proc(s, p->ppid))
			break;
		out[n++] = p->ppid;
	}
	return n;
}

static bool related(const struct engine_view *v, const struct ring_ent *e, void *arg)
{
	int64_t a[6], b[6], pid = *(int64_t *)arg;
	size_t na, nb;

	if (!ring_live(v, e) || pid <= 0 || e->pid <= 0)
		return false;
	na = chain(v->s, pid, a);
	nb = chain(v->s, e->pid, b);
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			if (a[i] == b[j])
				return true;
	return false;
}

static bool recent(const struct engine_view *v, const struct ring_ent *e, void *arg)
{
	(void)arg;
	return ring_live(v, e);
}

static int set_extra(struct det_hit *hit, const char *k1, json_t *v1, const char *k2,
		     json_t *v2)
{
	hit->extra = json_object();
	if (!hit->extra || json_object_set_new(hit->extra, k1, v1) ||
	    json_object_set_new(hit->extra, k2, v2))
		return -ENOMEM;
	return 1;
}

static int det_exfil(const struct engine_view *v, const struct eval_ctx *x, bool matched,
		     struct det_hit *hit)
{
	const char *path = json_string_value(json_object_get(x->ev, "path")), *note;
	bool connect = strcmp(v->event, "net.connect") == 0;
	struct det_state *st = connect || matched ? det_state_of(v, !connect) : NULL;
	int64_t pid = pid_of(x);
	size_t n;

	if (!st)
		return connect || !matched ? 0 : -ENOMEM;
	if (!connect) {
		ring_push(st, v, pid, path);
		return 0;
	}
	n = collect(st, v, hit, related, &pid, &note);
	if (n < v->r->threshold) {
		hit->n_refs = 0;
		return 0;
	}
	ring_forget(st);
	det_finish_refs(hit, v->seq);
	return set_extra(hit, "file", json_string(note), "reads", json_integer((json_int_t)n));
}

static int det_cleanup(const struct engine_view *v, const struct eval_ctx *x, bool matched,
		       struct det_hit *hit)
{
	bool end = strcmp(v->event, "session.terminate") == 0;
	struct det_state *st = end || matched ? det_state_of(v, !end) : NULL;
	const char *note;
	size_t n;

	if (!st)
		return end || !matched ? 0 : -ENOMEM;
	if (!end) {
		ring_push(st, v, pid_of(x), json_string_value(json_object_get(x->ev, "path")));
		return 0;
	}
	n = collect(st, v, hit, recent, NULL, &note);
	if (n < v->r->threshold) {
		hit->n_refs = 0;
		return 0;
	}
	ring_forget(st);
	det_finish_refs(hit, v->seq);
	if (set_extra(hit, "deleted", json_integer((json_int_t)n), "last_path",
		      json_string(note)) < 0 ||
	    json_object_set_new(hit->extra, "window_s",
				json_integer((json_int_t)(v->r->window_ms / 1000))))
		return -ENOMEM;
	return 1;
}

static int det_burst(const struct engine_view *v, const struct eval_ctx *x, bool matched,
		     struct det_hit *hit)
{
	struct det_state *st;
	const char *note;
	size_t n;

	if (!matched)
		return 0;
	st = det_state_of(v, true);
	if (!st)
		return -ENOMEM;
	ring_push(st, v, pid_of(x), NULL);
	n = collect(st, v, hit, recent, NULL, &note);
	if (n < v->r->threshold) {
		hit->n_refs = 0;
		return 0;
	}
	ring_forget(st);
	det_finish_refs(hit, v->seq);
	return set_extra(hit, "count", json_integer((json_int_t)n), "window_s",
			 json_integer((json_int_t)(v->r->window_ms / 1000)));
}

/* The name an egress event reached: domain, sni, http_host or qname, lowercased. */
static bool domain_of(const struct eval_ctx *x, char *out, size_t len)
{
	static const char *keys[] = { "domain", "sni", "http_host", "qname" };
	size_t n;

	for (size_t i = 0; i < 4; i++) {
		const char *s = json_string_value(json_object_get(x->ev, keys[i]));

		if (!s || !*s)
			continue;
		snprintf(out, len, "%s", s);
		for (n = 0; out[n]; n++)
			out[n] = (char)tolower((unsigned char)out[n]);
		if (n > 1 && out[n - 1] == '.')
			out[n - 1] = '\0';
		return true;
	}
	return false;
}

static int det_first_domain(const struct engine_view *v, const struct eval_ctx *x,
			    bool matched, struct det_hit *hit)
{
	const char *tenant = json_string_value(json_object_get(x->session, "tenant_id"));
	char dom[256];
	int r;

	if (!matched || !domain_of(x, dom, sizeof(dom)))
		return 0;
	r = domains_add(v->domains, tenant ? tenant : "", dom);
	if (r <= 0)
		return r;
	hit->refs[hit->n_refs++] = v->seq;
	return set_extra(hit, "domain", json_string(dom), "tenant",
			 tenant ? json_string(tenant) : json_null());
}

int det_run(const struct engine_view *v, const struct eval_ctx *x, bool matched,
	    struct det_hit *hit)
{
	switch (v->r->det) {
	case DET_FIRST_DOMAIN: return det_first_domain(v, x, matched, hit);
	case DET_PIPE_SHELL: return matched ? det_pipe(v, x, hit) : 0;
	case DET_DOWNLOADED_EXEC: return matched ? det_dlexec(v, x, hit) : 0;
	case DET_EXFIL: return det_exfil(v, x, matched, hit);
	case DET_CLEANUP: return det_cleanup(v, x, matched, hit);
	case DET_BURST: return det_burst(v, x, matched, hit);
	default: return 0;
	}
}
