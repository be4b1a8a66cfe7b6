/*
 * DNS message parsing with ldns: header, first question, answers in presentation
 * form, and the CNAME chain and addresses the gateway binds to the name asked.
 */
#include "dns/dns.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <ldns/ldns.h>

/* Chain links followed plus qname itself. */
#define CHAIN_MAX (DNS_MAX_CNAMES + 1)

const char *dns_type_str(uint16_t type, char buf[DNS_TYPE_STR_MAX])
{
	const ldns_rr_descriptor *d = ldns_rr_descript(type);

	/* ldns keeps a descriptor even for unknown types, named NULL or "TYPExx". */
	if (d && d->_name && d->_type == type)
		snprintf(buf, DNS_TYPE_STR_MAX, "%s", d->_name);
	else
		snprintf(buf, DNS_TYPE_STR_MAX, "TYPE%u", (unsigned)type);
	return buf;
}

const char *dns_rcode_str(uint8_t rcode)
{
	ldns_lookup_table *t = ldns_lookup_by_id(ldns_rcodes, rcode);

	return t ? t->name : NULL;
}

/*
 * Writes rdf (or all rdfs of rr when rdf is NULL) in presentation form into out.
 * Returns 1 when the text had to be cut to fit, 0 when it fits, -ENOMEM.
 */
static int rdata_str(ldns_buffer *b, const ldns_rr *rr, char *out, size_t cap)
{
	size_t n;

	ldns_buffer_clear(b);
	for (size_t i = 0; i < ldns_rr_rd_count(rr); i++) {
		if (i > 0)
			ldns_buffer_printf(b, " ");
		if (ldns_rdf2buffer_str(b, ldns_rr_rdf(rr, i)) != LDNS_STATUS_OK)
			return -ENOMEM;
	}
	if (!ldns_buffer_status_ok(b))
		return -ENOMEM;
	n = ldns_buffer_position(b);
	if (n >= cap) {
		memcpy(out, ldns_buffer_begin(b), cap - 1);
		out[cap - 1] = '\0';
		return 1;
	}
	memcpy(out, ldns_buffer_begin(b), n);
	out[n] = '\0';
	return 0;
}

/* Appends one name byte in presentation form (the escapes ldns uses). */
static size_t put_name_byte(char *o, uint8_t c, bool lower)
{
	if (lower && c >= 'A' && c <= 'Z') {
		o[0] = (char)(c - 'A' + 'a');
		return 1;
	}
	if (c == '.' || c == ';' || c == '(' || c == ')' || c == '\\') {
		o[0] = '\\';
		o[1] = (char)c;
		return 2;
	}
	if (c <= 0x20 || c >= 0x7f) {
		snprintf(o, 5, "\\%03u", (unsigned)c);
		return 4;
	}
	o[0] = (char)c;
	return 1;
}

/*
 * Presentation form of a wire dname, lowercase, no trailing dot ("" for the root).
 * Done here rather than with ldns_rdf2buffer_str_dname, which formats one
 * character per printf call and was most of the parse time.
 * Returns 0, -ENAMETOOLONG when out cannot hold it, -EBADMSG for a bad rdf.
 */
static int dname_str_case(const ldns_rdf *rdf, char *out, size_t cap, bool lower)
{
	const uint8_t *d = ldns_rdf_data(rdf);
	size_t n = ldns_rdf_size(rdf), i = 0, o = 0;

	if (ldns_rdf_get_type(rdf) != LDNS_RDF_TYPE_DNAME)
		return -EBADMSG;
	while (i < n && d[i] != 0) {
		size_t len = d[i++];

		if (len > 63 || len > n - i)
			return -EBADMSG;
		if (o > 0 && o + 1 < cap)
			out[o++] = '.';
		for (size_t k = 0; k < len; k++) {
			/* Worst case 4 characters, plus a dot and the NUL. */
			if (o + 6 > cap) {
				out[o] = '\0';     /* o < cap: the last check left room */
				return -ENAMETOOLONG;
			}
			o += put_name_byte(out + o, d[i + k], lower);
		}
		i += len;
	}
	out[o] = '\0';
	return 0;
}

static int dname_str(const ldns_rdf *rdf, char *out, size_t cap)
{
	return dname_str_case(rdf, out, cap, true);
}

