/*
 * The decision on a flow: the session's policy (policy/policy.h) asked with what the
 * gateway knows (destination, the names this session's allowed answers bound to it, the
 * SNI or Host of its first bytes). The verdict travels in the packet mark: allow, or deny
 * (the kernel rejects: TCP reset, ICMP administratively prohibited). Report mode lets a
 * would-be-blocked flow through and says would_block. With gateway.enforce false the
 * gateway only observes: everything is allowed with reason no_policy. Pure: everything
 * comes from the policy view (gateway/packet.h) and the clock the caller passes.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "gateway/flow_names.h"
#include "gateway/gw_int.h"
#include "gateway/packet.h"
#include "nft/nft.h"

bool gw_view_resolver_ok(const struct gw_policy_view *v, int family, const uint8_t *addr,
			 uint16_t port)
{
	size_t al = family == AF_INET ? 4 : 16;

	for (size_t i = 0; i < v->n_res; i++)
		if (v->res[i].addr.family == family && v->res[i].port == port &&
		    !memcmp(v->res[i].addr.bytes, addr, al))
			return true;
	return false;
}

static void set_verdict(struct flow *f, const struct policy *p,
			const struct policy_decision *d)
{
	bool report = policy_settings(p)->mode == SG_MODE_REPORT;

	f->mode = report ? "report" : "enforce";
	f->reason = d->reason;
	f->range = d->range;
	snprintf(f->rule, sizeof(f->rule), "%s", d->rule);
	if (d->verdict == POLICY_ALLOW) {
		f->vstr = "allowed";
		f->verdict = NFT_MARK_ALLOW;
	} else if (d->verdict == POLICY_WOULD_BLOCK || report) {
		f->vstr = "would_block";
		f->verdict = NFT_MARK_ALLOW;
	} else {
		f->vstr = "blocked";
		f->verdict = NFT_MARK_DENY;
	}
}

/*
 * A name read from the wire made comparable; NULL when absent, invalid or an address
 * literal. A literal names no host to check against the bound names: it passes only as
 * a Host that is the flow's own destination (http://198.18.1.2/). As an SNI (RFC 6066
 * allows no address there) or naming another address, or as anything else that is no
 * name (a bracket opening no IPv6 literal: "[pi.web.test"), it sets *bad, and a flow
 * that only a name could allow is refused.
 */
static const char *norm(const char *in, const struct flow *f, bool sni,
			char out[POLICY_NAME_MAX], bool *bad)
{
	const char *why;
	size_t len = strlen(in);
	const char *colon;
	uint8_t a[16];
	int family;

	if (!in[0])
		return NULL;
	/* A Host may carry a port ("name:8080"), an SNI may not; "[" opens no name. */
	colon = strrchr(in, ':');
	if (!sni && in[0] != '[' && colon)
		len = (size_t)(colon - in);
	if (in[0] != '[' && policy_name_normalize(in, len, out, &why) == 0)
		return out;
	if (sni || !gw_addr_literal(in, &family, a) || family != f->family ||
	    memcmp(a, f->dst, family == AF_INET ? 4 : 16) != 0)
		*bad = true;
	return NULL;
}

/* DNS to a resolver not configured: blocked whatever the names. */
static bool decide_dns(const struct gw_policy_view *v, struct flow *f, const struct policy *p)
{
	struct policy_decision d = { .verdict = POLICY_ALLOW, .reason = "resolver_allowed" };

	if (f->dport == 53 && !gw_view_resolver_ok(v, f->family, f->dst, f->dport)) {
		d.verdict = POLICY_BLOCK;
		d.reason = "resolver_not_allowed";
	}
	set_verdict(f, p, &d);
	return true;
}

/*
 * What the first flight's reader could not read with certainty is not allowed on a
 * guess (enforcing): a broken, inconsistent or unfinished first flight is refused
 * whatever the address; a flow only a name could allow (a bound address) must show
 * that name: another protocol, a ClientHello without SNI, a request without Host, or
 * h2c (whose later streams are not read) is refused.
 */
