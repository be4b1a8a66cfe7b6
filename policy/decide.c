/*
 * Decisions: a DNS query, the address part of a flow, a whole flow. The order of the
 * checks is the contract (policy/policy.h, docs/policy.md "Order"): deny rules first,
 * then the protocol blocks (DoT, DoH, QUIC, ECH), then private ranges, then the allow
 * rules; report-only mode turns the final BLOCK into WOULD_BLOCK and changes nothing
 * else, so an event says what enforce mode would have done.
 */
#include "policy/policy_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define CANARY "use-application-dns.net"
#define DOT_PORT 853
#define QUIC_PORT 443

/* ---- names ------------------------------------------------------------------------ */

static const struct pol_rule *first_for(const struct pol_rule *r, uint16_t port,
					bool any_port)
{
	for (; r; r = r->next)
		if (any_port || pol_rule_has_port(r, port))
			return r;
	return NULL;
}

/* What one name matched: the most specific rule of each side, and the DoH flag. */
struct name_match {
	const struct pol_rule *deny;
	const struct pol_rule *allow;
	bool doh;
};

/*
 * Matches name against both sides in one walk: an exact rule for the name itself, else
 * a wildcard rule of its nearest proper suffix that has one ("*.b.c" matches "a.b.c" and
 * "x.a.b.c", never "b.c"), the most specific winning on each side. Deny rules count only
 * when they list port (port 0: only deny rules without a port list); allow rules the
 * same, unless any_port_allow (a DNS query: the name is allowed on some port).
 */
static void match_name(const struct policy *p, const char *name, uint16_t port,
		       bool any_port_allow, struct name_match *m)
{
	size_t len = strlen(name), labels = 1;
	const struct name_node *n = name_table_find(&p->names, name, len);

	*m = (struct name_match){ 0 };
	if (n) {
		m->deny = first_for(n->r[NK_EXACT_DENY], port, false);
		m->allow = first_for(n->r[NK_EXACT_ALLOW], port, any_port_allow);
		m->doh = n->doh;
	}
	if (!p->wild_depths)
		return;
	for (size_t i = 0; i < len; i++)
		labels += name[i] == '.';
	/* Only suffixes as deep as some wildcard's base are looked up. */
	for (const char *s = memchr(name, '.', len); s && !(m->deny && m->allow);) {
		s++;
		len -= (size_t)(s - name);
		name = s;
		labels--;
		if (p->wild_depths & depth_bit(labels)) {
			n = name_table_find(&p->names, s, len);
			if (n && !m->deny)
				m->deny = first_for(n->r[NK_WILD_DENY], port, false);
			if (n && !m->allow)
				m->allow = first_for(n->r[NK_WILD_ALLOW], port, any_port_allow);
		}
		s = memchr(s, '.', len);
	}
}

/* ---- the decision ----------------------------------------------------------------- */

/*
 * "policy NAME line N" into buf (always terminated, cut at size). By hand: snprintf
 * costs more than the whole lookup, and this runs for every allowed decision.
 */
static void format_rule(char *buf, size_t size, const char *name, unsigned line)
{
	char digits[12];
	size_t n = 0, k = 0, nlen = strlen(name);

	do
		digits[k++] = (char)('0' + line % 10);
	while ((line /= 10) && k < sizeof(digits));
	if (7 + nlen + 6 + k >= size) {   /* a policy name is at most 64 bytes: cannot happen */
		snprintf(buf, size, "policy %s line", name);
		return;
	}
	memcpy(buf, "policy ", 7);
	n = 7;
	memcpy(buf + n, name, nlen);
	n += nlen;
	memcpy(buf + n, " line ", 6);
	n += 6;
	while (k)
		buf[n++] = digits[--k];
	buf[n] = '\0';
}

static void decide(const struct policy *p, struct policy_decision *d, bool block,
		   const char *reason, const struct pol_rule *r)
{
	d->verdict = block ? POLICY_BLOCK : POLICY_ALLOW;
	if (block && p->settings.mode == SG_MODE_REPORT)
		d->verdict = POLICY_WOULD_BLOCK;
	d->reason = reason;
	d->rule[0] = '\0';
	if (r)
		format_rule(d->rule, sizeof(d->rule), p->name, r->line);
}

static void reset(struct policy_decision *d)
{
	*d = (struct policy_decision){ .verdict = POLICY_BLOCK, .reason = "not_allowed" };
}

void policy_decide_query(const struct policy *p, const char *name,
			 struct policy_decision *d)
{
	struct name_match m;

	reset(d);
	if (!name || !*name) {
		decide(p, d, true, "invalid_name", NULL);
		return;
	}
	if (strcmp(name, CANARY) == 0) {
		decide(p, d, true, "canary_domain", NULL);
		return;
	}
	/* A deny with a port list denies flows to those ports, not the name itself. */
	match_name(p, name, 0, true, &m);
	if (m.deny)
		decide(p, d, true, "denied_domain", m.deny);
	else if (m.doh && p->settings.doh == SG_BLOCK)
		decide(p, d, true, "doh_endpoint", NULL);
	else if (m.allow)
		decide(p, d, false, "allowed_domain", m.allow);
	else
		decide(p, d, true, "not_allowed", NULL);
}