static void parse_header(const ldns_pkt *pkt, struct dns_msg *m)
{
	m->id = ldns_pkt_id(pkt);
	m->qr = ldns_pkt_qr(pkt);
	m->opcode = (uint8_t)ldns_pkt_get_opcode(pkt);
	m->rcode = (uint8_t)(ldns_pkt_get_rcode(pkt) & 0x0f);
	m->aa = ldns_pkt_aa(pkt);
	m->tc = ldns_pkt_tc(pkt);
	m->rd = ldns_pkt_rd(pkt);
	m->ra = ldns_pkt_ra(pkt);
	m->qdcount = ldns_pkt_qdcount(pkt);
	m->ancount = ldns_pkt_ancount(pkt);
	m->nscount = ldns_pkt_nscount(pkt);
	m->arcount = ldns_pkt_arcount(pkt);
	/* ldns moves OPT out of the additional section into these fields. */
	m->edns = ldns_pkt_edns(pkt);
	m->edns_udp_size = ldns_pkt_edns_udp_size(pkt);
	m->edns_do = ldns_pkt_edns_do(pkt);
}

/* First question into m; *qname gets its owner rdf (or NULL without a question). */
static int parse_question(const ldns_pkt *pkt, struct dns_msg *m, const ldns_rdf **qname)
{
	const ldns_rr_list *q = ldns_pkt_question(pkt);
	const ldns_rr *rr;

	*qname = NULL;
	dns_type_str(0, m->qtype_str);
	if (!q || ldns_rr_list_rr_count(q) == 0)
		return 0;
	rr = ldns_rr_list_rr(q, 0);
	*qname = ldns_rr_owner(rr);
	m->qtype = (uint16_t)ldns_rr_get_type(rr);
	m->qclass = (uint16_t)ldns_rr_get_class(rr);
	dns_type_str(m->qtype, m->qtype_str);
	/* Every name as sent, for the record (a bad one shows as far as it reads). */
	for (size_t i = 0; i < ldns_rr_list_rr_count(q) && i < DNS_MAX_QUESTIONS; i++)
		(void)dname_str_case(ldns_rr_owner(ldns_rr_list_rr(q, i)), m->questions[i],
				     sizeof(m->questions[i]), false);
	m->n_questions = ldns_rr_list_rr_count(q) < DNS_MAX_QUESTIONS ?
			 ldns_rr_list_rr_count(q) : DNS_MAX_QUESTIONS;
	memcpy(m->qname_raw, m->questions[0], sizeof(m->qname_raw));
	return dname_str(*qname, m->qname, sizeof(m->qname));
}

static int parse_answers(ldns_buffer *b, const ldns_rr_list *an, struct dns_msg *m)
{
	size_t count = an ? ldns_rr_list_rr_count(an) : 0;

	for (size_t i = 0; i < count; i++) {
		const ldns_rr *rr = ldns_rr_list_rr(an, i);
		struct dns_answer *a;
		int r;

		if (m->n_answers == DNS_MAX_ANSWERS) {
			m->answers_dropped = count - i;
			break;
		}
		a = &m->answers[m->n_answers++];
		a->type = (uint16_t)ldns_rr_get_type(rr);
		dns_type_str(a->type, a->type_str);
		a->ttl = ldns_rr_ttl(rr);
		if (a->type == LDNS_RR_TYPE_CNAME && ldns_rr_rd_count(rr) == 1)
			r = dname_str(ldns_rr_rdf(rr, 0), a->data, sizeof(a->data));
		else
			r = rdata_str(b, rr, a->data, sizeof(a->data));
		if (r == -ENAMETOOLONG || r == 1) {
			a->data_truncated = true;
			r = 0;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Wire-form name equality, ASCII case-insensitive. ldns_dname_compare clones and
 * lowercases both names per call, which dominated the parse time. Label length
 * bytes are below 64, so folding 'A'..'Z' can never touch them.
 */
static bool dname_eq(const ldns_rdf *a, const ldns_rdf *b)
{
	const uint8_t *x = ldns_rdf_data(a), *y = ldns_rdf_data(b);
	size_t n = ldns_rdf_size(a);

	if (n != ldns_rdf_size(b))
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = x[i], d = y[i];

		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c - 'A' + 'a');
		if (d >= 'A' && d <= 'Z')
			d = (uint8_t)(d - 'A' + 'a');
		if (c != d)
			return false;
	}
	return true;
}

/* The CNAME in an whose owner is name, or NULL. */
static const ldns_rr *find_cname(const ldns_rr_list *an, const ldns_rdf *name)
{
	for (size_t i = 0; i < ldns_rr_list_rr_count(an); i++) {
		const ldns_rr *rr = ldns_rr_list_rr(an, i);

		if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_CNAME && ldns_rr_rd_count(rr) == 1 &&
		    dname_eq(ldns_rr_owner(rr), name))
			return rr;
	}
	return NULL;
}

