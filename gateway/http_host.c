/*
 * Plain HTTP: the HTTP/1.x request head (method, target, Host; RFC 9112 3 and 7230
 * 5.4) and cleartext HTTP/2 with prior knowledge (RFC 9113 3.4, 4.1, 6.2, 6.10),
 * whose first header block is decoded with nghttp2's HPACK inflater.
 */
#include "gateway/parse.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#ifdef SANDGATE_HAVE_NGHTTP2
#include <nghttp2/nghttp2.h>
#endif

static const char h2_preface[H2_PREFACE_LEN + 1] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Characters allowed in a host name or IP literal we hand to the policy. */
static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == ':';
}

static bool parse_port(const char *s, size_t n, uint16_t *port)
{
	uint32_t v = 0;

	if (n == 0 || n > 5)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	if (v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

/*
 * Splits an authority "host[:port]" or "[v6][:port]" (userinfo not allowed) into
 * a lowercase host without brackets and a port. Returns false when malformed.
 */
static bool parse_authority(const char *s, size_t n, char *host, uint16_t *port)
{
	const char *h = s, *colon = NULL;
	size_t hl;

	*port = 0;
	if (n > 0 && s[0] == '[') {
		const char *end = memchr(s, ']', n);

		if (!end)
			return false;
		h = s + 1;
		hl = (size_t)(end - h);
		if (end + 1 < s + n && (end[1] != ':' ||
		    !parse_port(end + 2, (size_t)(s + n - end - 2), port)))
			return false;
	} else {
		colon = memchr(s, ':', n);
		hl = colon ? (size_t)(colon - s) : n;
		if (colon && !parse_port(colon + 1, n - hl - 1, port))
			return false;
	}
	if (hl == 0 || hl >= HTTP_HOST_MAX)
		return false;
	for (size_t i = 0; i < hl; i++) {
		/* ':' only inside brackets: "a:b:c" without them is not one host. */
		if (!host_char(h[i]) || (h[i] == ':' && h == s))
			return false;
		host[i] = lower(h[i]);
	}
	host[hl] = '\0';
	return true;
}

bool h2_is_preface(const uint8_t *p, size_t n)
{
	size_t k = n < H2_PREFACE_LEN ? n : H2_PREFACE_LEN;

	return p && memcmp(p, h2_preface, k) == 0;
}

/* ---- HTTP/1 ------------------------------------------------------------------ */

/* A request line starts with a method token of capitals and a space. */
static int method_check(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n && i < HTTP_METHOD_MAX; i++) {
		if (p[i] == ' ')
			return i == 0 ? GW_PARSE_NOT_MINE : GW_PARSE_OK;
		if (!((p[i] >= 'A' && p[i] <= 'Z') || p[i] == '-' || p[i] == '_'))
			return GW_PARSE_NOT_MINE;
	}
	return n < HTTP_METHOD_MAX ? GW_PARSE_NEED_MORE : GW_PARSE_NOT_MINE;
}

/* Length of the head including its blank line, or 0 when it does not end in p. */
static size_t head_end(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (p[i] != '\n')
			continue;
		if (p[i + 1] == '\n')
			return i + 2;
		if (p[i + 1] == '\r' && i + 2 < n && p[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Next line of p[*off..end) without its CR LF; false at the end. */
static bool next_line(const char *p, size_t end, size_t *off, const char **line,
		      size_t *len)
{
	const char *nl;

	if (*off >= end)
		return false;
	nl = memchr(p + *off, '\n', end - *off);
	if (!nl)
		return false;
	*line = p + *off;
	*len = (size_t)(nl - *line);
	if (*len > 0 && (*line)[*len - 1] == '\r')
		(*len)--;
	*off = (size_t)(nl - p) + 1;
	return true;
}

static void set_path(struct http_req *r, const char *s, size_t n)
{
	if (n >= HTTP_PATH_MAX) {
		n = HTTP_PATH_MAX - 1;
		r->path_truncated = true;
	}
	memcpy(r->path, s, n);
	r->path[n] = '\0';
}

/* Absolute-form "scheme://[userinfo@]authority[/path]": host from the authority. */
static int target_absolute(struct http_req *r, const char *t, size_t n, const char *sep)
{
	const char *a = sep + 3, *end = a, *at;

	while (end < t + n && *end != '/' && *end != '?' && *end != '#')
		end++;
	/* userinfo is how "http://allowed.test@evil.test/" hides the real host. */
	at = memchr(a, '@', (size_t)(end - a));
	if (at)
		a = at + 1;
	if (!parse_authority(a, (size_t)(end - a), r->host, &r->port))
		return GW_PARSE_MALFORMED;
	r->absolute_form = true;
	r->has_host = true;
	set_path(r, end, (size_t)(t + n - end));
	return GW_PARSE_OK;
}

static int parse_target(struct http_req *r, const char *t, size_t n)
{
	const char *sep = n >= 3 ? memmem(t, n, "://", 3) : NULL;

	if (strcmp(r->method, "CONNECT") == 0) {
		r->has_host = parse_authority(t, n, r->host, &r->port);
		return r->has_host ? GW_PARSE_OK : GW_PARSE_MALFORMED;
	}
	if (n > 0 && t[0] != '/' && t[0] != '*' && sep)
		return target_absolute(r, t, n, sep);
	if (n == 0 || (t[0] != '/' && !(n == 1 && t[0] == '*')))
		return GW_PARSE_MALFORMED;
	set_path(r, t, n);
	return GW_PARSE_OK;
}

static int request_line(struct http_req *r, const char *l, size_t n)
{
	const char *sp1 = memchr(l, ' ', n), *sp2;
	size_t ml;

	if (!sp1)
		return GW_PARSE_MALFORMED;
	ml = (size_t)(sp1 - l);
	sp2 = memchr(sp1 + 1, ' ', n - ml - 1);
	if (ml >= HTTP_METHOD_MAX || !sp2)
		return GW_PARSE_MALFORMED;
	memcpy(r->method, l, ml);
	r->method[ml] = '\0';
	/* "HTTP/1.x" must be exactly the rest of the line. */
	if ((size_t)(l + n - sp2 - 1) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    sp2[8] < '0' || sp2[8] > '9')
		return GW_PARSE_MALFORMED;
	r->version_minor = (uint8_t)(sp2[8] - '0');
	return parse_target(r, sp1 + 1, (size_t)(sp2 - sp1 - 1));
}

/* A Host header value: trims OWS, parses it, and reconciles it with the target. */
static int host_header(struct http_req *r, const char *v, size_t n)
{
	char host[HTTP_HOST_MAX];
	uint16_t port;

	while (n > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		n--;
	}
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n == 0)
		return GW_PARSE_OK;
	if (!parse_authority(v, n, host, &port))
		return GW_PARSE_MALFORMED;
	if (r->has_host) {
		r->host_mismatch = strcmp(host, r->host) != 0;
		return GW_PARSE_OK;
	}
	memcpy(r->host, host, sizeof(host));
	r->port = port;
	r->has_host = true;
	return GW_PARSE_OK;
}

static bool name_is(const char *l, size_t nl, const char *name)
{
	return strlen(name) == nl && strncasecmp(l, name, nl) == 0;
}

/* A header value without its surrounding OWS. */
static void trim(const char **v, size_t *n)
{
	while (*n > 0 && (**v == ' ' || **v == '\t')) {
		(*v)++;
		(*n)--;
	}
	while (*n > 0 && ((*v)[*n - 1] == ' ' || (*v)[*n - 1] == '\t'))
		(*n)--;
}

/*
 * Content-Length, Transfer-Encoding and Upgrade: where the body ends and the next
 * request head begins. Anything two servers could read two ways is MALFORMED: two
 * lengths, a length that is not digits, a coding other than exactly "chunked", both.
 */
static int framing_header(struct http_req *r, const char *l, size_t nl, const char *v,
			  size_t n)
{
	uint64_t len = 0;

	trim(&v, &n);
	if (name_is(l, nl, "upgrade")) {
		r->upgrade = true;
	} else if (name_is(l, nl, "transfer-encoding")) {
		if (r->chunked || n != 7 || strncasecmp(v, "chunked", 7) != 0 || r->has_clen)
			return GW_PARSE_MALFORMED;
		r->chunked = true;
	} else if (name_is(l, nl, "content-length")) {
		if (r->has_clen || r->chunked || n == 0 || n > 15)
			return GW_PARSE_MALFORMED;
		for (size_t i = 0; i < n; i++) {
			if (v[i] < '0' || v[i] > '9')
				return GW_PARSE_MALFORMED;
			len = len * 10 + (uint64_t)(v[i] - '0');
		}
		r->has_clen = true;
		r->clen = len;
	}
	return GW_PARSE_OK;
}

static int header_lines(struct http_req *r, const char *p, size_t end, size_t off)
{
	const char *l, *colon;
	size_t n;
	int hosts = 0, ret;

	while (next_line(p, end, &off, &l, &n) && n > 0) {
		/* obs-fold and "Name :" are both request-smuggling material (RFC 9112 5). */
		if (l[0] == ' ' || l[0] == '\t')
			return GW_PARSE_MALFORMED;
		colon = memchr(l, ':', n);
		if (!colon || colon == l || colon[-1] == ' ' || colon[-1] == '\t')
			return GW_PARSE_MALFORMED;
		ret = framing_header(r, l, (size_t)(colon - l), colon + 1,
				     (size_t)(l + n - colon - 1));
		if (ret != GW_PARSE_OK)
			return ret;
		if (colon - l != 4 || strncasecmp(l, "host", 4) != 0)
			continue;
		if (++hosts > 1)
			return GW_PARSE_MALFORMED;
		ret = host_header(r, colon + 1, (size_t)(l + n - colon - 1));
		if (ret != GW_PARSE_OK)
			return ret;
	}
	return GW_PARSE_OK;
}

int http_req_parse(const uint8_t *p, size_t n, struct http_req *out)
{
	const char *s = (const char *)p, *l;
	size_t end, off = 0, ll;
	int ret;

	if (!out || (!p && n > 0))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return GW_PARSE_NEED_MORE;
	/* The h2 preface looks like a request line; hand it to h2_req_parse. */
	if (h2_is_preface(p, n))
		return GW_PARSE_NOT_MINE;
	ret = method_check(p, n);
	if (ret != GW_PARSE_OK)
		return ret;
	end = head_end(p, n < HTTP_HEAD_MAX ? n : HTTP_HEAD_MAX);
	if (end == 0)
		return n >= HTTP_HEAD_MAX ? GW_PARSE_TOO_BIG : GW_PARSE_NEED_MORE;
	if (!next_line(s, end, &off, &l, &ll))
		return GW_PARSE_MALFORMED;
	ret = request_line(out, l, ll);
	if (ret == GW_PARSE_OK)
		ret = header_lines(out, s, end, off);
	if (ret != GW_PARSE_OK) {
		memset(out, 0, sizeof(*out));
		return ret;
	}
	out->head_len = end;
	return GW_PARSE_OK;
}

/* ---- HTTP/2 cleartext ------------------------------------------------------- */

#define H2_FRAME_HDR 9
#define H2_FRAME_MAX 16384          /* SETTINGS_MAX_FRAME_SIZE default */
#define H2_STREAM_MAX (2 * H2_HEADERS_MAX)
#define H2_DATA 0x0
#define H2_HEADERS 0x1
#define H2_PUSH_PROMISE 0x5
#define H2_CONTINUATION 0x9
#define H2_END_HEADERS 0x4
#define H2_PADDED 0x8
#define H2_PRIORITY 0x20

struct h2_frame {
	size_t len;
	uint8_t type;
	uint8_t flags;
	uint32_t sid;
	const uint8_t *payload;
};

/* Reads the frame at p[off..). Returns OK, NEED_MORE (*need set) or a failure. */
static int h2_frame_at(const uint8_t *p, size_t n, size_t off, struct h2_frame *f,
		       size_t *need)
{
	if (n - off < H2_FRAME_HDR) {
		*need = off + H2_FRAME_HDR;
		return GW_PARSE_NEED_MORE;
	}
	f->len = (size_t)p[off] << 16 | (size_t)p[off + 1] << 8 | p[off + 2];
	f->type = p[off + 3];
	f->flags = p[off + 4];
	f->sid = ((uint32_t)p[off + 5] << 24 | (uint32_t)p[off + 6] << 16 |
		  (uint32_t)p[off + 7] << 8 | p[off + 8]) & 0x7fffffffu;
	if (f->len > H2_FRAME_MAX)
		return GW_PARSE_MALFORMED;
	if (off + H2_FRAME_HDR + f->len > H2_STREAM_MAX)
		return GW_PARSE_TOO_BIG;
	if (n - off - H2_FRAME_HDR < f->len) {
		*need = off + H2_FRAME_HDR + f->len;
		return GW_PARSE_NEED_MORE;
	}
	f->payload = p + off + H2_FRAME_HDR;
	return GW_PARSE_OK;
}

/* The header block fragment of a HEADERS frame, without padding and priority. */
static int h2_headers_fragment(const struct h2_frame *f, const uint8_t **frag, size_t *len)
{
	size_t skip = 0, pad = 0;

	if (f->sid == 0)
		return GW_PARSE_MALFORMED;
	if (f->flags & H2_PADDED) {
		if (f->len < 1)
			return GW_PARSE_MALFORMED;
		pad = f->payload[0];
		skip = 1;
	}
	if (f->flags & H2_PRIORITY)
		skip += 5;
	if (skip + pad > f->len)
		return GW_PARSE_MALFORMED;
	*frag = f->payload + skip;
	*len = f->len - skip - pad;
	return GW_PARSE_OK;
}

struct h2_block {
	uint8_t buf[H2_HEADERS_MAX];
	size_t len;
};

static int block_add(struct h2_block *b, const uint8_t *p, size_t n)
{
	if (n > sizeof(b->buf) - b->len)
		return GW_PARSE_TOO_BIG;
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	return GW_PARSE_OK;
}

/* Walks the frames up to the end of the first header block, collecting it. */
static int h2_collect(const uint8_t *p, size_t n, struct h2_block *b, struct h2_req *r,
		      size_t *need)
{
	size_t off = H2_PREFACE_LEN;
	struct h2_frame f;
	const uint8_t *frag;
	size_t flen;
	int ret;

	for (;;) {
		ret = h2_frame_at(p, n, off, &f, need);
		if (ret != GW_PARSE_OK)
			return ret;
		off += H2_FRAME_HDR + f.len;
		if (r->stream_id == 0) {
			if (f.type == H2_DATA || f.type == H2_CONTINUATION ||
			    f.type == H2_PUSH_PROMISE)
				return GW_PARSE_MALFORMED;
			if (f.type != H2_HEADERS)
				continue;   /* SETTINGS, WINDOW_UPDATE, PING, unknown: skip */
			ret = h2_headers_fragment(&f, &frag, &flen);
			r->stream_id = f.sid;
		} else {
			/* RFC 9113 6.10: only CONTINUATIONs of that stream may follow. */
			if (f.type != H2_CONTINUATION || f.sid != r->stream_id)
				return GW_PARSE_MALFORMED;
			frag = f.payload;
			flen = f.len;
			ret = GW_PARSE_OK;
		}
		if (ret == GW_PARSE_OK)
			ret = block_add(b, frag, flen);
		if (ret != GW_PARSE_OK || (f.flags & H2_END_HEADERS)) {
			r->consumed = off;
			return ret;
		}
	}
}

#ifdef SANDGATE_HAVE_NGHTTP2
static void h2_copy(char *dst, size_t cap, const uint8_t *v, size_t n, bool *cut)
{
	if (n >= cap) {
		n = cap - 1;
		if (cut)
			*cut = true;
	}
	memcpy(dst, v, n);
	dst[n] = '\0';
}

/* Keeps the pseudo-headers we report; "host" stands in for a missing :authority. */
static int h2_take(struct h2_req *r, const nghttp2_nv *nv, bool *host_seen)
{
	const char *name = (const char *)nv->name;

	if (nv->namelen == 10 && memcmp(name, ":authority", 10) == 0) {
		if (r->has_authority && !*host_seen)
			return GW_PARSE_MALFORMED;
		*host_seen = false;
		r->has_authority = parse_authority((const char *)nv->value, nv->valuelen,
						   r->authority, &r->port);
		return r->has_authority ? GW_PARSE_OK : GW_PARSE_MALFORMED;
	}
	if (nv->namelen == 4 && memcmp(name, "host", 4) == 0 && !r->has_authority) {
		*host_seen = true;
		r->has_authority = parse_authority((const char *)nv->value, nv->valuelen,
						   r->authority, &r->port);
		return r->has_authority ? GW_PARSE_OK : GW_PARSE_MALFORMED;
	}
	if (nv->namelen == 7 && memcmp(name, ":method", 7) == 0)
		h2_copy(r->method, sizeof(r->method), nv->value, nv->valuelen, NULL);
	else if (nv->namelen == 5 && memcmp(name, ":path", 5) == 0)
		h2_copy(r->path, sizeof(r->path), nv->value, nv->valuelen, &r->path_truncated);
	return GW_PARSE_OK;
}

static int h2_inflate(const struct h2_block *b, struct h2_req *r)
{
	nghttp2_hd_inflater *inf = NULL;
	const uint8_t *in = b->buf;
	size_t left = b->len;
	bool host_seen = false;
	int ret = GW_PARSE_OK;

	if (nghttp2_hd_inflate_new(&inf) != 0)
		return -ENOMEM;
	for (;;) {
		nghttp2_nv nv;
		int flags = 0;
		ssize_t rv = nghttp2_hd_inflate_hd2(inf, &nv, &flags, in, left, 1);

		if (rv < 0) {
			ret = rv == NGHTTP2_ERR_NOMEM ? -ENOMEM : GW_PARSE_MALFORMED;
			break;
		}
		in += rv;
		left -= (size_t)rv;
		if ((flags & NGHTTP2_HD_INFLATE_EMIT) && ret == GW_PARSE_OK)
			ret = h2_take(r, &nv, &host_seen);
		if (flags & NGHTTP2_HD_INFLATE_FINAL)
			break;
		if (rv == 0 && !(flags & NGHTTP2_HD_INFLATE_EMIT)) {
			ret = GW_PARSE_MALFORMED;   /* no progress: truncated block */
			break;
		}
	}
	nghttp2_hd_inflate_del(inf);
	r->decoded = ret == GW_PARSE_OK;
	return ret;
}
#endif

int h2_req_parse(const uint8_t *p, size_t n, struct h2_req *out, size_t *need)
{
	struct h2_block b;
	size_t dummy;
	int ret;

	if (!out || (!p && n > 0))
		return -EINVAL;
	if (!need)
		need = &dummy;
	memset(out, 0, sizeof(*out));
	if (!h2_is_preface(p, n))
		return GW_PARSE_NOT_MINE;
	if (n < H2_PREFACE_LEN) {
		*need = H2_PREFACE_LEN;
		return GW_PARSE_NEED_MORE;
	}
	b.len = 0;
	ret = h2_collect(p, n, &b, out, need);
#ifdef SANDGATE_HAVE_NGHTTP2
	if (ret == GW_PARSE_OK)
		ret = h2_inflate(&b, out);
#endif
	if (ret != GW_PARSE_OK) {
		size_t keep = *need;

		memset(out, 0, sizeof(*out));
		*need = keep;
	}
	return ret;
}