/* ---- addresses -------------------------------------------------------------------- */

static bool tcp_or_udp(uint8_t l4)
{
	return l4 == IPPROTO_TCP || l4 == IPPROTO_UDP;
}

static void cidr_match(const struct policy *p, int family, const uint8_t *dst,
		       uint16_t dport, struct cidr_match *m)
{
	if (family == AF_INET)
		cidr_table_match(&p->v4, dst, dport, false, m);
	else if (family == AF_INET6)
		cidr_table_match(&p->v6, dst, dport, false, m);
	else
		*m = (struct cidr_match){ 0 };
}

/*
 * Private ranges: blocked unless the policy allows them all (private_ranges: allow) or
 * an allow CIDR for this port lies inside the class's own range: 10.0.0.0/8 or
 * 10.1.2.3/32 open 10.1.2.3, 0.0.0.0/0 does not (a catch-all must not open SSRF).
 */
static bool private_blocked(const struct policy *p, int family, const uint8_t *dst,
			    const struct cidr_match *m, struct policy_decision *d)
{
	const struct private_class *c;

	if (p->settings.private_ranges == SG_ALLOW)
		return false;
	c = private_class_of(family, dst);
	if (!c || (m->allow && m->allow_prefix >= c->prefix))
		return false;
	decide(p, d, true, "private_range", NULL);
	d->range = c->name;
	return true;
}

void policy_decide_addr(const struct policy *p, int family, const uint8_t *dst,
			uint16_t dport, uint8_t l4, struct policy_decision *d)
{
	struct cidr_match m;

	reset(d);
	cidr_match(p, family, dst, dport, &m);
	if (m.deny) {
		decide(p, d, true, "denied_cidr", m.deny);
		return;
	}
	if (tcp_or_udp(l4) && dport == DOT_PORT && p->settings.dot == SG_BLOCK) {
		decide(p, d, true, "dot", NULL);
		return;
	}
	if (p->settings.doh == SG_BLOCK && policy_set_doh_addr(p->set, family, dst)) {
		decide(p, d, true, "doh_endpoint", NULL);
		return;
	}
	if (l4 == IPPROTO_UDP && dport == QUIC_PORT && p->settings.quic == SG_QUIC_BLOCK) {
		decide(p, d, true, "quic", NULL);
		return;
	}
	if (private_blocked(p, family, dst, &m, d))
		return;
	if (m.allow) {
		decide(p, d, false, "allowed_cidr", m.allow);
		return;
	}
	decide(p, d, true, "not_allowed", NULL);
}

/* ---- flows ------------------------------------------------------------------------ */

static bool is_bound(const struct policy_flow *f, const char *name)
{
	for (size_t i = 0; i < f->n_bound; i++)
		if (f->bound_names[i] && strcmp(f->bound_names[i], name) == 0)
			return true;
	return false;
}

/* The names a flow carries and what they matched (SNI, then Host). */
struct flow_names {
	const char *name[2];
	struct name_match m[2];
};

static void flow_names_match(const struct policy *p, const struct policy_flow *f,
			     struct flow_names *fn)
{
	fn->name[0] = f->sni && *f->sni ? f->sni : NULL;
	fn->name[1] = f->http_host && *f->http_host ? f->http_host : NULL;
	for (size_t i = 0; i < 2; i++)
		if (fn->name[i])
			match_name(p, fn->name[i], f->dport, false, &fn->m[i]);
		else
			fn->m[i] = (struct name_match){ 0 };
}

/* Deny rules and the canary for the names the flow carries (SNI first, then Host). */
static bool names_denied(const struct policy *p, const struct flow_names *fn,
			 struct policy_decision *d)
{
	for (size_t i = 0; i < 2; i++) {
		if (!fn->name[i])
			continue;
		if (strcmp(fn->name[i], CANARY) == 0) {
			decide(p, d, true, "canary_domain", NULL);
			return true;
		}
		if (fn->m[i].deny) {
			decide(p, d, true, "denied_domain", fn->m[i].deny);
			return true;
		}
	}
	return false;
}

