/*
 * The `policies:` section (interface.md, "Policy"): named policies of allow and deny
 * entries plus the DoH/DoT/QUIC/ECH/private-range switches, and the normalisation of
 * domain names and CIDRs that the gateway's matcher relies on.
 */
#include "policy/policy_conf.h"
#include "conf/conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <idn2.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define POLICY_NAME_MAX 64
#define DOMAIN_MAX 253
#define LABEL_MAX 63

/* ---- domains ---------------------------------------------------------------------- */

static bool has_non_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return true;
	return false;
}

static const char *check_label(const char *l, size_t n)
{
	if (n == 0)
		return "empty label (two dots in a row, or a leading dot)";
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

static const char ip_literal[] = "an IP address, not a name";

const char *config_domain_check(const char *s, size_t len)
{
	struct in_addr a4;

	if (len == 0)
		return "empty name";
	if (len > DOMAIN_MAX)
		return "name longer than 253 bytes";
	if (inet_pton(AF_INET, s, &a4) == 1)
		return ip_literal;
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

/* Lowercases in place and checks the ASCII (post-IDNA) form, with hints for a config. */
static const char *check_ascii_name(char *s)
{
	const char *why;

	for (char *p = s; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	if (strchr(s, '*'))
		return "'*' is only allowed as a leading \"*.\"";
	why = config_domain_check(s, strlen(s));
	return why == ip_literal ? "an IP address, not a name: use cidr:" : why;
}

/* Strips one trailing dot and maps non-ASCII names to punycode. */
static int to_ascii(const char *name, char **out, const char **why)
{
	size_t len = strlen(name);
	char *copy, *ascii = NULL;
	int rc;

	if (len > 4 * DOMAIN_MAX) {
		*why = "name longer than 253 bytes";
		return -EINVAL;
	}
	copy = strndup(name, len && name[len - 1] == '.' ? len - 1 : len);
	if (!copy)
		return -ENOMEM;
	if (!has_non_ascii(copy)) {
		*out = copy;
		return 0;
	}
	rc = idn2_to_ascii_8z(copy, &ascii, IDN2_NONTRANSITIONAL);
	free(copy);
	if (rc == IDN2_MALLOC)
		return -ENOMEM;
	if (rc != IDN2_OK) {
		*why = idn2_strerror(rc);
		return -EINVAL;
	}
	*out = ascii;
	return 0;
}

int config_domain_normalize(const char *in, bool allow_wildcard, char **out,
			    bool *wildcard, const char **why)
{
	bool wild = in[0] == '*';
	char *ascii = NULL;
	int ret;

	*out = NULL;
	if (wild && (!allow_wildcard || in[1] != '.')) {
		*why = "'*' is only allowed as a leading \"*.\"";
		return -EINVAL;
	}
	ret = to_ascii(wild ? in + 2 : in, &ascii, why);
	if (ret)
		return ret;
	*why = check_ascii_name(ascii);
	if (*why) {
		free(ascii);
		return -EINVAL;
	}
	*out = ascii;
	if (wildcard)
		*wildcard = wild;
	return 0;
}

/* ---- CIDRs ------------------------------------------------------------------------ */

static bool host_bits_set(const struct sg_addr *a, unsigned prefix, unsigned bits)
{
	for (unsigned i = prefix; i < bits; i++)
		if (a->bytes[i / 8] & (0x80u >> (i % 8)))
			return true;
	return false;
}

static void mask_host_bits(struct sg_addr *a, unsigned prefix, unsigned bits)
{
	for (unsigned i = prefix; i < bits; i++)
		a->bytes[i / 8] &= (uint8_t)~(0x80u >> (i % 8));
}

/* Returns -EDOM (not -EINVAL) when only the host bits are wrong, so callers can help. */
static int parse_cidr(const char *s, struct sg_addr *net, unsigned *prefix, const char **why)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t hl = slash ? (size_t)(slash - s) : strlen(s), pl;
	unsigned bits, p = 0;

	*why = "not an IPv4 or IPv6 address";
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (cfg_parse_addr(host, net))
		return -EINVAL;
	bits = net->family == AF_INET ? 32 : 128;
	p = bits;
	if (slash) {
		pl = strspn(slash + 1, "0123456789");
		*why = bits == 32 ? "prefix length must be 0..32" : "prefix length must be 0..128";
		if (pl == 0 || pl > 3 || slash[1 + pl] != '\0')
			return -EINVAL;
		p = (unsigned)strtoul(slash + 1, NULL, 10);
		if (p > bits)
			return -EINVAL;
	}
	*prefix = p;
	*why = "host bits are set after the prefix length";
	return host_bits_set(net, p, bits) ? -EDOM : 0;
}

int config_parse_cidr(const char *s, struct sg_addr *net, uint8_t *prefix, const char **why)
{
	unsigned p = 0;
	int ret = parse_cidr(s, net, &p, why);

	if (ret)
		return -EINVAL;
	*prefix = (uint8_t)p;
	return 0;
}

/* ---- entries ---------------------------------------------------------------------- */

struct rule_build {
	struct sg_rule r;
	const struct cy_node *domain_at;
	const struct cy_node *cidr_at;
};

static int rule_domain(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		       const struct cfg_key *k)
{
	struct rule_build *b = base;
	const char *s, *why = NULL;
	char shown[CFG_SHOW_MAX];
	int r;

	(void)k;
	if (cy_str(ctx, v, &s))
		return -EINVAL;
	free(b->r.domain);
	b->r.domain = NULL;
	r = config_domain_normalize(s, true, &b->r.domain, &b->r.wildcard, &why);
	if (r == -ENOMEM) {
		ctx->oom = true;
		return r;
	}
	if (r) {
		cfg_show(s, shown);
		cfg_err(ctx, v, "'%s': %s", shown, why);
		return -EINVAL;
	}
	b->domain_at = v;
	return 0;
}

static int rule_cidr(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		     const struct cfg_key *k)
{
	struct rule_build *b = base;
	char shown[CFG_SHOW_MAX], net[INET6_ADDRSTRLEN];
	const char *s, *why = NULL;
	unsigned p = 0;
	int r;

	(void)k;
	if (cy_str(ctx, v, &s))
		return -EINVAL;
	cfg_show(s, shown);
	r = parse_cidr(s, &b->r.net, &p, &why);
	if (r == -EDOM) {
		mask_host_bits(&b->r.net, p, b->r.net.family == AF_INET ? 32 : 128);
		inet_ntop(b->r.net.family, b->r.net.bytes, net, sizeof(net));
		cfg_err(ctx, v, "'%s': %s (did you mean %s/%u?)", shown, why, net, p);
		return -EINVAL;
	}
	if (r) {
		cfg_err(ctx, v, "'%s': %s", shown, why);
		return -EINVAL;
	}
	b->r.prefix = (uint8_t)p;
	b->cidr_at = v;
	return 0;
}

static int u16_cmp(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static int rule_ports(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		      const struct cfg_key *k)
{
	struct rule_build *b = base;
	uint16_t *ports;
	size_t n = 0;
	int ret = 0;

	(void)k;
	if (cy_need(ctx, v, CY_SEQ, "a list of ports, like [443]"))
		return -EINVAL;
	if (v->n == 0) {
		cfg_err(ctx, v, "empty list: leave ports out to allow every port");
		return -EINVAL;
	}
	ports = calloc(v->n, sizeof(*ports));
	if (!ports) {
		ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->n; i++) {
		uint64_t port;

		if (cy_uint(ctx, v->items[i], 1, 65535, &port))
			ret = -EINVAL;
		else
			ports[n++] = (uint16_t)port;
	}
	qsort(ports, n, sizeof(*ports), u16_cmp);
	b->r.n_ports = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || ports[i] != ports[i - 1])
			ports[b->r.n_ports++] = ports[i];
	free(b->r.ports);
	b->r.ports = ports;
	return ret;
}

static const struct cfg_key rule_keys[] = {
	{ "domain", CK_CUSTOM, 0, 0, 0, 0, NULL, rule_domain },
	{ "cidr", CK_CUSTOM, 0, 0, 0, 0, NULL, rule_cidr },
	{ "ports", CK_CUSTOM, 0, 0, 0, 0, NULL, rule_ports },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};

static void rule_free(struct sg_rule *r)
{
	free(r->domain);
	free(r->ports);
}

static int parse_rule(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_rule *out)
{
	struct rule_build b = { .r = { .line = v->line } };
	int ret = cfg_walk(ctx, v, rule_keys, &b, "an allow/deny entry");

	if (ret == 0 && cy_is_null(v))
		ret = cy_need(ctx, v, CY_MAP, "an entry with domain: or cidr:");
	if (ret == 0 && !b.domain_at && !b.cidr_at) {
		cfg_err(ctx, v, "entry needs a domain: or a cidr:");
		ret = -EINVAL;
	}
	if (ret == 0 && b.domain_at && b.cidr_at) {
		cfg_err(ctx, b.cidr_at, "entry has both domain: and cidr:; write two entries");
		ret = -EINVAL;
	}
	b.r.kind = b.cidr_at ? SG_RULE_CIDR : SG_RULE_DOMAIN;
	if (ret) {
		rule_free(&b.r);
		return ret;
	}
	*out = b.r;
	return 0;
}

static int parse_rules(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_rule **list,
		       size_t *count)
{
	size_t plen = strlen(ctx->path), n = 0;
	struct sg_rule *rules;
	int ret = 0;

	if (cy_is_null(v))
		return 0;
	if (cy_need(ctx, v, CY_SEQ, "a list of entries (- domain: NAME, - cidr: NET)"))
		return -EINVAL;
	rules = calloc(v->n ? v->n : 1, sizeof(*rules));
	if (!rules) {
		ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->n && !ctx->oom; i++) {
		snprintf(ctx->path + plen, sizeof(ctx->path) - plen, "[%zu]", i);
		if (parse_rule(ctx, v->items[i], &rules[n]) == 0)
			n++;
		else
			ret = -EINVAL;
	}
	ctx->path[plen] = '\0';
	for (size_t i = 0; i < *count; i++)
		rule_free(&(*list)[i]);
	free(*list);
	*list = rules;
	*count = n;
	return ctx->oom ? -ENOMEM : ret;
}

static int pol_allow(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		     const struct cfg_key *k)
{
	struct sg_policy *p = base;

	(void)k;
	return parse_rules(ctx, v, &p->allow, &p->n_allow);
}

static int pol_deny(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		    const struct cfg_key *k)
{
	struct sg_policy *p = base;

	(void)k;
	return parse_rules(ctx, v, &p->deny, &p->n_deny);
}

/* ---- packages ------------------------------------------------------------------- */

static bool valid_url(const char *s)
{
	const char *host;

	if (strncmp(s, "https://", 8) == 0)
		host = s + 8;
	else if (strncmp(s, "http://", 7) == 0)
		host = s + 7;
	else
		return false;
	if (*host == '\0' || *host == '/')
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || *s == 0x7f)
			return false;
	return true;
}

static bool url_item_ok(const char *s, const void *arg)
{
	(void)arg;
	return valid_url(s);
}

static const struct cfg_list_spec sources_spec = {
	"a list of URLs", 0, url_item_ok, NULL, "expected an http:// or https:// URL",
};

static int pkg_sources(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		       const struct cfg_key *k)
{
	struct sg_policy *p = base;

	(void)k;
	return cfg_str_list(ctx, v, &sources_spec, &p->approved_sources, &p->n_approved_sources);
}

static const char *const unapproved_names[] = { "flag", "block", NULL };

static const struct cfg_key package_keys[] = {
	{ "approved_sources", CK_CUSTOM, 0, 0, 0, 0, NULL, pkg_sources },
	{ "unapproved", CK_ENUM, offsetof(struct sg_policy, unapproved), 0, 0, 0,
	  unapproved_names, NULL },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};

static int pol_packages(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
			const struct cfg_key *k)
{
	(void)k;
	return cfg_walk(ctx, v, package_keys, base, "packages");
}

/* ---- policies ------------------------------------------------------------------- */

static const char *const mode_names[] = { "enforce", "report", NULL };
static const char *const answer_names[] = { "refused", "nxdomain", NULL };
static const char *const block_names[] = { "block", "allow", NULL };
static const char *const quic_names[] = { "block", "allow", "sni", NULL };
static const char *const verbosity_names[] = { "minimal", "summary", "full", NULL };

#define P(field) offsetof(struct sg_policy, field)
static const struct cfg_key policy_keys[] = {
	{ "allow", CK_CUSTOM, 0, 0, 0, 0, NULL, pol_allow },
	{ "deny", CK_CUSTOM, 0, 0, 0, 0, NULL, pol_deny },
	{ "mode", CK_ENUM, P(mode), 0, 0, 0, mode_names, NULL },
	{ "dns_blocked_answer", CK_ENUM, P(dns_blocked_answer), 0, 0, 0, answer_names, NULL },
	{ "doh", CK_ENUM, P(doh), 0, 0, 0, block_names, NULL },
	{ "dot", CK_ENUM, P(dot), 0, 0, 0, block_names, NULL },
	{ "quic", CK_ENUM, P(quic), 0, 0, 0, quic_names, NULL },
	{ "ech", CK_ENUM, P(ech), 0, 0, 0, block_names, NULL },
	{ "private_ranges", CK_ENUM, P(private_ranges), 0, 0, 0, block_names, NULL },
	{ "verbosity", CK_ENUM, P(verbosity), 0, 0, 0, verbosity_names, NULL },
	{ "packages", CK_CUSTOM, 0, 0, 0, 0, NULL, pol_packages },
	{ "terminate_on_violation", CK_BOOL, P(terminate_on_violation), 0, 0, 0, NULL, NULL },
	{ NULL, CK_CUSTOM, 0, 0, 0, 0, NULL, NULL },
};
#undef P

void cfg_policy_free(struct sg_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_allow; i++)
		rule_free(&p->allow[i]);
	for (size_t i = 0; i < p->n_deny; i++)
		rule_free(&p->deny[i]);
	for (size_t i = 0; i < p->n_approved_sources; i++)
		free(p->approved_sources[i]);
	free(p->allow);
	free(p->deny);
	free(p->approved_sources);
	free(p->name);
}

