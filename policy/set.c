/*
 * Compiling a config's policies into a policy_set: a deep copy of each sg_policy (so
 * the config may be freed) plus its name table (the DoH names included) and CIDR
 * tables, and the DoH addresses as sorted arrays. Readers share a set by reference
 * count; the last policy_set_unref() frees it, so a reload can swap sets under running
 * workers.
 */
#include "policy/policy_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* ---- copies of the configured settings -------------------------------------------- */

static void rules_free(struct sg_rule *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].domain);
		free(v[i].ports);
	}
	free(v);
}

static int rules_copy(const struct sg_rule *in, size_t n, struct sg_rule **out)
{
	struct sg_rule *v;

	*out = NULL;
	if (n == 0)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = in[i];
		v[i].domain = NULL;
		v[i].ports = NULL;
		if (in[i].domain && !(v[i].domain = strdup(in[i].domain)))
			goto oom;
		if (in[i].n_ports) {
			v[i].ports = malloc(in[i].n_ports * sizeof(*v[i].ports));
			if (!v[i].ports)
				goto oom;
			memcpy(v[i].ports, in[i].ports, in[i].n_ports * sizeof(*v[i].ports));
		}
	}
	*out = v;
	return 0;
oom:
	rules_free(v, n);
	return -ENOMEM;
}

static void settings_free(struct sg_policy *s)
{
	rules_free(s->allow, s->n_allow);
	rules_free(s->deny, s->n_deny);
	for (size_t i = 0; i < s->n_approved_sources; i++)
		free(s->approved_sources[i]);
	free(s->approved_sources);
	free(s->name);
}

static int settings_copy(const struct sg_policy *in, struct sg_policy *s)
{
	*s = *in;
	s->name = NULL;
	s->allow = s->deny = NULL;
	s->approved_sources = NULL;
	s->n_approved_sources = 0;
	if (!(s->name = strdup(in->name)) || rules_copy(in->allow, in->n_allow, &s->allow) ||
	    rules_copy(in->deny, in->n_deny, &s->deny))
		goto oom;
	if (in->n_approved_sources) {
		s->approved_sources = calloc(in->n_approved_sources, sizeof(char *));
		if (!s->approved_sources)
			goto oom;
		for (; s->n_approved_sources < in->n_approved_sources; s->n_approved_sources++) {
			char *u = strdup(in->approved_sources[s->n_approved_sources]);

			if (!u)
				goto oom;
			s->approved_sources[s->n_approved_sources] = u;
		}
	}
	return 0;
oom:
	settings_free(s);
	*s = (struct sg_policy){ 0 };   /* policy_free_one() frees it again */
	return -ENOMEM;
}

/* ---- compiling one policy --------------------------------------------------------- */

static int add_rule(struct policy *p, const struct sg_rule *r, bool deny,
		    struct pol_rule *pr)
{
	*pr = (struct pol_rule){ .line = r->line, .ports = r->ports, .n_ports = r->n_ports };
	if (r->kind == SG_RULE_DOMAIN) {
		struct name_node *n;
		struct pol_rule **head;
		enum name_kind k = deny ? (r->wildcard ? NK_WILD_DENY : NK_EXACT_DENY)
					: (r->wildcard ? NK_WILD_ALLOW : NK_EXACT_ALLOW);

		if (name_table_get(&p->names, r->domain, &n))
			return -ENOMEM;
		if (r->wildcard) {
			size_t labels = 1;

			for (const char *c = r->domain; *c; c++)
				labels += *c == '.';
			p->wild_depths |= depth_bit(labels);
		}
		for (head = &n->r[k]; *head; head = &(*head)->next)
			;
		*head = pr;
		return 0;
	}
	return cidr_table_add(r->net.family == AF_INET ? &p->v4 : &p->v6, r->net.bytes,
			      r->prefix, deny, pr);
}

static void policy_free_one(struct policy *p)
{
	name_table_free(&p->names);
	cidr_table_free(&p->v4);
	cidr_table_free(&p->v6);
	free(p->rules);
	settings_free(&p->settings);
}

