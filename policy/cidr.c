/*
 * CIDR rules of one family: a hash table keyed by (prefix length, masked network), and
 * the list of prefix lengths in use, longest first. A lookup masks the address once per
 * length in use and probes, so it costs at most 33 (IPv4) or 129 (IPv6) probes and in
 * practice a handful, whatever the number of rules; a bit filter lets an address no
 * long rule can hold skip the long lengths.
 */
#include "policy/policy_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool pol_rule_has_port(const struct pol_rule *r, uint16_t port)
{
	size_t lo = 0, hi = r->n_ports;

	if (r->n_ports == 0)
		return true;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ports[mid] == port)
			return true;
		if (r->ports[mid] < port)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static void mask_addr(uint8_t *out, const uint8_t *in, size_t alen, unsigned prefix)
{
	size_t full = prefix / 8;

	memcpy(out, in, full);
	if (full < alen) {
		out[full] = (uint8_t)(in[full] & (0xff00u >> (prefix % 8)));
		memset(out + full + 1, 0, alen - full - 1);
	}
	memset(out + alen, 0, 16 - alen);
}

static uint64_t cidr_hash(const uint8_t *a, uint8_t prefix)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ prefix, w[2];

	memcpy(w, a, 16);
	h = (h ^ w[0]) * 0xff51afd7ed558ccdull;
	h = (h ^ (h >> 33) ^ w[1]) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

static struct cidr_node *probe(const struct cidr_table *t, const uint8_t *a, uint8_t prefix)
{
	for (size_t i = cidr_hash(a, prefix) & t->mask;; i = (i + 1) & t->mask) {
		struct cidr_node *n = &t->slots[i];

		if (!n->used || (n->prefix == prefix && memcmp(n->addr, a, 16) == 0))
			return n;
	}
}

static int grow(struct cidr_table *t)
{
	size_t cap = t->mask ? (t->mask + 1) * 2 : 16;
	struct cidr_table nt = *t;

	nt.slots = calloc(cap, sizeof(*nt.slots));
	if (!nt.slots)
		return -ENOMEM;
	nt.mask = cap - 1;
	for (size_t i = 0; t->mask && i <= t->mask; i++)
		if (t->slots[i].used)
			*probe(&nt, t->slots[i].addr, t->slots[i].prefix) = t->slots[i];
	free(t->slots);
	t->slots = nt.slots;
	t->mask = nt.mask;
	return 0;
}

static void add_len(struct cidr_table *t, uint8_t prefix)
{
	size_t i = 0;

	while (i < t->n_lens && t->lens[i] > prefix)
		i++;
	if (i < t->n_lens && t->lens[i] == prefix)
		return;
	memmove(&t->lens[i + 1], &t->lens[i], t->n_lens - i);
	t->lens[i] = prefix;
	t->n_lens++;
}

/* Appends r to the end of a chain, keeping file order. */
static void chain_append(struct pol_rule **head, struct pol_rule *r)
{
	while (*head)
		head = &(*head)->next;
	*head = r;
}

/* The filter's bit for an address, and the shortest length the filter covers. */
static unsigned filter_len(const struct cidr_table *t)
{
	return t->alen == 4 ? 16 : 32;
}

static uint32_t filter_key(const struct cidr_table *t, const uint8_t *a)
{
	uint32_t w;

	if (t->alen == 4)
		return (uint32_t)a[0] << 8 | a[1];
	w = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	return (w * 0x9e3779b1u) >> 16;
}

static int filter_set(struct cidr_table *t, const uint8_t *net)
{
	uint32_t k = filter_key(t, net);

	if (!t->filter) {
		t->filter = calloc(CIDR_FILTER_BITS / 64, sizeof(uint64_t));
		if (!t->filter)
			return -ENOMEM;
	}
	t->filter[k / 64] |= 1ull << (k % 64);
	return 0;
}

int cidr_table_add(struct cidr_table *t, const uint8_t *net, uint8_t prefix, bool deny,
		   struct pol_rule *r)
{
	uint8_t a[16];
	struct cidr_node *n;

	if ((t->n + 1) * 2 > t->mask + 1 && grow(t))
		return -ENOMEM;
	mask_addr(a, net, t->alen, prefix);
	if (prefix >= filter_len(t) && filter_set(t, a))
		return -ENOMEM;
	n = probe(t, a, prefix);
	if (!n->used) {
		memcpy(n->addr, a, 16);
		n->prefix = prefix;
		n->used = true;
		t->n++;
		add_len(t, prefix);
	}
	chain_append(deny ? &n->deny : &n->allow, r);
	return 0;
}

static const struct pol_rule *first_for(const struct pol_rule *r, uint16_t port,
					bool any_port)
{
	for (; r; r = r->next)
		if (any_port || pol_rule_has_port(r, port))
			return r;
	return NULL;
}

void cidr_table_match(const struct cidr_table *t, const uint8_t *addr, uint16_t port,
		      bool any_port, struct cidr_match *m)
{
	uint8_t a[16];
	size_t i = 0;

	*m = (struct cidr_match){ 0 };
	if (t->filter) {
		uint32_t k = filter_key(t, addr);

		if (!(t->filter[k / 64] & (1ull << (k % 64))))
			while (i < t->n_lens && t->lens[i] >= filter_len(t))
				i++;   /* no rule this long can hold addr */
	}
	for (; i < t->n_lens && !(m->allow && m->deny); i++) {
		const struct cidr_node *n;

		mask_addr(a, addr, t->alen, t->lens[i]);
		n = probe(t, a, t->lens[i]);
		if (!n->used)
			continue;
		if (!m->deny)
			m->deny = first_for(n->deny, port, any_port);
		if (!m->allow) {
			m->allow = first_for(n->allow, port, any_port);
			m->allow_prefix = t->lens[i];
		}
	}
}

void cidr_table_free(struct cidr_table *t)
{
	free(t->filter);
	t->filter = NULL;
	free(t->slots);
	t->slots = NULL;
	t->mask = 0;
	t->n = 0;
	t->n_lens = 0;
}
