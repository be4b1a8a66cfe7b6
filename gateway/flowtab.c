/* Flows by conntrack id (gateway/flowtab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "dns/dns.h"
#include "gateway/flowtab.h"
#include "gateway/parse.h"

#define FLOWTAB_BUCKETS 8192u

struct ft_node {
	struct ft_node *next;
	struct flow f;
};

struct flowtab {
	struct ft_node *b[FLOWTAB_BUCKETS];
	size_t n, cap;
};

int flowtab_new(size_t cap, struct flowtab **out)
{
	struct flowtab *t;

	if (cap == 0)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cap = cap;
	*out = t;
	return 0;
}

static void node_free(struct ft_node *n)
{
	free(n->f.buf);
	http_follow_free(n->f.hf);
	dns_tcp_free(n->f.dtcp[0]);
	dns_tcp_free(n->f.dtcp[1]);
	free(n);
}

void flowtab_free(struct flowtab *t)
{
	struct ft_node *n, *next;

	if (!t)
		return;
	for (size_t i = 0; i < FLOWTAB_BUCKETS; i++)
		for (n = t->b[i]; n; n = next) {
			next = n->next;
			node_free(n);
		}
	free(t);
}

void flow_key_reverse(const struct flow_key *k, struct flow_key *out)
{
	struct flow_key r = *k;   /* a copy: out may be k */

	memcpy(r.src, k->dst, sizeof(r.src));
	memcpy(r.dst, k->src, sizeof(r.dst));
	r.sport = k->dport;
	r.dport = k->sport;
	*out = r;
}

static bool key_eq(const struct flow_key *a, const struct flow_key *b)
{
	return a->family == b->family && a->proto == b->proto && a->sport == b->sport &&
	       a->dport == b->dport && !memcmp(a->src, b->src, sizeof(a->src)) &&
	       !memcmp(a->dst, b->dst, sizeof(a->dst));
}

static unsigned key_hash(const struct flow_key *k)
{
	uint32_t h = FNV1A_INIT;

	/* field by field: the key's padding bytes are not initialised */
	h = fnv1a_u32(h, k->family);
	h = fnv1a_u32(h, k->proto);
	h = fnv1a_u32(h, k->sport);
	h = fnv1a_u32(h, k->dport);
	h = fnv1a(h, k->src, sizeof(k->src));
	return fnv1a(h, k->dst, sizeof(k->dst)) % FLOWTAB_BUCKETS;
}

static struct ft_node **find(struct flowtab *t, const struct flow_key *k)
{
	struct ft_node **pp = &t->b[key_hash(k)];

	while (*pp && !key_eq(&(*pp)->f.key, k))
		pp = &(*pp)->next;
	return pp;
}

struct flow *flowtab_find(struct flowtab *t, const struct flow_key *k)
{
	struct ft_node *n = *find(t, k);

	return n ? &n->f : NULL;
}

int flowtab_add(struct flowtab *t, const struct flow_key *k, struct flow **out)
{
	struct ft_node **pp = find(t, k), *n;

	if (*pp) {
		*out = &(*pp)->f;
		return -EEXIST;
	}
	if (t->n >= t->cap)
		return -ENOSPC;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->f.key = *k;
	n->f.uid = -1;
	*pp = n;
	t->n++;
	*out = &n->f;
	return 0;
}

int flowtab_del(struct flowtab *t, const struct flow_key *k)
{
	struct ft_node **pp = find(t, k), *n = *pp;

	if (!n)
		return -ENOENT;
	*pp = n->next;
	node_free(n);
	t->n--;
	return 0;
}

size_t flowtab_count(const struct flowtab *t)
{
	return t->n;
}

void flowtab_sweep(struct flowtab *t, bool (*fn)(struct flow *f, void *ctx), void *ctx)
{
	struct ft_node **pp, *n;

	for (size_t i = 0; i < FLOWTAB_BUCKETS; i++)
		for (pp = &t->b[i]; *pp;) {
			n = *pp;
			if (fn(&n->f, ctx)) {
				*pp = n->next;
				node_free(n);
				t->n--;
			} else {
				pp = &n->next;
			}
		}
}

int flow_buf_append(struct flow *f, const uint8_t *p, size_t n, size_t max)
{
	uint8_t *nb;

	if (f->len >= max || n == 0)
		return 0;
	if (n > max - f->len)
		n = max - f->len;
	nb = realloc(f->buf, f->len + n);
	if (!nb)
		return -ENOMEM;
	memcpy(nb + f->len, p, n);
	f->buf = nb;
	f->len += n;
	return 0;
}