static bool in_chain(const ldns_rdf *const *chain, size_t n, const ldns_rdf *name)
{
	for (size_t i = 0; i < n; i++)
		if (dname_eq(chain[i], name))
			return true;
	return false;
}

/* Follows CNAMEs from qname; chain[0] = qname. Returns the chain length or -errno. */
static int walk_chain(const ldns_rr_list *an, const ldns_rdf *qname, const ldns_rdf **chain,
		      struct dns_msg *m)
{
	size_t n = 1;

	chain[0] = qname;
	m->cname_ttl_min = UINT32_MAX;
	for (;;) {
		const ldns_rr *rr = find_cname(an, chain[n - 1]);
		const ldns_rdf *target;
		int r;

		if (!rr)
			break;
		target = ldns_rr_rdf(rr, 0);
		/* A loop or an overlong chain binds nothing more: stop and say so. */
		if (n == CHAIN_MAX || in_chain(chain, n, target)) {
			m->cname_chain_cut = true;
			break;
		}
		r = dname_str(target, m->cnames[m->n_cnames], DNS_NAME_PRES_MAX);
		if (r < 0)
			return r;
		m->n_cnames++;
		if (ldns_rr_ttl(rr) < m->cname_ttl_min)
			m->cname_ttl_min = ldns_rr_ttl(rr);
		chain[n++] = target;
	}
	return (int)n;
}

static void add_addr(struct dns_msg *m, const ldns_rr *rr, uint32_t ttl_cap)
{
	const ldns_rdf *rdf = ldns_rr_rd_count(rr) == 1 ? ldns_rr_rdf(rr, 0) : NULL;
	struct dns_addr *a;
	bool v4 = ldns_rr_get_type(rr) == LDNS_RR_TYPE_A;
	size_t len = v4 ? 4 : 16;

	if (!rdf || ldns_rdf_size(rdf) != len)
		return;
	if (m->n_addrs == DNS_MAX_ADDRS) {
		m->addrs_dropped++;
		return;
	}
	a = &m->addrs[m->n_addrs++];
	a->family = v4 ? AF_INET : AF_INET6;
	memcpy(a->addr, ldns_rdf_data(rdf), len);
	a->ttl = ldns_rr_ttl(rr) < ttl_cap ? ldns_rr_ttl(rr) : ttl_cap;
}

static int bind_addrs(const ldns_pkt *pkt, const ldns_rdf *qname, struct dns_msg *m)
{
	const ldns_rr_list *an = ldns_pkt_answer(pkt);
	const ldns_rdf *chain[CHAIN_MAX];
	int n;

	if (!an || !qname)
		return 0;
	n = walk_chain(an, qname, chain, m);
	if (n < 0)
		return n;
	for (size_t i = 0; i < ldns_rr_list_rr_count(an); i++) {
		const ldns_rr *rr = ldns_rr_list_rr(an, i);
		ldns_rr_type t = ldns_rr_get_type(rr);

		if ((t == LDNS_RR_TYPE_A || t == LDNS_RR_TYPE_AAAA) &&
		    ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN &&
		    in_chain(chain, (size_t)n, ldns_rr_owner(rr)))
			add_addr(m, rr, m->cname_ttl_min);
	}
	return 0;
}

int dns_parse(const uint8_t *p, size_t n, struct dns_msg *out)
{
	ldns_pkt *pkt = NULL;
	ldns_buffer *b = NULL;
	const ldns_rdf *qname;
	int ret = -EINVAL;

	if (!p || !out || n == 0)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->cname_ttl_min = UINT32_MAX;
	if (ldns_wire2pkt(&pkt, p, n) != LDNS_STATUS_OK) {
		ret = -EBADMSG;
		goto out;
	}
	b = ldns_buffer_new(DNS_NAME_PRES_MAX);
	if (!b) {
		ret = -ENOMEM;
		goto out;
	}
	parse_header(pkt, out);
	ret = parse_question(pkt, out, &qname);
	if (ret == 0)
		ret = parse_answers(b, ldns_pkt_answer(pkt), out);
	if (ret == 0)
		ret = bind_addrs(pkt, qname, out);
	if (ret == -ENAMETOOLONG)
		ret = -EBADMSG;
out:
	ldns_buffer_free(b);
	ldns_pkt_free(pkt);
	return ret;
}
