/*
 * Mark id -> session id under a rwlock (gateway/marktab.h). Each bucket chain holds the
 * current mapping of an id and its retired ones (the earlier holders, newest first).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/marktab.h"

#define MARKTAB_BUCKETS 1024u
#define MARKTAB_MARK_MAX 0xFFFFFu

struct mt_node {
	struct mt_node *next;
	uint32_t id;
	char sid[MARKTAB_ID_MAX + 1];
	char cgdir[MARKTAB_CG_MAX + 1];
	char policy[MARKTAB_POLICY_MAX + 1];   /* "" the default policy */
	int64_t since_ns, until_ns;   /* when it held the mark (until: retired ones) */
	bool retired;
};

struct marktab {
	pthread_rwlock_t lock;
	struct mt_node *b[MARKTAB_BUCKETS];
	size_t n;
};

int marktab_new(struct marktab **out)
{
	struct marktab *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	r = pthread_rwlock_init(&t->lock, NULL);
	if (r != 0) {
		free(t);
		return -r;
	}
	*out = t;
	return 0;
}

void marktab_free(struct marktab *t)
{
	struct mt_node *n, *next;

	if (!t)
		return;
	for (size_t i = 0; i < MARKTAB_BUCKETS; i++)
		for (n = t->b[i]; n; n = next) {
			next = n->next;
			free(n);
		}
	pthread_rwlock_destroy(&t->lock);
	free(t);
}

/* The current mapping of id (or where a new one goes: the chain's end). */
static struct mt_node **slot(struct marktab *t, uint32_t id)
{
	struct mt_node **pp = &t->b[id % MARKTAB_BUCKETS];

	while (*pp && ((*pp)->id != id || (*pp)->retired))
		pp = &(*pp)->next;
	return pp;
}

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Whether id had a holder before (a retired mapping is in its chain). */
static bool had_holder(struct marktab *t, uint32_t id)
{
	for (struct mt_node *n = t->b[id % MARKTAB_BUCKETS]; n; n = n->next)
		if (n->id == id && n->retired)
			return true;
	return false;
}

/* Ends the current mapping *pp at now: it moves behind the chain's head as a retired
 * one; past MARKTAB_RETIRED of id the oldest are freed. */
static void retire(struct marktab *t, struct mt_node **pp)
{
	struct mt_node *n = *pp, **q, *old;
	unsigned kept = 0;

	*pp = n->next;
	n->retired = true;
	n->until_ns = wall_ns();
	n->next = t->b[n->id % MARKTAB_BUCKETS];
	t->b[n->id % MARKTAB_BUCKETS] = n;
	t->n--;
	for (q = &n->next; *q;) {
		if ((*q)->id == n->id && (*q)->retired && ++kept >= MARKTAB_RETIRED) {
			old = *q;
			*q = old->next;
			free(old);
			continue;
		}
		q = &(*q)->next;
	}
}

int marktab_set(struct marktab *t, uint32_t id, const char *sid, const char *cgdir)
{
	struct mt_node **pp, *n;
	size_t len = sid ? strlen(sid) : 0, cglen = cgdir ? strlen(cgdir) : 0;

	if (id == 0 || id > MARKTAB_MARK_MAX || len == 0 || len > MARKTAB_ID_MAX ||
	    cglen > MARKTAB_CG_MAX)
		return -EINVAL;
	pthread_rwlock_wrlock(&t->lock);
	pp = slot(t, id);
	if (*pp && strcmp((*pp)->sid, sid) != 0)
		retire(t, pp);   /* another session takes the mark */
	pp = slot(t, id);
	n = *pp;
	if (!n && (n = calloc(1, sizeof(*n))) != NULL) {
		n->id = id;
		/* The first holder this process knows claims the older entries too. */
		n->since_ns = had_holder(t, id) ? wall_ns() : 0;
		*pp = n;
		t->n++;
	}
	if (n) {
		memcpy(n->sid, sid, len + 1);
		memcpy(n->cgdir, cglen ? cgdir : "", cglen + 1);
	}
	pthread_rwlock_unlock(&t->lock);
	return n ? 0 : -ENOMEM;
}

