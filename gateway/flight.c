/*
 * The first flight held until it is read (docs/gateway.md "First flight"). A client
 * segment of a flow whose verdict is not in the kernel is let out only when every byte
 * in it was read and allowed, and only in order: the server gets exactly the bytes the
 * decision was made on, starting at the stream's origin (the SYN's sequence number + 1).
 *
 *   - Bytes are read in order from the origin. A segment after a gap is dropped unread
 *     (the client sends it again); one that overlaps what was read must carry the same
 *     bytes, else the flow is refused (first_flight_inconsistent): two versions of one
 *     byte are what a server and a gateway could read differently.
 *   - Until the first flight (ClientHello, HTTP/1 request head, ...) is complete and
 *     judged, no segment with payload leaves: they are dropped, and TCP sends them
 *     again; the bytes are kept here. Then the held range is let out as the client
 *     retransmits it, compared byte by byte, in order, and only when all of the first
 *     flight went out does the verdict go to the kernel (f->committed).
 *   - Cleartext HTTP/1 is never committed: every request head is read and judged
 *     (bodies skipped by their framing), so keep-alive requests to another Host are
 *     refused too.
 *   - A flow whose origin is unknown (its SYN was not seen) is never read on a guess.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/flight.h"
#include "gateway/parse.h"

#define OFF_BAD ((size_t)1 << 31)   /* offsets this far are before the origin (wrapped) */
#define FOLLOW_MAX (128 * 1024)

static void set_parse(struct flow *f, const char *what, size_t flight_end)
{
	f->parse = what;
	f->flight_end = flight_end;
}

static bool tls_read(struct flow *f, int *res)
{
	struct tls_hello h;
	size_t need = 0;

	*res = tls_hello_parse(f->buf, f->len, &h, &need);
	if (*res == GW_PARSE_OK) {
		if (h.has_sni)
			snprintf(f->sni, sizeof(f->sni), "%s", h.sni);
		if (h.n_alpn)
			snprintf(f->alpn, sizeof(f->alpn), "%s", h.alpn[0]);
		f->ech = h.has_ech;
		set_parse(f, "tls", h.stream_len);
	} else if (*res == GW_PARSE_TOO_BIG) {
		set_parse(f, "incomplete", f->len);
	} else if (*res == GW_PARSE_MALFORMED || *res < 0) {
		set_parse(f, "tls_malformed", f->len);
	}
	return *res != GW_PARSE_NEED_MORE && *res != GW_PARSE_NOT_MINE;
}

static bool http_read(struct flow *f, int *res)
{
	struct http_req r;

	*res = http_req_parse(f->buf, f->len, &r);
	if (*res == GW_PARSE_OK) {
		if (r.has_host)
			snprintf(f->http_host, sizeof(f->http_host), "%s", r.host);
		set_parse(f, "http", r.head_len);
		f->requests = 1;
		/* No follower (out of memory): what comes next cannot be read. */
		if (http_follow_new(&r, &f->hf) != 0)
			set_parse(f, "http_malformed", f->len);
	} else if (*res == GW_PARSE_TOO_BIG) {
		set_parse(f, "incomplete", f->len);
	} else if (*res == GW_PARSE_MALFORMED || *res < 0) {
		set_parse(f, "http_malformed", f->len);
	}
	return *res != GW_PARSE_NEED_MORE && *res != GW_PARSE_NOT_MINE;
}

static bool h2_read(struct flow *f, int *res)
{
	struct h2_req r;
	size_t need = 0;

	*res = h2_req_parse(f->buf, f->len, &r, &need);
	if (*res == GW_PARSE_OK) {
		if (r.has_authority)
			snprintf(f->http_host, sizeof(f->http_host), "%s", r.authority);
		set_parse(f, "h2c", r.consumed);
	} else if (*res == GW_PARSE_TOO_BIG) {
		set_parse(f, "incomplete", f->len);
	} else if (*res == GW_PARSE_MALFORMED || *res < 0) {
		set_parse(f, "h2c_malformed", f->len);
	}
	return *res != GW_PARSE_NEED_MORE && *res != GW_PARSE_NOT_MINE;
}

/* The first flight so far (f->buf from the origin): true once it can be judged. */
static bool first_read(struct flow *f)
{
	int rt, rh, r2;

	if (tls_read(f, &rt) || http_read(f, &rh) || h2_read(f, &r2))
		return true;
	if (rt == GW_PARSE_NOT_MINE && rh == GW_PARSE_NOT_MINE && r2 == GW_PARSE_NOT_MINE) {
		set_parse(f, "unknown", f->len);
		return true;
	}
	if (f->len >= FLIGHT_MAX) {
		set_parse(f, "incomplete", f->len);
		return true;
	}
	return false;
}