static void strict(const struct flow *f, struct policy_decision *d)
{
	static const struct {
		const char *parse, *reason;
		bool always;
	} t[] = {
		{ "tls_malformed", "tls_malformed", true },
		{ "http_malformed", "http_malformed", true },
		{ "h2c_malformed", "h2c_malformed", true },
		{ "incomplete", "first_flight_incomplete", true },
		{ "first_flight_inconsistent", "first_flight_inconsistent", true },
		{ "no_origin", "first_flight_unread", true },
		{ "no_memory", "first_flight_unread", true },
		{ "unknown", "first_flight_unknown", false },
		{ "h2c", "h2c_not_followed", false },
	};
	bool bound = !strcmp(d->reason, "bound_address");

	if (d->verdict != POLICY_ALLOW || !f->parse)
		return;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(f->parse, t[i].parse) && (t[i].always || bound)) {
			d->verdict = POLICY_BLOCK;
			d->reason = t[i].reason;
			d->rule[0] = '\0';
			return;
		}
	if (bound && ((!strcmp(f->parse, "tls") && !f->sni[0]) ||
		      (!strcmp(f->parse, "http") && !f->http_host[0]))) {
		d->verdict = POLICY_BLOCK;
		d->reason = "first_flight_no_name";
		d->rule[0] = '\0';
	}
}

bool gw_flow_decide(const struct gw_policy_view *v, struct flow *f, bool early,
		    int64_t now_ms)
{
	const struct policy *p = v->pol;
	const struct gw_pkg_hosts *pk = v->pkg;
	char names[DNSBIND_NAMES_PER_ADDR][DNSBIND_NAME_MAX];
	const char *bound[DNSBIND_NAMES_PER_ADDR];
	char sni[POLICY_NAME_MAX], host[POLICY_NAME_MAX];
	struct policy_flow pf = { 0 };
	struct policy_decision d = { 0 };
	bool bad = false;

	if (!v->enforce || !p) {
		if (early)
			return false;
		f->mode = "observe";
		f->vstr = "allowed";
		f->verdict = NFT_MARK_ALLOW;
		/* A broken or evasive first flight is what a policy would block: say so. */
		f->reason = f->parse && strstr(f->parse, "malformed") ? "malformed" : "no_policy";
		return true;
	}
	if (f->is_dns)
		return decide_dns(v, f, p);
	pf.n_bound = dnsbind_names(v->binds, f->mark_id, f->family, f->dst, now_ms, names,
				   DNSBIND_NAMES_PER_ADDR);
	for (size_t i = 0; i < pf.n_bound; i++)
		bound[i] = names[i];
	pf.bound_names = bound;
	pf.family = f->family;
	pf.dst = f->dst;
	pf.dport = f->dport;
	pf.l4 = f->proto;
	if (!early) {
		pf.sni = norm(f->sni, f, true, sni, &bad);
		pf.http_host = norm(f->http_host, f, false, host, &bad);
		pf.ech = f->ech;
		pf.quic = f->parse && !strncmp(f->parse, "quic", 4);
	}
	policy_decide_flow(p, &pf, &d);
	if (!early && bad && d.verdict == POLICY_ALLOW && pf.n_bound) {
		/* A name that is no name cannot be checked against the bound ones. */
		d.verdict = POLICY_BLOCK;
		d.reason = "invalid_name";
	}
	if (!early)
		strict(f, &d);
	/* An installer under `unapproved: block`: only its approved sources' hosts. */
	if (pk && d.verdict == POLICY_ALLOW && gw_pkg_refused(pk, f, &pf, early)) {
		d.verdict = POLICY_BLOCK;
		d.reason = "unapproved_package_source";
		snprintf(d.rule, sizeof(d.rule), "packages.unapproved: block");
	}
	/*
	 * Before any payload only a verdict no name can change is final: a block for the
	 * address, port or protocol (the SNI or Host may still turn an allowed or a
	 * not-yet-matched bound address either way).
	 */
	if (early && (d.verdict == POLICY_ALLOW ||
		      (pf.n_bound && !strcmp(d.reason, "not_allowed"))))
		return false;
	set_verdict(f, p, &d);
	return true;
}
