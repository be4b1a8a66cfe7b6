/*
 * TLS ClientHello parser: SNI, ALPN, supported_versions and ECH presence, from the
 * first bytes of a TCP stream (RFC 8446 4.1.2, RFC 6066 3, RFC 7301 3.1, ECH draft).
 * A hello is collected across records before it is parsed; a record boundary can
 * fall anywhere, including inside the 4-byte handshake header.
 */
#include "gateway/parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define REC_HANDSHAKE 0x16
#define HS_CLIENT_HELLO 0x01
#define REC_PLAINTEXT_MAX 16384
#define EXT_SNI 0x0000
#define EXT_ALPN 0x0010
#define EXT_VERSIONS 0x002b
#define EXT_ECH 0xfe0d

/* Bounds-checked reader: every get fails once the input is exhausted. */
struct rd {
	const uint8_t *p;
	size_t n;
	size_t off;
};

static bool rd_u8(struct rd *r, uint32_t *v)
{
	if (r->n - r->off < 1)
		return false;
	*v = r->p[r->off++];
	return true;
}

static bool rd_u16(struct rd *r, uint32_t *v)
{
	if (r->n - r->off < 2)
		return false;
	*v = (uint32_t)r->p[r->off] << 8 | r->p[r->off + 1];
	r->off += 2;
	return true;
}

/* Takes len bytes as a sub-reader. */
static bool rd_sub(struct rd *r, size_t len, struct rd *sub)
{
	if (r->n - r->off < len)
		return false;
	sub->p = r->p + r->off;
	sub->n = len;
	sub->off = 0;
	r->off += len;
	return true;
}

/* Reads a vector with a 1- or 2-byte length prefix into sub. */
static bool rd_vec(struct rd *r, int prefix, struct rd *sub)
{
	uint32_t len;

	if (!(prefix == 1 ? rd_u8(r, &len) : rd_u16(r, &len)))
		return false;
	return rd_sub(r, len, sub);
}

static bool rd_done(const struct rd *r)
{
	return r->off == r->n;
}

const char *gw_parse_str(int result)
{
	switch (result) {
	case GW_PARSE_OK: return "ok";
	case GW_PARSE_NEED_MORE: return "need_more";
	case GW_PARSE_NOT_MINE: return "not_mine";
	case GW_PARSE_MALFORMED: return "malformed";
	case GW_PARSE_TOO_BIG: return "too_big";
	default: return "error";
	}
}

static bool grease(uint32_t v)
{
	return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff);
}