/* Bytes [off, off + n) against what is held; false when one differs. */
static bool same_bytes(const struct flow *f, size_t off, const uint8_t *p, size_t n)
{
	size_t lo = off > f->buf_off ? off : f->buf_off;
	size_t end = off + n, have = f->buf_off + f->len;
	size_t hi = end < have ? end : have;

	return lo >= hi || memcmp(f->buf + (lo - f->buf_off), p + (lo - off), hi - lo) == 0;
}

/*
 * Appends the part of [off, off + n) past what is held: up to FLIGHT_MAX for the first
 * flight; a followed HTTP/1 stream holds only what was not let out yet (a head in
 * the making, one GSO packet), up to FOLLOW_MAX.
 */
static int hold_more(struct flow *f, size_t off, const uint8_t *p, size_t n)
{
	size_t have = f->buf_off + f->len, end = off + n;

	if (end <= have)
		return 0;
	return flow_buf_append(f, p + (have - off), end - have,
			       f->hf ? FOLLOW_MAX : FLIGHT_MAX);
}

/* Drops held bytes before pass_hi that no reader needs any more. */
static void trim(struct flow *f)
{
	size_t cut;

	if (!f->hf || f->pass_hi <= f->buf_off)
		return;
	cut = f->pass_hi - f->buf_off;
	if (cut > f->len)
		cut = f->len;
	memmove(f->buf, f->buf + cut, f->len - cut);
	f->len -= cut;
	f->buf_off += cut;
}

/* Judges the first flight once it is read; false when the flow is refused. */
static bool first_judge(struct flow *f, const struct flight_judge *j)
{
	if (!j->judge(j->ctx, f))
		return false;
	f->rd = f->flight_end;
	/* TLS and the rest: what follows the first flight is not read (end to end). */
	f->appr_end = f->hf ? f->flight_end : SIZE_MAX;
	return true;
}

/*
 * What cannot be read (why) is judged as such: refused when enforcing; when the
 * judge lets it go (report mode: would_block) the flow is no longer read at all.
 */
static bool give_up(struct flow *f, const char *why, const struct flight_judge *j)
{
	f->parse = why;
	if (f->decided)
		f->rerecord = true;
	if (!j->judge(j->ctx, f))
		return false;
	f->committed = true;
	return true;
}

static enum flight_act refuse(struct flow *f, const char *why, const struct flight_judge *j)
{
	return give_up(f, why, j) ? FLIGHT_PASS : FLIGHT_BLOCK;
}

/* The next request heads of a followed HTTP/1 stream, as far as they are held. */
static bool follow(struct flow *f, const struct flight_judge *j)
{
	struct http_req r;
	size_t start, used;
	int ret;

	for (;;) {
		size_t at = f->rd - f->buf_off, n = f->len - at;
		char prev[HTTP_HOST_MAX];

		ret = http_follow_feed(f->hf, f->buf + at, n, &start, &used, &r);
		if (ret == GW_PARSE_NEED_MORE) {
			f->rd += used;
			f->appr_end = f->rd;
			/* A head that will not fit what is held cannot be read. */
			if (used < n && n - used >= HTTP_HEAD_MAX)
				ret = GW_PARSE_TOO_BIG;
			else
				return true;
		}
		if (ret != GW_PARSE_OK)
			return give_up(f, ret == GW_PARSE_TOO_BIG ? "incomplete" : "http_malformed",
				       j);
		f->requests++;
		snprintf(prev, sizeof(prev), "%s", f->http_host);
		snprintf(f->http_host, sizeof(f->http_host), "%s", r.has_host ? r.host : "");
		/* The same Host as before was judged already (its binding may have expired
		 * since: the connection is the same). Another one is judged now. */
		if (strcmp(prev, f->http_host) != 0) {
			f->rerecord = true;
			if (!j->judge(j->ctx, f))
				return false;
		}
		f->rd += used;
		f->appr_end = f->rd;
	}
}

/* Reads what is held past f->rd; false when the flow is refused. */
static bool read_held(struct flow *f, const struct flight_judge *j)
{
	if (!f->decided) {
		if (!first_read(f))
			return true;
		if (!first_judge(f, j))
			return false;
	}
	if (f->hf && f->rd < f->buf_off + f->len)
		return follow(f, j);
	return true;
}

/* Whether [off, end) may leave now, and what then follows. */
static enum flight_act let_out(struct flow *f, size_t off, size_t end)
{
	if (end <= f->pass_hi)
		return FLIGHT_PASS;            /* a retransmission of what went out */
	if (off > f->pass_hi || end > f->appr_end)
		return FLIGHT_HOLD;            /* not in order, or not all of it allowed */
	f->pass_hi = end;
	trim(f);
	if (!f->hf && f->pass_hi >= f->flight_end)
		f->committed = true;
	return FLIGHT_PASS;
}

