/*
 * Names: normalising what arrived on the wire, and the hash table that holds a
 * policy's exact and wildcard names (and the DoH endpoint names). A lookup of a queried
 * name hashes it and each of its label suffixes once, so its cost depends on the name's
 * depth, not on the number of rules.
 */
#include "policy/policy_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DOMAIN_MAX 253

/* ---- normalising ------------------------------------------------------------------ */

int policy_name_normalize(const char *in, size_t len, char out[POLICY_NAME_MAX],
			  const char **why)
{
	*why = NULL;
	out[0] = '\0';
	if (len && in[len - 1] == '.')
		len--;
	if (len > DOMAIN_MAX) {
		*why = "name longer than 253 bytes";
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == '\0' || c >= 0x80) {
			*why = c ? "non-ASCII byte (wire names are A-labels)" : "NUL byte in name";
			out[0] = '\0';
			return -EINVAL;
		}
		out[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	out[len] = '\0';
	*why = config_domain_check(out, len);
	if (*why) {
		out[0] = '\0';
		return -EINVAL;
	}
	return 0;
}

/* ---- the table -------------------------------------------------------------------- */

/* FNV-1a, 64 bits: names come from the config, so no flooding of the table is possible. */
uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

#define SLOT_TAG(s) ((uint32_t)((s) >> 32))
#define SLOT_NODE(s) ((size_t)((s) & 0xffffffffu))   /* index + 1; 0: empty */

const struct name_node *name_table_find(const struct name_table *t, const char *name,
					size_t len)
{
	uint64_t h;
	uint32_t tag;

	if (!t->mask)
		return NULL;
	h = name_hash(name, len);
	tag = (uint32_t)(h >> 32);
	for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
		uint64_t s = t->slots[i];
		const struct name_node *n;

		if (!s)
			return NULL;
		if (SLOT_TAG(s) != tag)
			continue;
		n = &t->nodes[SLOT_NODE(s) - 1];
		if (strncmp(n->name, name, len) == 0 && n->name[len] == '\0')
			return n;
	}
}

static void place(uint64_t *slots, size_t mask, uint64_t h, size_t node)
{
	size_t i = h & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = (h & 0xffffffff00000000ull) | (uint64_t)(node + 1);
}

/* Doubles the slot array (rehashing every node) and makes room for one more node. */
static int grow(struct name_table *t)
{
	size_t cap = t->mask ? (t->mask + 1) * 2 : 16;
	uint64_t *v;

	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 8;
		struct name_node *nv = realloc(t->nodes, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		t->nodes = nv;
		t->cap = nc;
	}
	if ((t->n + 1) * 2 <= t->mask + 1)
		return 0;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		place(v, cap - 1, name_hash(t->nodes[i].name, strlen(t->nodes[i].name)), i);
	free(t->slots);
	t->slots = v;
	t->mask = cap - 1;
	return 0;
}

int name_table_get(struct name_table *t, const char *name, struct name_node **out)
{
	size_t len = strlen(name);
	struct name_node *n = (struct name_node *)name_table_find(t, name, len);

	if (n) {
		*out = n;
		return 0;
	}
	if (len > UINT32_MAX || t->n >= UINT32_MAX - 1 || grow(t))
		return -ENOMEM;
	n = &t->nodes[t->n];
	*n = (struct name_node){ .name = strdup(name) };
	if (!n->name)
		return -ENOMEM;
	place(t->slots, t->mask, name_hash(name, len), t->n);
	t->n++;
	*out = n;
	return 0;
}

void name_table_free(struct name_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->nodes[i].name);
	free(t->nodes);
	free(t->slots);
	*t = (struct name_table){ 0 };
}
