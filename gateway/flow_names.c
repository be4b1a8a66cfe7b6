/*
 * Reading a new flow's names from its first bytes: the client's stream (TCP) is
 * collected in order until the ClientHello or the HTTP request head is complete, or the
 * first datagram of UDP/443 is read as a QUIC Initial. Runs with g->lock held.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gw_int.h"
#include "gateway/flow_names.h"

/* Digits only, at least one: the port after an address literal. */
static bool port_digits(const char *p, const char *end)
{
	if (p == end)
		return false;
	for (; p < end; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

bool gw_addr_literal(const char *in, int *family, uint8_t a[16])
{
	const char *end = in + strlen(in), *close, *colon;
	char b[64];
	size_t n;

	memset(a, 0, 16);
	if (in[0] == '[') {
		close = strchr(in, ']');
		if (!close || (close[1] && (close[1] != ':' || !port_digits(close + 2, end))))
			return false;
		in++;
		n = (size_t)(close - in);
		*family = AF_INET6;
	} else if (strchr(in, ':') != strrchr(in, ':')) {
		n = (size_t)(end - in);     /* two colons or more: IPv6, no port */
		*family = AF_INET6;
	} else {
		colon = strchr(in, ':');
		if (colon && !port_digits(colon + 1, end))
			return false;
		n = (size_t)((colon ? colon : end) - in);
		*family = AF_INET;
	}
	if (n >= sizeof(b))
		return false;
	memcpy(b, in, n);
	b[n] = '\0';
	return inet_pton(*family, b, a) == 1;
}

static void copy_hello(struct flow *f, const struct tls_hello *h)
{
	if (h->has_sni)
		snprintf(f->sni, sizeof(f->sni), "%s", h->sni);
	if (h->n_alpn)
		snprintf(f->alpn, sizeof(f->alpn), "%s", h->alpn[0]);
	f->ech = h->has_ech;
}

/* Result: true when done (names read, or nothing to read). */
static bool try_tls(struct flow *f, int *res)
{
	struct tls_hello h;
	size_t need = 0;

	*res = tls_hello_parse(f->buf, f->len, &h, &need);
	if (*res == GW_PARSE_OK) {
		copy_hello(f, &h);
		f->parse = "tls";
	} else if (*res == GW_PARSE_MALFORMED || *res == GW_PARSE_TOO_BIG || *res < 0) {
		f->parse = "tls_malformed";
	}
	return *res != GW_PARSE_NEED_MORE && *res != GW_PARSE_NOT_MINE;
}

static bool try_http(struct flow *f, int *res)
{
	struct http_req r;

	*res = http_req_parse(f->buf, f->len, &r);
	if (*res == GW_PARSE_OK) {
		if (r.has_host)
			snprintf(f->http_host, sizeof(f->http_host), "%s", r.host);
		f->parse = "http";
	} else if (*res == GW_PARSE_MALFORMED || *res == GW_PARSE_TOO_BIG || *res < 0) {
		f->parse = "http_malformed";
	}
	return *res != GW_PARSE_NEED_MORE && *res != GW_PARSE_NOT_MINE;
}

static bool try_h2(struct flow *f, int *res)
{
	struct h2_req r;
	size_t need = 0;

	*res = h2_req_parse(f->buf, f->len, &r, &need);
	if (*res == GW_PARSE_OK) {
		if (r.has_authority)
			snprintf(f->http_host, sizeof(f->http_host), "%s", r.authority);
		f->parse = "h2c";
	} else if (*res == GW_PARSE_MALFORMED || *res == GW_PARSE_TOO_BIG || *res < 0) {
		f->parse = "h2c_malformed";
	}
	return *res != GW_PARSE_NEED_MORE && *res != GW_PARSE_NOT_MINE;
}

/* Tries each reader on the bytes so far. True when the flow can be decided. */
static bool read_stream(struct flow *f)
{
	int rt, rh, r2;

	if (try_tls(f, &rt) || try_http(f, &rh) || try_h2(f, &r2))
		return true;
	if (rt == GW_PARSE_NOT_MINE && rh == GW_PARSE_NOT_MINE && r2 == GW_PARSE_NOT_MINE) {
		f->parse = "unknown";
		return true;
	}
	/* Some reader wants more; past the largest cap nothing will come of it. */
	if (f->len >= TLS_STREAM_MAX) {
		f->parse = "incomplete";
		return true;
	}
	return false;
}

static bool tcp_bytes(struct flow *f, const struct gw_pkt *p)
{
	if (p->tcp_flags & PKT_TCP_SYN) {
		f->nseq[0] = p->seq + 1;
		f->nseq_set[0] = true;
		return false;
	}
	if (p->tcp_flags & (PKT_TCP_RST | PKT_TCP_FIN) && p->payload_len == 0) {
		/* The client gave up before its first flight was complete. */
		f->parse = f->len ? "incomplete" : "no_data";
		return true;
	}
	if (p->payload_len == 0)
		return false;
	if (!f->nseq_set[0]) {
		f->nseq[0] = p->seq;
		f->nseq_set[0] = true;
	}
	if (p->seq != f->nseq[0])
		return false;   /* retransmission or gap: the in-order bytes come later */
	f->nseq[0] += (uint32_t)p->payload_len;
	if (flow_buf_append(f, p->payload, p->payload_len, TLS_STREAM_MAX) != 0) {
		f->parse = "no_memory";
		return true;
	}
	return read_stream(f);
}

static void quic_first(struct flow *f, const struct gw_pkt *p)
{
	struct quic_initial *q = malloc(sizeof(*q));
	size_t need = 0;
	int r;

	f->parse = "udp";
	if (!q)
		return;
	quic_initial_init(q);
	r = quic_initial_parse(q, p->payload, p->payload_len, &need);
	if (r == GW_PARSE_OK) {
		copy_hello(f, &q->hello);
		f->parse = "quic";
	} else if (r == GW_PARSE_MALFORMED || r == GW_PARSE_TOO_BIG) {
		f->parse = "quic_malformed";
	} else if (r == GW_PARSE_NEED_MORE) {
		f->parse = "quic_incomplete";
	}
	free(q);
}

bool gw_names_feed(struct flow *f, const struct gw_pkt *p, bool reply)
{
	if (f->is_dns) {
		f->parse = "dns";
		return true;
	}
	if (p->proto == IPPROTO_TCP && !reply) {
		if (tcp_bytes(f, p))
			return true;
		if (f->npkts >= GW_DECIDE_PKTS && !f->parse)
			f->parse = "incomplete";
		return f->npkts >= GW_DECIDE_PKTS;
	}
	if (p->proto == IPPROTO_UDP && p->dport == 443 && !reply)
		quic_first(f, p);
	else
		f->parse = p->proto == IPPROTO_UDP ? "udp" : "none";
	return true;
}
