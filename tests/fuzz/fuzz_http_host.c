/*
 * libFuzzer target for the HTTP/1 request-head parser and the HTTP/2 cleartext
 * parser (HPACK input when built with nghttp2). Inputs that do not start with the
 * h2 preface are also tried behind one, so the frame walker sees them.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gateway/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[H2_PREFACE_LEN + 2 * H2_HEADERS_MAX];
	struct http_req r;
	struct h2_req h;
	size_t need;

	(void)http_req_parse(data, size, &r);
	(void)h2_req_parse(data, size, &h, &need);
	if (size <= sizeof(buf) - H2_PREFACE_LEN && !h2_is_preface(data, size)) {
		memcpy(buf, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", H2_PREFACE_LEN);
		memcpy(buf + H2_PREFACE_LEN, data, size);
		(void)h2_req_parse(buf, size + H2_PREFACE_LEN, &h, &need);
	}
	return 0;
}