/* Defaults of a policy: allow nothing, every block on (the zero values of the enums). */
static int policy_init(struct sg_policy *p, const char *name, unsigned line)
{
	*p = (struct sg_policy){
		.line = line, .mode = SG_MODE_ENFORCE, .dns_blocked_answer = SG_DNS_REFUSED,
		.doh = SG_BLOCK, .dot = SG_BLOCK, .quic = SG_QUIC_BLOCK, .ech = SG_BLOCK,
		.private_ranges = SG_BLOCK, .verbosity = SG_VERB_SUMMARY,
		.unapproved = SG_UNAPPROVED_FLAG,
	};
	p->name = strdup(name);
	return p->name ? 0 : -ENOMEM;
}

int cfg_policy_embedded_default(struct sg_policy **pv, size_t *pn)
{
	struct sg_policy *v = realloc(*pv, (*pn + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	*pv = v;
	if (policy_init(&v[*pn], "default", 0))
		return -ENOMEM;
	(*pn)++;
	return 0;
}

const struct sg_policy *cfg_policy_find(const struct sg_policy *v, size_t n, const char *name)
{
	if (!name)
		name = "default";
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

static bool valid_policy_name(const char *s, size_t len)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-");

	return n == len && n > 0 && n <= POLICY_NAME_MAX;
}

/* Parses one named policy into pv[*pn] (kept even with errors). */
static int parse_policy(struct cfg_ctx *ctx, struct sg_policy *pv, size_t *pn,
			const struct cy_node *key, const struct cy_node *val)
{
	size_t plen = strlen(ctx->path);
	struct sg_policy *p = &pv[*pn];
	char shown[CFG_SHOW_MAX];
	int ret;

	if (!valid_policy_name(key->str, key->len)) {
		cfg_show(key->str, shown);
		cfg_err_at(ctx, key->line, key->col, "policy name '%s': use 1..%d letters, "
			   "digits, '_', '.' or '-'", shown, POLICY_NAME_MAX);
		return -EINVAL;
	}
	if (policy_init(p, key->str, key->line)) {
		ctx->oom = true;
		return -ENOMEM;
	}
	(*pn)++;
	snprintf(ctx->path + plen, sizeof(ctx->path) - plen, ".%s", key->str);
	ret = cfg_walk(ctx, val, policy_keys, p, "a policy");
	ctx->path[plen] = '\0';
	return ret;
}

int cfg_policies(struct cfg_ctx *ctx, const struct cy_node *val, struct sg_policy **pv,
		 size_t *pn)
{
	int ret = 0;

	if (cy_is_null(val))
		return 0;
	if (cy_need(ctx, val, CY_MAP, "a mapping of policy names"))
		return -EINVAL;
	/* The file's policies replace the embedded set; "default" is re-added if missing. */
	for (size_t i = 0; i < *pn; i++)
		cfg_policy_free(&(*pv)[i]);
	free(*pv);
	*pn = 0;
	*pv = calloc(val->n / 2 + 1, sizeof(**pv));
	if (!*pv) {
		ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i + 1 < val->n; i += 2) {
		int r;

		if (val->items[i]->type != CY_SCALAR)
			continue;   /* reported by the parser */
		r = parse_policy(ctx, *pv, pn, val->items[i], val->items[i + 1]);
		if (r == -ENOMEM || ctx->oom)
			return -ENOMEM;
		if (r)
			ret = r;
	}
	if (!cfg_policy_find(*pv, *pn, "default") && cfg_policy_embedded_default(pv, pn)) {
		ctx->oom = true;
		return -ENOMEM;
	}
	return ret;
}
