/* Per-session address -> name bindings with expiry (gateway/dnsbind.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "gateway/dnsbind.h"

#define DNSBIND_BUCKETS 4096u

struct db_name {
	int64_t expire_ms;           /* 0: slot free */
	uint64_t seq;                /* order of the answers: the highest is the latest */
	char name[DNSBIND_NAME_MAX];
};

/* One (session, address) with every name an answer bound to it, each with its TTL. */
struct db_node {
	struct db_node *next;
	uint32_t id;
	int family;
	uint8_t addr[16];
	int64_t expire_ms;           /* the latest expiry of its names */
	struct db_name names[DNSBIND_NAMES_PER_ADDR];
};

struct dnsbind {
	struct db_node *b[DNSBIND_BUCKETS];
	size_t n, cap;
	uint64_t seq;
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
	return fnv1a(FNV1A_INIT ^ id, addr, alen(family)) % DNSBIND_BUCKETS;
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

/* The slot for name in n: its own, a free one, or the one expiring first. */
static struct db_name *name_slot(struct db_node *n, const char *name)
{
	struct db_name *victim = &n->names[0];

	for (size_t i = 0; i < DNSBIND_NAMES_PER_ADDR; i++)
		if (n->names[i].expire_ms && !strcmp(n->names[i].name, name))
			return &n->names[i];
	for (size_t i = 0; i < DNSBIND_NAMES_PER_ADDR; i++) {
		if (!n->names[i].expire_ms)
			return &n->names[i];
		if (n->names[i].expire_ms < victim->expire_ms)
			victim = &n->names[i];
	}
	return victim;
}

int dnsbind_add(struct dnsbind *b, uint32_t id, int family, const uint8_t *addr,
		const char *name, int64_t expire_ms)
{
	struct db_node **pp, *n;
	struct db_name *nm;
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
	nm = name_slot(n, name);
	memcpy(nm->name, name, len + 1);
	nm->expire_ms = expire_ms;
	nm->seq = ++b->seq;
	n->expire_ms = 0;
	for (size_t i = 0; i < DNSBIND_NAMES_PER_ADDR; i++)
		if (n->names[i].expire_ms > n->expire_ms)
			n->expire_ms = n->names[i].expire_ms;
	return 0;
}

/* The live node of the key at now_ms (an expired one is dropped), or NULL. */
static struct db_node *live(struct dnsbind *b, uint32_t id, int family,
			    const uint8_t *addr, int64_t now_ms)
{
	struct db_node **pp;

	if (family != AF_INET && family != AF_INET6)
		return NULL;
	pp = find(b, id, family, addr);
	if (!*pp)
		return NULL;
	if ((*pp)->expire_ms <= now_ms) {
		unlink_node(b, pp);
		return NULL;
	}
	return *pp;
}

int dnsbind_lookup(struct dnsbind *b, uint32_t id, int family, const uint8_t *addr,
		   int64_t now_ms, char *out, size_t cap)
{
	struct db_node *n = live(b, id, family, addr, now_ms);
	const struct db_name *best = NULL;

	if (!n)
		return -ENOENT;
	for (size_t i = 0; i < DNSBIND_NAMES_PER_ADDR; i++)
		if (n->names[i].expire_ms > now_ms && (!best || n->names[i].seq > best->seq))
			best = &n->names[i];
	if (!best)
		return -ENOENT;
	if (strlen(best->name) >= cap)
		return -ENOSPC;
	strcpy(out, best->name);
	return 0;
}

size_t dnsbind_names(struct dnsbind *b, uint32_t id, int family, const uint8_t *addr,
		     int64_t now_ms, char out[][DNSBIND_NAME_MAX], size_t max)
{
	struct db_node *n = live(b, id, family, addr, now_ms);
	size_t k = 0;

	for (size_t i = 0; n && i < DNSBIND_NAMES_PER_ADDR && k < max; i++)
		if (n->names[i].expire_ms > now_ms)
			memcpy(out[k++], n->names[i].name, DNSBIND_NAME_MAX);
	return k;
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
