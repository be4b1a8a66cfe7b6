/* Mark id -> session id under a rwlock (gateway/marktab.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/marktab.h"

#define MARKTAB_BUCKETS 1024u
#define MARKTAB_MARK_MAX 0xFFFFFu

struct mt_node {
	struct mt_node *next;
	uint32_t id;
	char sid[MARKTAB_ID_MAX + 1];
	char cgdir[MARKTAB_CG_MAX + 1];
	char policy[MARKTAB_POLICY_MAX + 1];   /* "" the default policy */
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

static struct mt_node **slot(struct marktab *t, uint32_t id)
{
	struct mt_node **pp = &t->b[id % MARKTAB_BUCKETS];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	return pp;
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
	n = *pp;
	if (!n && (n = calloc(1, sizeof(*n))) != NULL) {
		n->id = id;
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
	if (n) {
		*pp = n->next;
		t->n--;
	}
	pthread_rwlock_unlock(&t->lock);
	free(n);
	return n ? 0 : -ENOENT;
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