const char *gw_flight_unfinished(const struct flow *f)
{
	if (!f->base_set)
		return "no_origin";   /* nothing could be read: never allowed as no_data */
	return f->len ? "incomplete" : "no_data";
}

enum flight_act gw_flight_segment(struct flow *f, const struct gw_pkt *p,
				  const struct flight_judge *j)
{
	size_t off, end;

	/*
	 * Urgent data: a server that does not read it inline (the default: nginx, any
	 * plain recv()) takes the byte at the urgent pointer out of the stream, so it reads
	 * other bytes than were read here. The pointer may also come on an empty segment
	 * and point at bytes still to come. Until 2026-12-03 it passed: an unprivileged
	 * send(MSG_OOB) of the '2' of "Content-Length: 92" made the server read a body of 9
	 * and then a request to a refused Host that was read here as the body
	 * (t_gateway_raw.sh). No client of a name-decided protocol sends it: refused.
	 */
	if (p->tcp_flags & PKT_TCP_URG)
		return refuse(f, "first_flight_inconsistent", j);
	if (p->tcp_flags & PKT_TCP_SYN) {
		/* Only a plain SYN is where a server starts counting: it drops or challenges a
		 * SYN-ACK, SYN-FIN or SYN-RST from the client, and a SYN-ACK's data is not
		 * taken off as Fast Open data is. None of them is let out. */
		if ((p->tcp_flags & (PKT_TCP_ACK | PKT_TCP_FIN | PKT_TCP_RST)) || p->payload_len)
			return FLIGHT_HOLD;
		/* The origin: what the server will count from. (Data on a SYN never gets
		 * here: the caller strips it.) Another origin once bytes were read would
		 * make two streams of one flow. */
		if (f->base_set && f->base != p->seq + 1 && (f->len || f->pass_hi || f->decided))
			return refuse(f, "first_flight_inconsistent", j);
		/* Nor does one before: the server keeps the first SYN it answered and
		 * challenges a SYN with another ISN in the connection. Until 2026-12-03 such a
		 * SYN moved the origin here: a hello with an allowed SNI at the second origin
		 * was read, allowed and committed (the server queued it out of order), and a
		 * hello with a refused SNI at the server's origin then went out in the kernel
		 * (t_gateway_raw.sh, 212 bytes at the upstream). The first origin stays; the
		 * SYN is dropped (a new connection on the tuple gets through once the flow is
		 * retired at the old conntrack entry's end, as in tcp_flight). */
		if (f->base_set && f->base != p->seq + 1)
			return FLIGHT_HOLD;
		f->base = p->seq + 1;
		f->base_set = true;
		return FLIGHT_PASS;
	}
	if (p->payload_len == 0)
		return FLIGHT_PASS;            /* no byte to read: ACK, FIN, RST */
	/* Data without the ACK flag: a server drops it (RFC 9293 3.10.7.4), so it is not
	 * what the server reads. Until 2026-12-03 it was read: an allowed hello in such a
	 * segment was allowed and committed, and the refused hello a raw sender then put at
	 * the same place went out unread (t_gateway_raw.sh, 107 bytes). Not read, not let
	 * out; every TCP sends its data with ACK. */
	if (!(p->tcp_flags & PKT_TCP_ACK))
		return FLIGHT_HOLD;
	if (!f->base_set)
		return refuse(f, "no_origin", j);
	off = (uint32_t)(p->seq - f->base);
	if (off >= OFF_BAD)
		return FLIGHT_HOLD;            /* before the origin: nothing a server takes */
	end = off + p->payload_len;
	if (off > f->buf_off + f->len)
		return FLIGHT_HOLD;            /* after a gap: read when it comes in order */
	if (!same_bytes(f, off, p->payload, p->payload_len))
		return refuse(f, "first_flight_inconsistent", j);
	/* Once the first flight is judged (not HTTP/1), nothing more is read: the held
	 * flight is only compared. */
	if ((!f->decided || f->hf) && hold_more(f, off, p->payload, p->payload_len) != 0)
		return refuse(f, "no_memory", j);
	/* Held and not complete yet: what a decision at the flow's end must say. */
	if (!f->decided)
		f->parse = "incomplete";
	if (!read_held(f, j))
		return FLIGHT_BLOCK;
	if (f->committed)
		return FLIGHT_PASS;            /* given up on reading (report mode) */
	return let_out(f, off, end);
}