/* DoT, DoH, QUIC and ECH: the protocol blocks that no allow rule lifts. */
static bool protocol_blocked(const struct policy *p, const struct policy_flow *f,
			     const struct flow_names *fn, struct policy_decision *d)
{
	const struct sg_policy *s = &p->settings;
	bool quic = f->quic || (f->l4 == IPPROTO_UDP && f->dport == QUIC_PORT);

	if (tcp_or_udp(f->l4) && f->dport == DOT_PORT && s->dot == SG_BLOCK)
		decide(p, d, true, "dot", NULL);
	else if (s->doh == SG_BLOCK && (fn->m[0].doh || fn->m[1].doh ||
					policy_set_doh_addr(p->set, f->family, f->dst)))
		decide(p, d, true, "doh_endpoint", NULL);
	else if (quic && (s->quic == SG_QUIC_BLOCK || (s->quic == SG_QUIC_SNI && !fn->name[0])))
		decide(p, d, true, "quic", NULL);
	else if (f->ech && s->ech == SG_BLOCK)
		decide(p, d, true, "ech", NULL);
	else
		return false;
	return true;
}

/*
 * A flow to an address bound by an allowed answer: the SNI and the Host, when present,
 * must each be an allowed name for this port and one of the names bound to the address
 * (else two names sharing an address, or domain fronting, would pass). Without either,
 * one bound name still allowed for this port (and not denied) carries the flow.
 */
static void decide_bound(const struct policy *p, const struct policy_flow *f,
			 const struct flow_names *fn, struct policy_decision *d)
{
	static const char *const mismatch[2] = { "sni_mismatch", "host_mismatch" };
	const struct pol_rule *r = NULL;
	struct name_match m;

	for (size_t i = 0; i < 2; i++) {
		if (!fn->name[i])
			continue;
		if (!fn->m[i].allow || !is_bound(f, fn->name[i])) {
			decide(p, d, true, mismatch[i], NULL);
			return;
		}
		if (!r)
			r = fn->m[i].allow;
	}
	for (size_t i = 0; !r && i < f->n_bound; i++) {
		const char *b = f->bound_names[i];

		if (!b || !*b)
			continue;
		match_name(p, b, f->dport, false, &m);
		if (!m.deny)
			r = m.allow;
	}
	if (!r) {
		decide(p, d, true, "not_allowed", NULL);
		return;
	}
	decide(p, d, false, "bound_address", r);
}

void policy_decide_flow(const struct policy *p, const struct policy_flow *f,
			struct policy_decision *d)
{
	struct cidr_match m;
	struct flow_names fn;

	reset(d);
	cidr_match(p, f->family, f->dst, f->dport, &m);
	if (m.deny) {
		decide(p, d, true, "denied_cidr", m.deny);
		return;
	}
	flow_names_match(p, f, &fn);
	if (names_denied(p, &fn, d) || protocol_blocked(p, f, &fn, d) ||
	    private_blocked(p, f->family, f->dst, &m, d))
		return;
	if (m.allow) {
		decide(p, d, false, "allowed_cidr", m.allow);
		return;
	}
	if (f->n_bound)
		decide_bound(p, f, &fn, d);
	else
		decide(p, d, true, "not_allowed", NULL);
}

/* ---- kernel bindings -------------------------------------------------------------- */

static void port_add(uint16_t *ports, size_t max, size_t *n, uint16_t port)
{
	for (size_t i = 0; i < *n; i++)
		if (ports[i] == port)
			return;
	if (*n < max)
		ports[(*n)++] = port;
}

/* True when a deny rule for some port matches name (exact, or a wildcard's suffix). */
static bool deny_some_port(const struct policy *p, const char *name)
{
	size_t len = strlen(name), labels = 1;
	const struct name_node *n = name_table_find(&p->names, name, len);

	if (n && n->r[NK_EXACT_DENY])
		return true;
	if (!p->wild_depths)
		return false;
	for (size_t i = 0; i < len; i++)
		labels += name[i] == '.';
	for (const char *s = memchr(name, '.', len); s;) {
		s++;
		len -= (size_t)(s - name);
		name = s;
		labels--;
		if (p->wild_depths & depth_bit(labels)) {
			n = name_table_find(&p->names, s, len);
			if (n && n->r[NK_WILD_DENY])
				return true;
		}
		s = memchr(s, '.', len);
	}
	return false;
}

int policy_bind_ports(const struct policy *p, const char *name, uint16_t *ports,
		      size_t max, size_t *n)
{
	struct name_match m, pm;
	bool any = false;

	*n = 0;
	if (!name || !*name || strcmp(name, CANARY) == 0)
		return -ENOENT;
	match_name(p, name, 0, true, &m);
	if (m.deny || !m.allow || (m.doh && p->settings.doh == SG_BLOCK))
		return -ENOENT;
	/* The allow rules of the one node that matched (the most specific), all ports. */
	for (const struct pol_rule *r = m.allow; r; r = r->next) {
		if (r->n_ports == 0)
			any = true;
		for (size_t i = 0; i < r->n_ports; i++) {
			/* A deny rule listing this port for the name wins: no element. */
			match_name(p, name, r->ports[i], false, &pm);
			if (!pm.deny)
				port_add(ports, max, n, r->ports[i]);
		}
	}
	/* Every port but one a deny rule lists cannot be one set element: listed only. */
	return any && !deny_some_port(p, name) ? 1 : 0;
}