int marktab_del(struct marktab *t, uint32_t id)
{
	struct mt_node **pp, *n;

	pthread_rwlock_wrlock(&t->lock);
	pp = slot(t, id);
	n = *pp;
	if (n)
		retire(t, pp);
	pthread_rwlock_unlock(&t->lock);
	return n ? 0 : -ENOENT;
}

int marktab_set_since(struct marktab *t, uint32_t id, int64_t since_ns)
{
	struct mt_node *n;

	pthread_rwlock_wrlock(&t->lock);
	n = *slot(t, id);
	if (n)
		n->since_ns = since_ns;
	pthread_rwlock_unlock(&t->lock);
	return n ? 0 : -ENOENT;
}

/* The mapping of id at at_ns: the current one from its start, else the newest retired
 * one whose span holds at_ns. */
static const struct mt_node *holder_at(struct marktab *t, uint32_t id, int64_t at_ns)
{
	const struct mt_node *n = *slot(t, id);

	if (n && (at_ns == 0 || n->since_ns <= at_ns))
		return n;
	if (at_ns == 0)
		return NULL;
	for (n = t->b[id % MARKTAB_BUCKETS]; n; n = n->next)
		if (n->id == id && n->retired && n->since_ns <= at_ns && at_ns <= n->until_ns)
			return n;
	return NULL;
}

int marktab_get_at(struct marktab *t, uint32_t id, int64_t at_ns, char *out, size_t cap)
{
	const struct mt_node *n;
	int ret = -ENOENT;

	pthread_rwlock_rdlock(&t->lock);
	n = holder_at(t, id, at_ns);
	if (n && strlen(n->sid) >= cap)
		ret = -ENOSPC;
	else if (n) {
		strcpy(out, n->sid);
		ret = 0;
	}
	pthread_rwlock_unlock(&t->lock);
	return ret;
}

int marktab_get(struct marktab *t, uint32_t id, char *out, size_t cap)
{
	struct mt_node *n;
	int ret = -ENOENT;

	pthread_rwlock_rdlock(&t->lock);
	n = *slot(t, id);
	if (n && strlen(n->sid) >= cap)
		ret = -ENOSPC;
	else if (n) {
		strcpy(out, n->sid);
		ret = 0;
	}
	pthread_rwlock_unlock(&t->lock);
	return ret;
}

int marktab_get_cgroup(struct marktab *t, uint32_t id, char *out, size_t cap)
{
	struct mt_node *n;
	int ret = -ENOENT;

	pthread_rwlock_rdlock(&t->lock);
	n = *slot(t, id);
	if (n && n->cgdir[0] && strlen(n->cgdir) >= cap)
		ret = -ENOSPC;
	else if (n && n->cgdir[0]) {
		strcpy(out, n->cgdir);
		ret = 0;
	}
	pthread_rwlock_unlock(&t->lock);
	return ret;
}

int marktab_set_policy(struct marktab *t, uint32_t id, const char *policy)
{
	struct mt_node *n;
	size_t len = policy ? strlen(policy) : 0;

	if (len > MARKTAB_POLICY_MAX)
		return -EINVAL;
	pthread_rwlock_wrlock(&t->lock);
	n = *slot(t, id);
	if (n)
		memcpy(n->policy, len ? policy : "", len + 1);
	pthread_rwlock_unlock(&t->lock);
	return n ? 0 : -ENOENT;
}

int marktab_get_policy(struct marktab *t, uint32_t id, char *out, size_t cap)
{
	struct mt_node *n;
	int ret = -ENOENT;

	pthread_rwlock_rdlock(&t->lock);
	n = *slot(t, id);
	if (n && strlen(n->policy) >= cap)
		ret = -ENOSPC;
	else if (n) {
		strcpy(out, n->policy);
		ret = 0;
	}
	pthread_rwlock_unlock(&t->lock);
	return ret;
}

size_t marktab_count(struct marktab *t)
{
	size_t n;

	pthread_rwlock_rdlock(&t->lock);
	n = t->n;
	pthread_rwlock_unlock(&t->lock);
	return n;
}
