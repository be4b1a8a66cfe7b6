/*
 * Records that stay bounded under a flood of blocked attempts (docs/gateway.md "Blocked
 * attempts past the budget"). Each session has a budget of blocked attempts per second
 * (gateway.blocked_budget, a token bucket as deep as one second of it): within it every
 * blocked flow and query gets its own net.connect / net.dns; past it the attempt is
 * counted into a net.blocked_summary per (kind, protocol, destination, name, reason)
 * written every gateway.blocked_summary_interval with count, first_ts and last_ts. A
 * session folds at most BS_KEYS distinct keys per interval; the rest go to one overflow
 * summary of the session, so a flood over random destinations is bounded too. Nothing is
 * dropped: every attempt is in a line of its own or in a count.
 * Own mutex: called with or without g->lock held (never the other way round).
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gw_int.h"
#include "journal/event.h"
#include "nft/nft.h"

#define BS_BUCKETS 256u
#define BS_KEYS 64u            /* distinct keys a session folds per interval */
#define BS_NAME_MAX 256        /* a longer name is cut (the key then, too) */

enum bs_kind { BS_CONNECT, BS_DNS };

struct bs_key {
	uint8_t kind, proto, family;
	bool has_port;
	uint16_t dport, qtype;
	uint8_t dst[16];
	char name[BS_NAME_MAX];        /* SNI, Host, bound domain or query name; "" none */
	char reason[40];
};

struct bs_entry {
	struct bs_key k;
	uint64_t count;
	struct timespec first, last;
};

struct bs_sess {
	struct bs_sess *next;
	uint32_t id;
	char sid[MARKTAB_ID_MAX + 1];
	int64_t tokens_m, refill_ms;   /* milli-attempts left, when last refilled */
	struct bs_entry *e;            /* this interval's keys */
	unsigned n;
	struct bs_entry over;          /* keys past BS_KEYS (count 0: none) */
};

struct gw_blocksum {
	pthread_mutex_t lock;
	unsigned budget;               /* per second; 0: never fold */
	uint64_t interval_ms;
	int64_t next_flush_ms;
	struct bs_sess *b[BS_BUCKETS];
};

int gw_blocksum_new(unsigned budget, uint64_t interval_ms, struct gw_blocksum **out)
{
	struct gw_blocksum *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->budget = budget;
	s->interval_ms = interval_ms ? interval_ms : 5000;
	s->next_flush_ms = time_mono_ms() + (int64_t)s->interval_ms;
	*out = s;
	return 0;
}

static void sess_free(struct bs_sess *n)
{
	free(n->e);
	free(n);
}

