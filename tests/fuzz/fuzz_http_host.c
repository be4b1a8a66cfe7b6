/*
 * libFuzzer target for the HTTP/1 request-head parser and the HTTP/2 cleartext
 * parser (HPACK input when built with nghttp2). Inputs that do not start with the
 * h2 preface are also tried behind one, so the frame walker sees them. The input is
 * also followed as a keep-alive HTTP/1 stream (http_follow_*) in pieces of a size its
 * first byte picks, as the gateway feeds segments.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gateway/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The follower over data, fed piece by piece; unfinished heads are given again. */
static void follow(const uint8_t *data, size_t size)
{
	static const uint8_t first[] = "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n";
	struct http_follow *f;
	struct http_req r;
	size_t piece = size ? (size_t)(data[0] % 64) + 1 : 1, off = 0, lim, start, used;
	int ret = GW_PARSE_NEED_MORE;

	if (http_req_parse(first, sizeof(first) - 1, &r) != GW_PARSE_OK ||
	    http_follow_new(&r, &f) != 0)
		return;
	for (lim = 0; off < size && lim < size; ) {
		lim = lim + piece < size ? lim + piece : size;
		do {
			ret = http_follow_feed(f, data + off, lim - off, &start, &used, &r);
			off += used;
		} while (ret == GW_PARSE_OK && off < lim);
		if (ret != GW_PARSE_OK && ret != GW_PARSE_NEED_MORE)
			break;
	}
	http_follow_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[H2_PREFACE_LEN + 2 * H2_HEADERS_MAX];
	struct http_req r;
	struct h2_req h;
	size_t need;

	follow(data, size);
	(void)http_req_parse(data, size, &r);
	(void)h2_req_parse(data, size, &h, &need);
	if (size <= sizeof(buf) - H2_PREFACE_LEN && !h2_is_preface(data, size)) {
		memcpy(buf, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", H2_PREFACE_LEN);
		memcpy(buf + H2_PREFACE_LEN, data, size);
		(void)h2_req_parse(buf, size + H2_PREFACE_LEN, &h, &need);
	}
	return 0;
}