static int policy_compile(struct policy *p, const struct sg_policy *in,
			  const struct doh_list *doh)
{
	size_t n = in->n_allow + in->n_deny, k = 0;

	p->v4.alen = 4;
	p->v6.alen = 16;
	if (settings_copy(in, &p->settings))
		return -ENOMEM;
	p->name = p->settings.name;
	p->rules = calloc(n ? n : 1, sizeof(*p->rules));
	if (!p->rules)
		return -ENOMEM;
	for (size_t i = 0; i < p->settings.n_deny; i++, k++)
		if (add_rule(p, &p->settings.deny[i], true, &p->rules[k]))
			return -ENOMEM;
	for (size_t i = 0; i < p->settings.n_allow; i++, k++)
		if (add_rule(p, &p->settings.allow[i], false, &p->rules[k]))
			return -ENOMEM;
	/* DoH names go into each policy's own table: one lookup answers both questions. */
	for (size_t i = 0; doh && i < doh->n_names; i++) {
		struct name_node *node;

		if (name_table_get(&p->names, doh->names[i], &node))
			return -ENOMEM;
		node->doh = true;
	}
	return 0;
}

/* ---- the DoH list's addresses (its names are in each policy's table) ------------- */

static int addr_cmp4(const void *a, const void *b)
{
	return memcmp(a, b, 4);
}

static int addr_cmp16(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static int copy_sorted(const uint8_t *in, size_t n, size_t alen, uint8_t **out)
{
	*out = NULL;
	if (n == 0)
		return 0;
	*out = malloc(n * alen);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, in, n * alen);
	qsort(*out, n, alen, alen == 4 ? addr_cmp4 : addr_cmp16);
	return 0;
}

static int doh_compile(struct policy_set *s, const struct doh_list *doh)
{
	if (!doh)
		return 0;
	s->n_doh_v4 = doh->n_v4;
	s->n_doh_v6 = doh->n_v6;
	if (copy_sorted(doh->v4, doh->n_v4, 4, &s->doh_v4) ||
	    copy_sorted(doh->v6, doh->n_v6, 16, &s->doh_v6))
		return -ENOMEM;
	return 0;
}

bool policy_set_doh_addr(const struct policy_set *s, int family, const uint8_t *addr)
{
	if (family == AF_INET)
		return s->doh_v4 && bsearch(addr, s->doh_v4, s->n_doh_v4, 4, addr_cmp4);
	if (family == AF_INET6)
		return s->doh_v6 && bsearch(addr, s->doh_v6, s->n_doh_v6, 16, addr_cmp16);
	return false;
}

/* ---- the set ---------------------------------------------------------------------- */

static void set_free(struct policy_set *s)
{
	for (size_t i = 0; s->v && i < s->n; i++)
		policy_free_one(&s->v[i]);
	free(s->v);
	free(s->doh_v4);
	free(s->doh_v6);
	free(s);
}

int policy_set_build(const struct sg_policy *v, size_t n, const struct doh_list *doh,
		     struct policy_set **out)
{
	struct policy_set *s = calloc(1, sizeof(*s));
	int ret = -ENOMEM;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	atomic_init(&s->refs, 1);
	s->v = calloc(n ? n : 1, sizeof(*s->v));
	if (!s->v)
		goto out;
	for (; s->n < n; s->n++) {
		s->v[s->n].set = s;
		if (policy_compile(&s->v[s->n], &v[s->n], doh)) {
			s->n++;   /* free the partly compiled one too */
			goto out;
		}
	}
	if (doh_compile(s, doh))
		goto out;
	*out = s;
	s = NULL;
	ret = 0;
out:
	if (s)
		set_free(s);
	return ret;
}

void policy_set_ref(struct policy_set *s)
{
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void policy_set_unref(struct policy_set *s)
{
	if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
		set_free(s);
}

const struct policy *policy_find(const struct policy_set *s, const char *name)
{
	if (!name)
		name = "default";
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].name, name) == 0)
			return &s->v[i];
	return NULL;
}

const char *policy_name(const struct policy *p)
{
	return p->name;
}

const struct sg_policy *policy_settings(const struct policy *p)
{
	return &p->settings;
}