static int ext_sni(struct rd *e, struct tls_hello *h)
{
	struct rd list, name;
	uint32_t type;

	if (!rd_vec(e, 2, &list) || !rd_done(e) || list.n == 0)
		return GW_PARSE_MALFORMED;
	while (!rd_done(&list)) {
		if (!rd_u8(&list, &type) || !rd_vec(&list, 2, &name))
			return GW_PARSE_MALFORMED;
		if (type != 0)
			continue;
		/* Two host_names is how a client could show us one name and the server
		 * another (RFC 6066 forbids it): refuse rather than pick one. */
		if (h->has_sni || name.n == 0 || name.n >= TLS_SNI_MAX)
			return GW_PARSE_MALFORMED;
		for (size_t i = 0; i < name.n; i++) {
			uint8_t c = name.p[i];

			if (c < 0x21 || c > 0x7e)
				return GW_PARSE_MALFORMED;
			h->sni[i] = (char)((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
		}
		h->sni[name.n] = '\0';
		h->has_sni = true;
	}
	return GW_PARSE_OK;
}

/* Copies one ALPN id, escaping bytes that are not printable. Returns true if cut. */
static bool alpn_copy(const struct rd *id, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < id->n; i++) {
		uint8_t c = id->p[i];

		if (o + 5 > TLS_ALPN_LEN_MAX) {
			out[o] = '\0';
			return true;
		}
		if (c >= 0x21 && c <= 0x7e && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
	}
	out[o] = '\0';
	return false;
}

static int ext_alpn(struct rd *e, struct tls_hello *h)
{
	struct rd list, id;

	if (!rd_vec(e, 2, &list) || !rd_done(e) || list.n < 2)
		return GW_PARSE_MALFORMED;
	while (!rd_done(&list)) {
		if (!rd_vec(&list, 1, &id) || id.n == 0)
			return GW_PARSE_MALFORMED;
		if (h->n_alpn == TLS_ALPN_KEEP) {
			h->alpn_truncated = true;
			continue;
		}
		if (alpn_copy(&id, h->alpn[h->n_alpn++]))
			h->alpn_truncated = true;
	}
	return GW_PARSE_OK;
}

static int ext_versions(struct rd *e, struct tls_hello *h)
{
	struct rd list;
	uint32_t v;

	if (!rd_vec(e, 1, &list) || !rd_done(e) || list.n < 2 || list.n % 2)
		return GW_PARSE_MALFORMED;
	h->max_version = 0;
	while (rd_u16(&list, &v)) {
		if (h->n_versions < TLS_VERSIONS_KEEP)
			h->versions[h->n_versions++] = (uint16_t)v;
		if (!grease(v) && v > h->max_version)
			h->max_version = (uint16_t)v;
	}
	return GW_PARSE_OK;
}

/* Index of an extension we read, for duplicate detection; -1 for others. */
static int ext_slot(uint32_t type)
{
	switch (type) {
	case EXT_SNI: return 0;
	case EXT_ALPN: return 1;
	case EXT_VERSIONS: return 2;
	case EXT_ECH: return 3;
	default: return -1;
	}
}

static int parse_ext(uint32_t type, struct rd *e, struct tls_hello *h)
{
	switch (type) {
	case EXT_SNI: return ext_sni(e, h);
	case EXT_ALPN: return ext_alpn(e, h);
	case EXT_VERSIONS: return ext_versions(e, h);
	case EXT_ECH:
		h->has_ech = true;
		h->ech_type = e->n > 0 ? e->p[0] : -1;
		return GW_PARSE_OK;
	default:
		return GW_PARSE_OK;
	}
}

static int parse_exts(struct rd *body, struct tls_hello *h)
{
	struct rd exts, e;
	uint32_t type;
	unsigned seen = 0;
	int slot, ret;

	/* A hello without extensions (old TLS 1.0 clients) simply ends here. */
	if (rd_done(body))
		return GW_PARSE_OK;
	if (!rd_vec(body, 2, &exts) || !rd_done(body))
		return GW_PARSE_MALFORMED;
	while (!rd_done(&exts)) {
		if (!rd_u16(&exts, &type) || !rd_vec(&exts, 2, &e))
			return GW_PARSE_MALFORMED;
		slot = ext_slot(type);
		if (slot >= 0) {
			/* A repeated extension could carry a second SNI or ALPN: refuse. */
			if (seen & (1u << slot))
				return GW_PARSE_MALFORMED;
			seen |= 1u << slot;
		}
		ret = parse_ext(type, &e, h);
		if (ret != GW_PARSE_OK)
			return ret;
	}
	return GW_PARSE_OK;
}

/* Parses a complete ClientHello body (after the 4-byte handshake header). */
static int parse_body(const uint8_t *p, size_t n, struct tls_hello *h)
{
	struct rd body = { p, n, 0 }, skip;
	uint32_t v;

	if (!rd_u16(&body, &v))
		return GW_PARSE_MALFORMED;
	h->legacy_version = (uint16_t)v;
	h->max_version = (uint16_t)v;
	if (!rd_sub(&body, 32, &skip) || !rd_vec(&body, 1, &skip) || skip.n > 32)
		return GW_PARSE_MALFORMED;
	if (!rd_vec(&body, 2, &skip) || skip.n < 2 || skip.n % 2)
		return GW_PARSE_MALFORMED;
	if (!rd_vec(&body, 1, &skip) || skip.n < 1)
		return GW_PARSE_MALFORMED;
	return parse_exts(&body, h);
}

static void hello_init(struct tls_hello *h)
{
	memset(h, 0, sizeof(*h));
	h->ech_type = -1;
}

int tls_hello_parse_handshake(const uint8_t *p, size_t n, struct tls_hello *out,
			      size_t *need)
{
	size_t len;

	if (!out || (!p && n > 0))
		return -EINVAL;
	hello_init(out);
	if (n >= 1 && p[0] != HS_CLIENT_HELLO)
		return GW_PARSE_NOT_MINE;
	if (n < 4) {
		if (need)
			*need = 4;
		return GW_PARSE_NEED_MORE;
	}
	len = (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
	if (len + 4 > TLS_HELLO_MAX)
		return GW_PARSE_TOO_BIG;
	if (n < len + 4) {
		if (need)
			*need = len + 4;
		return GW_PARSE_NEED_MORE;
	}
	out->hello_len = len + 4;
	return parse_body(p + 4, len, out);
}

/* State of collecting the handshake message out of the records. */
struct collect {
	uint8_t buf[TLS_HELLO_MAX];
	size_t got;        /* handshake bytes copied so far */
	size_t want;       /* handshake message length, 0 until the header is in */
};

/* Checks a record header at p[off..]; returns GW_PARSE_OK and *rlen, or a result. */
static int record_header(const uint8_t *p, size_t n, size_t off, size_t *rlen)
{
	size_t have = n - off;
	int bad = off == 0 ? GW_PARSE_NOT_MINE : GW_PARSE_MALFORMED;

	/* Judge what is there before asking for more, so junk fails fast. */
	if (have >= 1 && p[off] != REC_HANDSHAKE)
		return bad;
	if (have >= 2 && p[off + 1] != 0x03)
		return bad;
	if (have < 5)
		return GW_PARSE_NEED_MORE;
	*rlen = (size_t)p[off + 3] << 8 | p[off + 4];
	if (*rlen == 0 || *rlen > REC_PLAINTEXT_MAX)
		return GW_PARSE_MALFORMED;
	if (off + 5 + *rlen > TLS_STREAM_MAX)
		return GW_PARSE_TOO_BIG;
	return GW_PARSE_OK;
}

/* Appends record payload bytes; learns the message length once 4 bytes are in. */
static int collect_add(struct collect *c, const uint8_t *p, size_t n)
{
	size_t take = n;

	if (c->want && take > c->want - c->got)
		take = c->want - c->got;
	if (take > sizeof(c->buf) - c->got)
		take = sizeof(c->buf) - c->got;
	memcpy(c->buf + c->got, p, take);
	c->got += take;
	if (c->want == 0 && c->got >= 4) {
		if (c->buf[0] != HS_CLIENT_HELLO)
			return GW_PARSE_NOT_MINE;
		c->want = ((size_t)c->buf[1] << 16 | (size_t)c->buf[2] << 8 | c->buf[3]) + 4;
		if (c->want > TLS_HELLO_MAX)
			return GW_PARSE_TOO_BIG;
		if (c->got > c->want)
			c->got = c->want;
	}
	return GW_PARSE_OK;
}

static int collect_records(const uint8_t *p, size_t n, struct collect *c, size_t *need,
			   size_t *stream_len)
{
	size_t off = 0, rlen = 0;
	int ret;

	for (;;) {
		ret = record_header(p, n, off, &rlen);
		if (ret == GW_PARSE_NEED_MORE)
			*need = off + 5;
		if (ret != GW_PARSE_OK)
			return ret;
		if (c->want == 0 && c->got == 0 && off == 0 && n > 5 && p[5] != HS_CLIENT_HELLO)
			return GW_PARSE_NOT_MINE;
		ret = collect_add(c, p + off + 5, rlen < n - off - 5 ? rlen : n - off - 5);
		if (ret != GW_PARSE_OK)
			return ret;
		if (c->want && c->got == c->want) {
			*stream_len = off + 5 + rlen;
			return GW_PARSE_OK;
		}
		if (n - off - 5 < rlen) {
			*need = off + 5 + rlen;
			return GW_PARSE_NEED_MORE;
		}
		off += 5 + rlen;
	}
}

int tls_hello_parse(const uint8_t *p, size_t n, struct tls_hello *out, size_t *need)
{
	struct collect c;
	size_t dummy, stream_len = 0;
	int ret;

	if (!out || (!p && n > 0))
		return -EINVAL;
	if (!need)
		need = &dummy;
	hello_init(out);
	c.got = 0;
	c.want = 0;
	ret = collect_records(p, n, &c, need, &stream_len);
	if (ret == GW_PARSE_NEED_MORE && *need > TLS_STREAM_MAX)
		ret = GW_PARSE_TOO_BIG;
	if (ret != GW_PARSE_OK) {
		/* hello_init again: a partial parse must not leave half-filled fields. */
		hello_init(out);
		return ret;
	}
	ret = tls_hello_parse_handshake(c.buf, c.got, out, NULL);
	if (ret == GW_PARSE_OK) {
		out->record_version = (uint16_t)(p[1] << 8 | p[2]);
		out->stream_len = stream_len;
	} else {
		hello_init(out);
	}
	return ret;
}
