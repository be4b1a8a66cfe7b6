/*
 * HTTP/1.x Host and HTTP/2 cleartext tests. Real bytes: a curl 7.88 GET and a curl
 * --http2-prior-knowledge request captured at a local listener
 * (tests/data/parsers/http_curl_get.bin, h2c_curl_prior.bin).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/parse.h"

struct blob {
	uint8_t p[4096];
	size_t n;
};

static void load(const char *name, struct blob *b)
{
	const char *dir = getenv("SANDGATE_TESTDATA");
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/parsers/%s", dir ? dir : "tests/data", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	b->n = fread(b->p, 1, sizeof(b->p), f);
	fclose(f);
	assert_true(b->n > 0);
}

static int parse_str(const char *s, struct http_req *r)
{
	return http_req_parse((const uint8_t *)s, strlen(s), r);
}

static void test_curl_get(void **state)
{
	struct blob b;
	struct http_req r;

	(void)state;
	load("http_curl_get.bin", &b);
	assert_int_equal(http_req_parse(b.p, b.n, &r), GW_PARSE_OK);
	assert_string_equal(r.method, "GET");
	assert_true(r.has_host);
	assert_string_equal(r.host, "www.example.test");
	assert_int_equal(r.port, 47004);
	assert_string_equal(r.path, "/path?q=1");
	assert_int_equal(r.version_minor, 1);
	assert_int_equal(r.head_len, b.n);
	for (size_t i = 0; i < b.n; i++)
		assert_int_equal(http_req_parse(b.p, i, &r), GW_PARSE_NEED_MORE);
}

static void test_forms(void **state)
{
	struct http_req r;

	(void)state;
	assert_int_equal(parse_str("GET http://user:pw@A.test:8080/x?y HTTP/1.1\r\n"
				   "Host: b.test\r\n\r\n", &r), GW_PARSE_OK);
	assert_true(r.absolute_form);
	assert_string_equal(r.host, "a.test");
	assert_int_equal(r.port, 8080);
	assert_true(r.host_mismatch);
	assert_string_equal(r.path, "/x?y");
	assert_int_equal(parse_str("CONNECT c.test:443 HTTP/1.1\r\nHost: c.test:443\r\n\r\n", &r),
			 GW_PARSE_OK);
	assert_string_equal(r.host, "c.test");
	assert_false(r.host_mismatch);
	assert_int_equal(parse_str("GET / HTTP/1.1\nhOsT:\t[2001:DB8::1]:81 \n\n", &r), GW_PARSE_OK);
	assert_string_equal(r.host, "2001:db8::1");
	assert_int_equal(r.port, 81);
	assert_int_equal(parse_str("GET / HTTP/1.0\r\nAccept: */*\r\n\r\n", &r), GW_PARSE_OK);
	assert_false(r.has_host);
	assert_int_equal(parse_str("OPTIONS * HTTP/1.1\r\nHost: d.test\r\n\r\n", &r), GW_PARSE_OK);
	assert_string_equal(r.host, "d.test");
}

static void test_malformed(void **state)
{
	struct http_req r;
	const char *bad[] = {
		"GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
		"GET / HTTP/1.1\r\nHost : a.test\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\r\n b\r\nHost: a.test\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a.test:99999\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a b.test\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a:b:c\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: [::1\r\n\r\n",
		"GET / HTTP/2.0\r\n\r\n",
		"GET /\r\n\r\n",
		"GET x HTTP/1.1\r\n\r\n",
		"GET http://a.test@/ HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_str(bad[i], &r), GW_PARSE_MALFORMED);
	assert_int_equal(parse_str("\x16\x03\x01\x02\x00", &r), GW_PARSE_NOT_MINE);
	assert_int_equal(parse_str(" GET / HTTP/1.1\r\n\r\n", &r), GW_PARSE_NOT_MINE);
	assert_int_equal(parse_str("get / HTTP/1.1\r\n\r\n", &r), GW_PARSE_NOT_MINE);
	assert_int_equal(parse_str("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", &r), GW_PARSE_NOT_MINE);
	assert_int_equal(parse_str("GE", &r), GW_PARSE_NEED_MORE);
}

static void test_too_big(void **state)
{
	static uint8_t big[HTTP_HEAD_MAX + 100];
	struct http_req r;

	(void)state;
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	assert_int_equal(http_req_parse(big, sizeof(big), &r), GW_PARSE_TOO_BIG);
	assert_int_equal(http_req_parse(big, HTTP_HEAD_MAX - 1, &r), GW_PARSE_NEED_MORE);
}

static void test_h2c(void **state)
{
	struct blob b;
	struct h2_req r;
	size_t need = 0;
	int ret;

	(void)state;
	load("h2c_curl_prior.bin", &b);
	assert_true(h2_is_preface(b.p, b.n));
	assert_int_equal(h2_req_parse(b.p, b.n, &r, &need), GW_PARSE_OK);
	assert_int_equal(r.stream_id, 1);
	assert_int_equal(r.consumed, b.n);
#ifdef SANDGATE_HAVE_NGHTTP2
	assert_true(r.decoded);
	assert_string_equal(r.authority, "h2.example.test");
	assert_int_equal(r.port, 47006);
	assert_string_equal(r.path, "/x/y");
	assert_string_equal(r.method, "GET");
#else
	assert_false(r.decoded);
#endif
	for (size_t i = 0; i < b.n; i++) {
		ret = h2_req_parse(b.p, i, &r, &need);
		assert_int_equal(ret, GW_PARSE_NEED_MORE);
		assert_true(need > i && need <= b.n);
	}
	/* DATA before HEADERS, and an oversized frame length. */
	b.p[24 + 3] = 0x00;
	assert_int_equal(h2_req_parse(b.p, b.n, &r, &need), GW_PARSE_MALFORMED);
	b.p[24 + 3] = 0x04;
	b.p[24] = 0xff;
	assert_int_equal(h2_req_parse(b.p, b.n, &r, &need), GW_PARSE_MALFORMED);
	assert_int_equal(h2_req_parse((const uint8_t *)"GET / HTTP/1.1\r\n", 16, &r, NULL),
			 GW_PARSE_NOT_MINE);
}

/* Every byte changed at every offset: parsers return a result, never crash. */
static void test_h2c_mutations(void **state)
{
	struct blob b;
	struct h2_req r;
	int ret;

	(void)state;
	load("h2c_curl_prior.bin", &b);
	for (size_t i = 24; i < b.n; i++) {
		uint8_t saved = b.p[i];

		for (unsigned v = 0; v < 256; v += 17) {
			b.p[i] = (uint8_t)v;
			ret = h2_req_parse(b.p, b.n, &r, NULL);
			assert_true(ret >= GW_PARSE_OK && ret <= GW_PARSE_TOO_BIG);
		}
		b.p[i] = saved;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_curl_get),
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_h2c),
		cmocka_unit_test(test_h2c_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
