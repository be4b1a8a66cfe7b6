/*
 * Names: normalising what arrived on the wire, and the hash table that holds a
 * policy's exact and wildcard names (and the DoH endpoint names). A lookup of a queried
 * name hashes it and each of its label suffixes once, so its cost depends on the name's
 * depth, not on the number of rules.
 */
#include "policy/policy_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define LABEL_MAX 63
#define DOMAIN_MAX 253

/* ---- normalising ------------------------------------------------------------------ */

static const char *check_label(const char *l, size_t n)
{
	if (n == 0)
		return "empty label";
	if (n > LABEL_MAX)
		return "label longer than 63 bytes";
	if (l[0] == '-' || l[n - 1] == '-')
		return "label starts or ends with '-'";
	for (size_t i = 0; i < n; i++) {
		char c = l[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return "invalid character (letters, digits, '-' and '_' only)";
	}
	return NULL;
}

static const char *check_name(const char *s, size_t len)
{
	struct in_addr a4;

	if (len == 0)
		return "empty name";
	if (len > DOMAIN_MAX)
		return "name longer than 253 bytes";
	if (inet_pton(AF_INET, s, &a4) == 1)
		return "an IP address, not a name";
	for (const char *l = s;;) {
		size_t n = strcspn(l, ".");
		const char *why = check_label(l, n);

		if (why)
			return why;
		if (l[n] == '\0')
			return NULL;
		l += n + 1;
	}
}

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
	*why = check_name(out, len);
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

const struct name_node *name_table_find(const struct name_table *t, const char *name,
					size_t len)
{
	uint64_t h;

	if (!t->mask)
		return NULL;
	h = name_hash(name, len);
	for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
		const struct name_node *n = &t->slots[i];

		if (!n->name)
			return NULL;
		if (n->hash == h && strncmp(n->name, name, len) == 0 && n->name[len] == '\0')
			return n;
	}
}

static int grow(struct name_table *t)
{
	size_t cap = t->mask ? (t->mask + 1) * 2 : 16;
	struct name_node *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; t->mask && i <= t->mask; i++) {
		struct name_node *o = &t->slots[i];
		size_t j = o->hash & (cap - 1);

		if (!o->name)
			continue;
		while (v[j].name)
			j = (j + 1) & (cap - 1);
		v[j] = *o;
	}
	free(t->slots);
	t->slots = v;
	t->mask = cap - 1;
	return 0;
}

int name_table_get(struct name_table *t, const char *name, struct name_node **out)
{
	size_t len = strlen(name);
	uint64_t h = name_hash(name, len);
	size_t i;

	if ((t->n + 1) * 2 > t->mask + 1 && grow(t))
		return -ENOMEM;
	for (i = h & t->mask; t->slots[i].name; i = (i + 1) & t->mask) {
		if (t->slots[i].hash == h && strcmp(t->slots[i].name, name) == 0) {
			*out = &t->slots[i];
			return 0;
		}
	}
	t->slots[i].name = strdup(name);
	if (!t->slots[i].name)
		return -ENOMEM;
	t->slots[i].hash = h;
	t->n++;
	*out = &t->slots[i];
	return 0;
}

void name_table_free(struct name_table *t)
{
	for (size_t i = 0; t->mask && i <= t->mask; i++)
		free(t->slots[i].name);
	free(t->slots);
	*t = (struct name_table){ 0 };
}