void gw_blocksum_free(struct gw_blocksum *s)
{
	struct bs_sess *n, *next;

	if (!s)
		return;
	for (size_t i = 0; i < BS_BUCKETS; i++)
		for (n = s->b[i]; n; n = next) {
			next = n->next;
			sess_free(n);
		}
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static struct bs_sess **slot(struct gw_blocksum *s, uint32_t id)
{
	struct bs_sess **pp = &s->b[id % BS_BUCKETS];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	return pp;
}

/* The session of mark id, made with a full bucket; NULL without memory. */
static struct bs_sess *sess_of(struct gw_blocksum *s, uint32_t id, const char *sid,
			       int64_t now)
{
	struct bs_sess **pp = slot(s, id), *n = *pp;

	if (!n && (n = calloc(1, sizeof(*n))) != NULL) {
		n->id = id;
		n->tokens_m = (int64_t)s->budget * 1000;
		n->refill_ms = now;
		*pp = n;
	}
	if (n)
		snprintf(n->sid, sizeof(n->sid), "%s", sid);
	return n;
}

/* Takes one attempt from the bucket: true when it was within the budget. */
static bool take(struct gw_blocksum *s, struct bs_sess *n, int64_t now)
{
	int64_t cap = (int64_t)s->budget * 1000;

	n->tokens_m += (now - n->refill_ms) * (int64_t)s->budget;
	n->refill_ms = now;
	if (n->tokens_m > cap)
		n->tokens_m = cap;
	if (n->tokens_m < 1000)
		return false;
	n->tokens_m -= 1000;
	return true;
}

static void count_in(struct bs_entry *e, const struct timespec *at)
{
	if (e->count++ == 0)
		e->first = *at;
	e->last = *at;
}

/* Adds one attempt with key k to the session's entries (or its overflow). */
static void fold(struct bs_sess *n, const struct bs_key *k, const struct timespec *at)
{
	struct bs_entry *e;

	for (unsigned i = 0; i < n->n; i++)
		if (!memcmp(&n->e[i].k, k, sizeof(*k))) {
			count_in(&n->e[i], at);
			return;
		}
	if (!n->e)
		n->e = calloc(BS_KEYS, sizeof(*n->e));
	if (!n->e || n->n == BS_KEYS) {
		count_in(&n->over, at);   /* without memory too: counted all the same */
		return;
	}
	e = &n->e[n->n++];
	memset(e, 0, sizeof(*e));
	e->k = *k;
	count_in(e, at);
}

/*
 * Whether the attempt with key k of session id is folded (true) or gets its own line.
 * Without memory for the session's state the line is written: never uncounted.
 */
static bool summarise(struct gateway *g, uint32_t id, const char *sid, const struct bs_key *k)
{
	struct gw_blocksum *s = g->bsum;
	int64_t now = time_mono_ms();
	struct timespec at;
	struct bs_sess *n;
	bool folded = false;

	if (!s || s->budget == 0 || id == 0)
		return false;
	clock_gettime(CLOCK_REALTIME, &at);
	pthread_mutex_lock(&s->lock);
	n = sess_of(s, id, sid, now);
	if (n && !take(s, n, now)) {
		fold(n, k, &at);
		folded = true;
	}
	pthread_mutex_unlock(&s->lock);
	if (folded) {
		atomic_fetch_add_explicit(&g->st.blocked_summarised, 1, memory_order_relaxed);
		gw_flood_engage(g, id, sid);   /* past the budget: limited in the kernel */
	}
	return folded;
}

static void set_name(struct bs_key *k, const char *name)
{
	snprintf(k->name, sizeof(k->name), "%s", name ? name : "");
}

static bool blocked(const struct flow *f)
{
	return f->verdict == NFT_MARK_DENY && !(f->vstr && strcmp(f->vstr, "blocked"));
}

static void connect_key(const struct flow *f, struct bs_key *k)
{
	memset(k, 0, sizeof(*k));
	k->kind = BS_CONNECT;
	k->proto = f->proto;
	k->family = (uint8_t)f->family;
	memcpy(k->dst, f->dst, f->family == AF_INET ? 4 : 16);
	k->has_port = f->has_ports;
	k->dport = f->has_ports ? f->dport : 0;
	set_name(k, f->sni[0] ? f->sni : f->http_host[0] ? f->http_host : f->domain);
	snprintf(k->reason, sizeof(k->reason), "%s", f->reason ? f->reason : "");
}

bool gw_summarised_connect(struct gateway *g, const struct flow *f)
{
	struct bs_key k;

	if (!blocked(f))
		return false;   /* only blocked flows: an allowed one always has its record */
	connect_key(f, &k);
	return summarise(g, f->mark_id, f->sid, &k);
}

void gw_blocked_again(struct gateway *g, const struct flow *f, const struct gw_pkt *p)
{
	struct gw_blocksum *s = g->bsum;
	struct timespec at;
	struct bs_key k;
	struct bs_sess *n;
	bool syn = p->proto == IPPROTO_TCP &&
		   (p->tcp_flags & (PKT_TCP_SYN | PKT_TCP_ACK)) == PKT_TCP_SYN;

	if (!s || !blocked(f) || f->is_dns || !(syn || p->proto == IPPROTO_UDP))
		return;
	connect_key(f, &k);
	clock_gettime(CLOCK_REALTIME, &at);
	pthread_mutex_lock(&s->lock);
	n = sess_of(s, f->mark_id, f->sid, time_mono_ms());
	if (n)
		fold(n, &k, &at);
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add_explicit(&g->st.blocked_summarised, 1, memory_order_relaxed);
}

bool gw_summarised_dns(struct gateway *g, uint32_t mark_id, const struct dnspend_entry *q,
		       bool tcp)
{
	struct bs_key k;

	memset(&k, 0, sizeof(k));
	k.kind = BS_DNS;
	k.proto = tcp ? IPPROTO_TCP : IPPROTO_UDP;
	k.family = (uint8_t)q->key.family;
	memcpy(k.dst, q->key.server, q->key.family == AF_INET ? 4 : 16);
	k.has_port = true;
	k.dport = q->key.sport;
	k.qtype = q->qtype;
	set_name(&k, q->qname);
	snprintf(k.reason, sizeof(k.reason), "%s", q->reason ? q->reason : "");
	return summarise(g, mark_id, q->sid, &k);
}

static void ts_field(struct event *e, const char *key, const struct timespec *ts)
{
	char b[RFC3339_LEN + 1];

	time_format_rfc3339(ts, b);
	event_str(e, key, b);
}

/* net.blocked_summary of one entry (over: the session's overflow, no key). */
static struct event *summary_event(const struct gw_blocksum *s, const struct bs_sess *n,
				   const struct bs_entry *en, bool over)
{
	struct event *e = event_new("net.blocked_summary", n->sid[0] ? n->sid : NULL,
				    EVENT_SRC_GATEWAY);
	const struct bs_key *k = &en->k;
	char t[DNS_TYPE_STR_MAX];

	if (!e)
		return NULL;
	event_str(e, "kind", over ? NULL : k->kind == BS_DNS ? "dns" : "connect");
	event_str(e, "proto", over ? NULL : gw_proto_name(k->proto));
	if (over)
		event_null(e, "dst");
	else
		gw_ev_endpoint(e, "dst", k->family, k->dst, k->dport, k->has_port);
	event_str(e, "name", !over && k->name[0] ? k->name : NULL);
	event_str(e, "qtype", !over && k->kind == BS_DNS ? dns_type_str(k->qtype, t) : NULL);
	event_str(e, "reason", !over && k->reason[0] ? k->reason : NULL);
	event_str(e, "verdict", "blocked");
	event_uint(e, "count", en->count);
	ts_field(e, "first_ts", &en->first);
	ts_field(e, "last_ts", &en->last);
	event_bool(e, "overflow", over);
	event_uint(e, "budget", s->budget);
	event_uint(e, "interval_ms", s->interval_ms);
	return e;
}

/* Moves the entries of n onto l as events and empties them. */
static void take_entries(struct gw_blocksum *s, struct bs_sess *n, struct gw_evlist *l)
{
	for (unsigned i = 0; i < n->n; i++)
		gw_evlist_push(l, summary_event(s, n, &n->e[i], false));
	if (n->over.count)
		gw_evlist_push(l, summary_event(s, n, &n->over, true));
	n->n = 0;
	memset(&n->over, 0, sizeof(n->over));
	free(n->e);   /* a quiet session holds no key memory */
	n->e = NULL;
}

void gw_blocksum_flush(struct gateway *g, bool force)
{
	struct gw_blocksum *s = g->bsum;
	struct gw_evlist l = { 0 };
	int64_t now = time_mono_ms();
	bool due;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	due = force || now >= s->next_flush_ms;
	if (due) {
		s->next_flush_ms = now + (int64_t)s->interval_ms;
		for (size_t i = 0; i < BS_BUCKETS; i++)
			for (struct bs_sess *n = s->b[i]; n; n = n->next)
				take_entries(s, n, &l);
	}
	pthread_mutex_unlock(&s->lock);
	if (due)
		gw_flood_tick(g, &l);   /* and what the kernel rejected meanwhile */
	gw_evlist_flush(g, &l);
}

void gw_blocksum_forget(struct gateway *g, uint32_t mark_id)
{
	struct gw_blocksum *s = g->bsum;
	struct gw_evlist l = { 0 };
	struct bs_sess **pp, *n;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	pp = slot(s, mark_id);
	n = *pp;
	if (n) {
		take_entries(s, n, &l);   /* its last counts go out with it */
		*pp = n->next;
	}
	pthread_mutex_unlock(&s->lock);
	if (n)
		sess_free(n);
	gw_evlist_flush(g, &l);
}
