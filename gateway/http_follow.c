/*
 * Following a cleartext HTTP/1 client stream request by request (gateway/parse.h
 * http_follow_*): bodies are skipped by their framing, Content-Length or chunked (RFC
 * 9112 6, 7.1), so that every request head is found where the server will find it and
 * handed to the caller. Framing is read byte by byte with a small state machine, so a
 * chunk line may fall across any number of segments; anything the server could read
 * another way (a bad chunk line, an oversized trailer) stops the follower.
 */
#include "gateway/parse.h"

#include <errno.h>
#include <stdlib.h>

#include "common/hex.h"

#define CHUNK_LINE_MAX 1024      /* chunk-size line with extensions, trailer line */
#define TRAILER_MAX 8192

enum fstate {
	F_HEAD,         /* the next byte starts a request head */
	F_BODY,         /* left bytes of a Content-Length body or of a chunk's data */
	F_CSIZE,        /* chunk-size hex digits */
	F_CEXT,         /* chunk extension, up to LF */
	F_CSIZE_LF,     /* CR seen after the size: LF next */
	F_CDATA_CR,     /* after chunk data: CR */
	F_CDATA_LF,     /* after chunk data: LF */
	F_TRAILER,      /* trailer lines until an empty one */
};

struct http_follow {
	enum fstate st;
	uint64_t left;           /* F_BODY: bytes left */
	bool in_chunks;          /* F_BODY is chunk data: F_CDATA_CR after it */
	uint64_t size;           /* chunk size being read */
	unsigned digits;
	size_t line;             /* bytes of the current chunk/trailer line */
	size_t trailer;          /* trailer bytes so far */
	uint8_t last;            /* last trailer byte before LF */
};

/* The framing after head r: its body, then the next head. */
static int expect_body(struct http_follow *h, const struct http_req *r)
{
	h->line = h->trailer = 0;
	h->size = 0;
	h->digits = 0;
	h->in_chunks = false;
	if (r->chunked) {
		h->st = F_CSIZE;
		h->in_chunks = true;
	} else if (r->has_clen && r->clen > 0) {
		h->st = F_BODY;
		h->left = r->clen;
	} else {
		h->st = F_HEAD;   /* a request without either has no body (RFC 9112 6.3) */
	}
	return 0;
}

int http_follow_new(const struct http_req *r, struct http_follow **out)
{
	struct http_follow *h;

	if (!r || !out)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	expect_body(h, r);
	*out = h;
	return 0;
}

void http_follow_free(struct http_follow *h)
{
	free(h);
}

/* After the size line: data, or (size 0) the trailer section. */
static void size_done(struct http_follow *h)
{
	h->line = 0;
	if (h->size == 0) {
		h->st = F_TRAILER;
		h->trailer = 0;
	} else {
		h->st = F_BODY;
		h->left = h->size;
	}
}

/* One framing byte of a chunked body. GW_PARSE_OK, or MALFORMED. */
static int chunk_byte(struct http_follow *h, uint8_t c)
{
	int v;

	switch (h->st) {
	case F_CSIZE:
		if ((v = hex_digit_any((char)c)) >= 0) {
			/* 15 hex digits already exceed any body we would let through */
			if (++h->digits > 15)
				return GW_PARSE_MALFORMED;
			h->size = h->size * 16 + (uint64_t)v;
			return GW_PARSE_OK;
		}
		if (h->digits == 0)
			return GW_PARSE_MALFORMED;
		if (c == ';') {
			h->st = F_CEXT;
			return GW_PARSE_OK;
		}
		if (c != '\r')   /* bare LF, spaces: servers differ, so refuse */
			return GW_PARSE_MALFORMED;
		h->st = F_CSIZE_LF;
		return GW_PARSE_OK;
	case F_CEXT:
		if (++h->line > CHUNK_LINE_MAX || c == '\n')
			return GW_PARSE_MALFORMED;   /* an extension must end with CR LF */
		if (c == '\r')
			h->st = F_CSIZE_LF;
		return GW_PARSE_OK;
	case F_CSIZE_LF:
		if (c != '\n')
			return GW_PARSE_MALFORMED;
		size_done(h);
		return GW_PARSE_OK;
	case F_CDATA_CR:
		h->st = F_CDATA_LF;
		return c == '\r' ? GW_PARSE_OK : GW_PARSE_MALFORMED;
	case F_CDATA_LF:
		h->st = F_CSIZE;
		h->size = 0;
		h->digits = 0;
		return c == '\n' ? GW_PARSE_OK : GW_PARSE_MALFORMED;
	default:
		return GW_PARSE_MALFORMED;
	}
}

/* One byte of the trailer section: lines ending in CR LF until an empty one. */
static int trailer_byte(struct http_follow *h, uint8_t c)
{
	if (++h->trailer > TRAILER_MAX)
		return GW_PARSE_MALFORMED;
	if (c != '\n') {
		h->line++;
		h->last = c;
		return GW_PARSE_OK;
	}
	if (h->line == 0 || h->last != '\r')
		return GW_PARSE_MALFORMED;   /* a bare LF: servers differ */
	if (h->line == 1)
		h->st = F_HEAD;
	h->line = 0;
	return GW_PARSE_OK;
}

/* Body and framing bytes from p[0..n) up to the next head; returns bytes taken. */
static int skip_body(struct http_follow *h, const uint8_t *p, size_t n, size_t *off)
{
	int ret;

	while (*off < n && h->st != F_HEAD) {
		if (h->st == F_BODY) {
			uint64_t take = n - *off < h->left ? n - *off : h->left;

			*off += (size_t)take;
			h->left -= take;
			if (h->left == 0)
				h->st = h->in_chunks ? F_CDATA_CR : F_HEAD;
			continue;
		}
		ret = h->st == F_TRAILER ? trailer_byte(h, p[*off]) : chunk_byte(h, p[*off]);
		if (ret != GW_PARSE_OK)
			return ret;
		(*off)++;
	}
	return GW_PARSE_OK;
}

int http_follow_feed(struct http_follow *h, const uint8_t *p, size_t n, size_t *start,
		     size_t *used, struct http_req *req)
{
	size_t off = 0;
	int ret;

	if (!h || !start || !used || !req || (!p && n > 0))
		return -EINVAL;
	ret = skip_body(h, p, n, &off);
	*start = *used = off;
	if (ret != GW_PARSE_OK)
		return ret;
	if (off == n)
		return GW_PARSE_NEED_MORE;
	ret = http_req_parse(p + off, n - off, req);
	if (ret == GW_PARSE_NOT_MINE)
		return GW_PARSE_MALFORMED;   /* bytes a server reads as a request, or junk */
	if (ret != GW_PARSE_OK)
		return ret;
	*used = off + req->head_len;
	expect_body(h, req);
	return GW_PARSE_OK;
}
