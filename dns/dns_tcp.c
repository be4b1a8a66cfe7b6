/*
 * DNS over TCP: the 2-byte length prefix reassembler and the synthesised answers
 * (REFUSED/NXDOMAIN) the gateway sends back for names the policy does not allow.
 */
#include "dns/dns.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

struct dns_tcp {
	uint8_t *buf;
	size_t len;        /* bytes held */
	size_t off;        /* start of the first byte not yet handed out */
	size_t cap;
};

struct dns_tcp *dns_tcp_new(void)
{
	return calloc(1, sizeof(struct dns_tcp));
}

void dns_tcp_free(struct dns_tcp *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

size_t dns_tcp_pending(const struct dns_tcp *r)
{
	return r ? r->len - r->off : 0;
}

/* Moves the unread tail to the front so the buffer does not creep forward. */
static void compact(struct dns_tcp *r)
{
	if (r->off == 0)
		return;
	memmove(r->buf, r->buf + r->off, r->len - r->off);
	r->len -= r->off;
	r->off = 0;
}

int dns_tcp_feed(struct dns_tcp *r, const uint8_t *p, size_t n)
{
	if (!r || (!p && n > 0))
		return -EINVAL;
	compact(r);
	if (n > DNS_TCP_BUF_MAX - r->len)
		return -ENOBUFS;
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 1024;
		uint8_t *nb;

		while (cap < r->len + n)
			cap *= 2;
		if (cap > DNS_TCP_BUF_MAX)
			cap = DNS_TCP_BUF_MAX;
		nb = realloc(r->buf, cap);
		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->cap = cap;
	}
	if (n > 0)
		memcpy(r->buf + r->len, p, n);
	r->len += n;
	return 0;
}

int dns_tcp_next(struct dns_tcp *r, const uint8_t **msg, size_t *len, size_t *need)
{
	size_t have, mlen;

	if (!r || !msg || !len)
		return -EINVAL;
	have = r->len - r->off;
	if (have < 2) {
		if (need)
			*need = 2 - have;
		return 0;
	}
	mlen = (size_t)r->buf[r->off] << 8 | r->buf[r->off + 1];
	if (mlen == 0) {
		/* Nothing to parse in it; skip it so one bad prefix does not wedge the stream. */
		r->off += 2;
		return -EBADMSG;
	}
	if (have < 2 + mlen) {
		if (need)
			*need = 2 + mlen - have;
		return 0;
	}
	*msg = r->buf + r->off + 2;
	*len = mlen;
	r->off += 2 + mlen;
	if (need)
		*need = 0;
	return 1;
}

/*
 * The parsed query, if it is one we can answer: a request. Several questions (or
 * none) are answered too, with the first one (or none) echoed: the gateway refuses
 * those queries (REFUSED, as most resolvers do for QDCOUNT != 1).
 */
static int load_query(const uint8_t *q, size_t qlen, ldns_pkt **out)
{
	ldns_pkt *pkt = NULL;

	if (ldns_wire2pkt(&pkt, q, qlen) != LDNS_STATUS_OK)
		return -EBADMSG;
	if (ldns_pkt_qr(pkt)) {
		ldns_pkt_free(pkt);
		return -EBADMSG;
	}
	*out = pkt;
	return 0;
}

/* Builds the refusal packet for query q. Returns 0 or -ENOMEM. */
static int build_refusal(const ldns_pkt *q, uint8_t rcode, ldns_pkt **out)
{
	ldns_pkt *a = ldns_pkt_new();
	ldns_rr *qrr;

	if (!a)
		return -ENOMEM;
	if (ldns_rr_list_rr_count(ldns_pkt_question(q)) == 0)
		goto header;
	qrr = ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(q), 0));
	if (!qrr || !ldns_pkt_push_rr(a, LDNS_SECTION_QUESTION, qrr)) {
		ldns_rr_free(qrr);
		ldns_pkt_free(a);
		return -ENOMEM;
	}
header:
	ldns_pkt_set_id(a, ldns_pkt_id(q));
	ldns_pkt_set_qr(a, true);
	ldns_pkt_set_opcode(a, ldns_pkt_get_opcode(q));
	ldns_pkt_set_rd(a, ldns_pkt_rd(q));
	/* Stub resolvers treat a missing RA as "this server will not recurse" and may
	 * try the next resolver; the answer is final, so claim recursion. */
	ldns_pkt_set_ra(a, true);
	ldns_pkt_set_cd(a, ldns_pkt_cd(q));
	ldns_pkt_set_rcode(a, rcode);
	if (ldns_pkt_edns(q)) {
		ldns_pkt_set_edns_udp_size(a, 1232);
		ldns_pkt_set_edns_do(a, ldns_pkt_edns_do(q));
	}
	*out = a;
	return 0;
}

static int synth(const uint8_t *q, size_t qlen, uint8_t rcode, uint8_t *out, size_t cap,
		 size_t *outlen, size_t prefix)
{
	ldns_pkt *query = NULL, *ans = NULL;
	uint8_t *wire = NULL;
	size_t wlen = 0;
	int ret;

	if (!q || qlen == 0 || !out || !outlen || rcode > 15)
		return -EINVAL;
	ret = load_query(q, qlen, &query);
	if (ret == 0)
		ret = build_refusal(query, rcode, &ans);
	if (ret == 0 && ldns_pkt2wire(&wire, ans, &wlen) != LDNS_STATUS_OK)
		ret = -ENOMEM;
	if (ret == 0 && (wlen > 65535 || wlen + prefix > cap))
		ret = -ENOSPC;
	if (ret == 0) {
		if (prefix) {
			out[0] = (uint8_t)(wlen >> 8);
			out[1] = (uint8_t)wlen;
		}
		memcpy(out + prefix, wire, wlen);
		*outlen = wlen + prefix;
	}
	/* ldns allocates wire with plain malloc (LDNS_XMALLOC). */
	free(wire);
	ldns_pkt_free(ans);
	ldns_pkt_free(query);
	return ret;
}

int dns_synth_answer(const uint8_t *q, size_t qlen, uint8_t rcode,
		     uint8_t *out, size_t cap, size_t *outlen)
{
	return synth(q, qlen, rcode, out, cap, outlen, 0);
}

int dns_synth_answer_tcp(const uint8_t *q, size_t qlen, uint8_t rcode,
			 uint8_t *out, size_t cap, size_t *outlen)
{
	return synth(q, qlen, rcode, out, cap, outlen, 2);
}
