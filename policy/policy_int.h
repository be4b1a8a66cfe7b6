/*
 * Internals of the policy part, shared by its .c files only: the compiled rule, the
 * name table (exact and wildcard names, hashed) and the CIDR table (one hash bucket
 * per prefix length in use, longest first). Everything here is built once by
 * policy_set_build() and read-only afterwards.
 */
#ifndef SANDGATE_POLICY_POLICY_INT_H
#define SANDGATE_POLICY_POLICY_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/* One allow or deny entry as compiled; rules of one key are chained, file order. */
struct pol_rule {
	unsigned line;
	const uint16_t *ports;    /* sorted; NULL with n_ports 0: every port */
	size_t n_ports;
	struct pol_rule *next;
};

/* Which chain of a name node a rule goes to. */
enum name_kind { NK_EXACT_ALLOW, NK_WILD_ALLOW, NK_EXACT_DENY, NK_WILD_DENY, NK__MAX };

struct name_node {
	char *name;
	struct pol_rule *r[NK__MAX];
	bool doh;                 /* on the DoH endpoint list (exact name) */
};

/*
 * Open addressing, linear probing, load <= 1/2, over a compact slot array: a slot is
 * the high 32 bits of the name's hash and the node's index + 1 (0: empty), so a probe
 * (and most misses of the suffix walk) touches 8 bytes, and the node and its name are
 * read only when the tag matches. Nodes are dense, in insertion order.
 */
struct name_table {
	uint64_t *slots;
	size_t mask;              /* capacity - 1 (power of two); 0 when empty */
	struct name_node *nodes;
	size_t n, cap;            /* nodes in use, allocated */
};

uint64_t name_hash(const char *s, size_t len);
/* Finds the node for name[0..len) (not NUL-terminated), or NULL. */
const struct name_node *name_table_find(const struct name_table *t, const char *name,
					size_t len);
/* Finds or creates the node for name. 0 or -ENOMEM. */
int name_table_get(struct name_table *t, const char *name, struct name_node **out);
void name_table_free(struct name_table *t);

struct cidr_node {
	uint8_t addr[16];         /* masked network */
	uint8_t prefix;
	bool used;
	struct pol_rule *allow;
	struct pol_rule *deny;
};

struct cidr_table {
	struct cidr_node *slots;
	size_t mask;
	size_t n;
	uint8_t lens[129];        /* prefix lengths in use, longest first */
	size_t n_lens;
	size_t alen;              /* 4 or 16 */
	/*
	 * A filter over the first 16 bits (IPv4) or a hash of the first 32 bits (IPv6) of
	 * every rule at least that long: a clear bit means no such rule can hold the
	 * address, so its lookup probes only the shorter lengths. Most flows go to
	 * addresses no CIDR covers; this keeps them from probing every length.
	 */
	uint64_t *filter;         /* CIDR_FILTER_BITS bits; NULL until a rule needs it */
};
#define CIDR_FILTER_BITS 65536u

/* The result of one CIDR lookup: the longest matching rule of each kind, or NULL. */
struct cidr_match {
	const struct pol_rule *allow;
	uint8_t allow_prefix;
	const struct pol_rule *deny;
};

int cidr_table_add(struct cidr_table *t, const uint8_t *net, uint8_t prefix, bool deny,
		   struct pol_rule *r);
/* any_port: match every rule whatever its ports (port ignored); else only rules for port. */
void cidr_table_match(const struct cidr_table *t, const uint8_t *addr, uint16_t port,
		      bool any_port, struct cidr_match *m);
void cidr_table_free(struct cidr_table *t);

bool pol_rule_has_port(const struct pol_rule *r, uint16_t port);

/* The bit of wild_depths for a name of `labels` labels. */
static inline uint64_t depth_bit(size_t labels)
{
	return 1ull << (labels < 63 ? labels : 63);
}

/* A private class and the length of its range (for "explicitly allowed"). */
struct private_class {
	const char *name;
	uint8_t prefix;
};
const struct private_class *private_class_of(int family, const uint8_t *addr);

struct policy {
	char *name;
	struct sg_policy settings;     /* deep copy; settings.name is name */
	struct name_table names;
	struct cidr_table v4, v6;
	uint64_t wild_depths;          /* bit d: a wildcard rule's base has d labels (63: >= 63) */
	struct pol_rule *rules;        /* every compiled rule, one block */
	const struct policy_set *set;
};

struct policy_set {
	atomic_uint refs;
	struct policy *v;
	size_t n;
	uint8_t *doh_v4;               /* sorted 4-byte addresses */
	size_t n_doh_v4;
	uint8_t *doh_v6;               /* sorted 16-byte addresses */
	size_t n_doh_v6;
};

/* Internal: the DoH list's content (doh_list.c). */
struct doh_list {
	char **names;
	size_t n_names;
	uint8_t *v4;
	size_t n_v4;
	uint8_t *v6;
	size_t n_v6;
};

bool policy_set_doh_addr(const struct policy_set *s, int family, const uint8_t *addr);

#endif
