/* Outstanding DNS queries (gateway/dnspend.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/dnspend.h"

#define DNSPEND_BUCKETS 1024u

struct dp_node {
	struct dp_node *next;
	struct dnspend_entry e;
};

struct dnspend {
	struct dp_node *b[DNSPEND_BUCKETS];
	size_t n, cap;
};

int dnspend_new(size_t cap, struct dnspend **out)
{
	struct dnspend *p;

	if (cap == 0)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cap = cap;
	*out = p;
	return 0;
}

void dnspend_free(struct dnspend *p)
{
	struct dp_node *n, *next;

	if (!p)
		return;
	for (size_t i = 0; i < DNSPEND_BUCKETS; i++)
		for (n = p->b[i]; n; n = next) {
			next = n->next;
			free(n);
		}
	free(p);
}

static unsigned hash(const struct dnspend_key *k)
{
	return ((unsigned)k->dns_id * 31u + k->cport) % DNSPEND_BUCKETS;
}

static bool key_eq(const struct dnspend_key *a, const struct dnspend_key *b)
{
	size_t al = a->family == AF_INET ? 4 : 16;

	return a->family == b->family && a->tcp == b->tcp && a->dns_id == b->dns_id &&
	       a->cport == b->cport && a->sport == b->sport &&
	       !memcmp(a->client, b->client, al) && !memcmp(a->server, b->server, al);
}

static struct dp_node **find(struct dnspend *p, const struct dnspend_key *k)
{
	struct dp_node **pp = &p->b[hash(k)];

	while (*pp && !key_eq(&(*pp)->e.key, k))
		pp = &(*pp)->next;
	return pp;
}

int dnspend_add(struct dnspend *p, const struct dnspend_entry *e)
{
	struct dp_node **pp = find(p, &e->key), *n;

	if (*pp)
		return -EEXIST;
	if (p->n >= p->cap)
		return -ENOSPC;
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->e = *e;
	n->next = NULL;
	*pp = n;
	p->n++;
	return 0;
}

static void take(struct dnspend *p, struct dp_node **pp, struct dnspend_entry *out)
{
	struct dp_node *n = *pp;

	*pp = n->next;
	*out = n->e;
	free(n);
	p->n--;
}

int dnspend_take(struct dnspend *p, const struct dnspend_key *key,
		 struct dnspend_entry *out)
{
	struct dp_node **pp = find(p, key);

	if (!*pp)
		return -ENOENT;
	take(p, pp, out);
	return 0;
}

int dnspend_pop_expired(struct dnspend *p, int64_t cutoff_ms, struct dnspend_entry *out)
{
	struct dp_node **pp;

	if (p->n == 0)
		return -ENOENT;
	for (size_t i = 0; i < DNSPEND_BUCKETS; i++)
		for (pp = &p->b[i]; *pp; pp = &(*pp)->next)
			if ((*pp)->e.sent_ms <= cutoff_ms) {
				take(p, pp, out);
				return 0;
			}
	return -ENOENT;
}

size_t dnspend_count(const struct dnspend *p)
{
	return p->n;
}
