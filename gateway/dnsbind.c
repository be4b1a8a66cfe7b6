/* Per-session address -> name bindings with expiry (gateway/dnsbind.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/dnsbind.h"

#define DNSBIND_BUCKETS 4096u

struct db_node {
	struct db_node *next;
	uint32_t id;
	int family;
	uint8_t addr[16];
	int64_t expire_ms;
	char name[DNSBIND_NAME_MAX];
};

struct dnsbind {
	struct db_node *b[DNSBIND_BUCKETS];
	size_t n, cap;
};

int dnsbind_new(size_t cap, struct dnsbind **out)
{
	struct dnsbind *b;

	if (cap == 0)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->cap = cap;
	*out = b;
	return 0;
}

void dnsbind_free(struct dnsbind *b)
{
	struct db_node *n, *next;

	if (!b)
		return;
	for (size_t i = 0; i < DNSBIND_BUCKETS; i++)
		for (n = b->b[i]; n; n = next) {
			next = n->next;
			free(n);
		}
	free(b);
}

static size_t alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

static unsigned hash(uint32_t id, int family, const uint8_t *addr)
{
	uint32_t h = 2166136261u ^ id;

	for (size_t i = 0; i < alen(family); i++)
		h = (h ^ addr[i]) * 16777619u;
	return h % DNSBIND_BUCKETS;
}

static struct db_node **find(struct dnsbind *b, uint32_t id, int family,
			     const uint8_t *addr)
{
	struct db_node **pp = &b->b[hash(id, family, addr)];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->id == id && (*pp)->family == family &&
		    !memcmp((*pp)->addr, addr, alen(family)))
			break;
	return pp;
}

static void unlink_node(struct dnsbind *b, struct db_node **pp)
{
	struct db_node *n = *pp;

	*pp = n->next;
	free(n);
	b->n--;
}

int dnsbind_add(struct dnsbind *b, uint32_t id, int family, const uint8_t *addr,
		const char *name, int64_t expire_ms)
{
	struct db_node **pp, *n;
	size_t len = name ? strlen(name) : 0;

	if ((family != AF_INET && family != AF_INET6) || len == 0 || len >= DNSBIND_NAME_MAX)
		return -EINVAL;
	pp = find(b, id, family, addr);
	n = *pp;
	if (!n) {
		if (b->n >= b->cap)
			return -ENOSPC;
		n = calloc(1, sizeof(*n));
		if (!n)
			return -ENOMEM;
		n->id = id;
		n->family = family;
		memcpy(n->addr, addr, alen(family));
		n->next = b->b[hash(id, family, addr)];
		b->b[hash(id, family, addr)] = n;
		b->n++;
	}
	memcpy(n->name, name, len + 1);
	n->expire_ms = expire_ms;
	return 0;
}

int dnsbind_lookup(struct dnsbind *b, uint32_t id, int family, const uint8_t *addr,
		   int64_t now_ms, char *out, size_t cap)
{
	struct db_node **pp;

	if (family != AF_INET && family != AF_INET6)
		return -ENOENT;
	pp = find(b, id, family, addr);
	if (!*pp)
		return -ENOENT;
	if ((*pp)->expire_ms <= now_ms) {
		unlink_node(b, pp);
		return -ENOENT;
	}
	if (strlen((*pp)->name) >= cap)
		return -ENOSPC;
	strcpy(out, (*pp)->name);
	return 0;
}

/* Drops the nodes for which drop(node, arg) is true; returns how many. */
static size_t sweep(struct dnsbind *b, bool (*drop)(const struct db_node *, int64_t),
		    int64_t arg)
{
	struct db_node **pp;
	size_t k = 0;

	for (size_t i = 0; i < DNSBIND_BUCKETS; i++)
		for (pp = &b->b[i]; *pp;) {
			if (drop(*pp, arg)) {
				unlink_node(b, pp);
				k++;
			} else {
				pp = &(*pp)->next;
			}
		}
	return k;
}

static bool is_id(const struct db_node *n, int64_t id)
{
	return n->id == (uint32_t)id;
}

static bool is_expired(const struct db_node *n, int64_t now)
{
	return n->expire_ms <= now;
}

void dnsbind_forget(struct dnsbind *b, uint32_t id)
{
	sweep(b, is_id, id);
}

size_t dnsbind_expire(struct dnsbind *b, int64_t now_ms)
{
	return sweep(b, is_expired, now_ms);
}

size_t dnsbind_count(const struct dnsbind *b)
{
	return b->n;
}
