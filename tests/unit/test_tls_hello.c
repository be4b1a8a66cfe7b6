/*
 * ClientHello parser tests on real hellos captured from curl 7.88 and OpenSSL 3.0
 * s_client (tests/data/parsers/tls_*.bin), re-split into records and segments,
 * truncated at every length and with every length field broken.
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
	uint8_t *p;
	size_t n;
};

static struct blob load(const char *name)
{
	const char *dir = getenv("SANDGATE_TESTDATA");
	char path[512];
	struct blob b = { NULL, 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/parsers/%s", dir ? dir : "tests/data", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	b.p = malloc(TLS_STREAM_MAX * 2);
	assert_non_null(b.p);
	b.n = fread(b.p, 1, TLS_STREAM_MAX * 2, f);
	fclose(f);
	assert_true(b.n > 0);
	return b;
}

static void put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Re-frames a single-record hello into records carrying at most chunk bytes each. */
static struct blob rerecord(const struct blob *in, size_t chunk)
{
	size_t hs = in->n - 5, off = 0;
	struct blob b = { malloc(in->n * 6 + 64), 0 };

	assert_non_null(b.p);
	while (off < hs) {
		size_t k = hs - off < chunk ? hs - off : chunk;

		b.p[b.n] = 0x16;
		b.p[b.n + 1] = 0x03;
		b.p[b.n + 2] = 0x01;
		put16(b.p + b.n + 3, k);
		memcpy(b.p + b.n + 5, in->p + 5 + off, k);
		b.n += 5 + k;
		off += k;
	}
	return b;
}

/*
 * Appends an extension at the end of a single-record hello and fixes the record,
 * handshake and extensions lengths. Assumes the hello has extensions.
 */
static struct blob add_ext(const struct blob *in, uint16_t type, const uint8_t *d, size_t n)
{
	struct blob b = { malloc(in->n + n + 4), in->n + n + 4 };
	size_t sid, cs, comp, ext_off, hs_len;

	assert_non_null(b.p);
	memcpy(b.p, in->p, in->n);
	put16(b.p + in->n, type);
	put16(b.p + in->n + 2, n);
	memcpy(b.p + in->n + 4, d, n);
	put16(b.p + 3, b.n - 5);
	hs_len = b.n - 9;
	b.p[6] = (uint8_t)(hs_len >> 16);
	b.p[7] = (uint8_t)(hs_len >> 8);
	b.p[8] = (uint8_t)hs_len;
	sid = 9 + 2 + 32;
	cs = sid + 1 + b.p[sid];
	comp = cs + 2 + ((size_t)b.p[cs] << 8 | b.p[cs + 1]);
	ext_off = comp + 1 + b.p[comp];
	put16(b.p + ext_off, b.n - ext_off - 2);
	return b;
}

static void test_curl_hello(void **state)
{
	struct blob b = load("tls_curl_www.bin");
	struct tls_hello h;
	size_t need = 0;

	(void)state;
	assert_int_equal(tls_hello_parse(b.p, b.n, &h, &need), GW_PARSE_OK);
	assert_true(h.has_sni);
	assert_string_equal(h.sni, "www.example.test");
	assert_int_equal(h.n_alpn, 2);
	assert_string_equal(h.alpn[0], "h2");
	assert_string_equal(h.alpn[1], "http/1.1");
	assert_false(h.has_ech);
	assert_int_equal(h.max_version, 0x0304);
	assert_int_equal(h.legacy_version, 0x0303);
	assert_int_equal(h.stream_len, b.n);
	free(b.p);
}

static void test_openssl_hellos(void **state)
{
	struct blob a = load("tls_openssl_alpn.bin"), t = load("tls_openssl_tls12.bin");
	struct blob ns = load("tls_openssl_nosni.bin");
	struct tls_hello h;

	(void)state;
	assert_int_equal(tls_hello_parse(a.p, a.n, &h, NULL), GW_PARSE_OK);
	assert_string_equal(h.sni, "x.example.test");
	assert_int_equal(h.n_alpn, 2);
	assert_int_equal(tls_hello_parse(t.p, t.n, &h, NULL), GW_PARSE_OK);
	assert_string_equal(h.sni, "legacy.example.test");
	assert_int_equal(h.max_version, 0x0303);
	assert_int_equal(h.n_versions, 0);
	assert_int_equal(tls_hello_parse(ns.p, ns.n, &h, NULL), GW_PARSE_OK);
	assert_false(h.has_sni);
	free(a.p);
	free(t.p);
	free(ns.p);
}

/* Every prefix of the stream asks for more, and never for less than it has. */
static void check_prefixes(const struct blob *b, const char *sni)
{
	struct tls_hello h;
	size_t need;

	for (size_t i = 0; i < b->n; i++) {
		need = 0;
		int r = tls_hello_parse(b->p, i, &h, &need);

		if (r == GW_PARSE_OK) {
			/* The hello may end before the last record's end only when complete. */
			assert_string_equal(h.sni, sni);
			continue;
		}
		assert_int_equal(r, GW_PARSE_NEED_MORE);
		assert_true(need > i);
		assert_true(need <= b->n);
	}
	assert_int_equal(tls_hello_parse(b->p, b->n, &h, NULL), GW_PARSE_OK);
	assert_string_equal(h.sni, sni);
}

static void test_segments_and_records(void **state)
{
	struct blob b = load("tls_curl_www.bin");
	size_t chunks[] = { 1, 3, 4, 5, 100, 511 };

	(void)state;
	check_prefixes(&b, "www.example.test");
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct blob r = rerecord(&b, chunks[i]);

		check_prefixes(&r, "www.example.test");
		free(r.p);
	}
	free(b.p);
}

static void test_ech(void **state)
{
	struct blob b = load("tls_openssl_alpn.bin");
	const uint8_t ech[] = { 0x00, 0x00, 0x01, 0x00, 0x01, 0x07, 0x00, 0x00, 0x00 };
	struct blob e = add_ext(&b, 0xfe0d, ech, sizeof(ech));
	struct blob d;
	struct tls_hello h;

	(void)state;
	assert_int_equal(tls_hello_parse(e.p, e.n, &h, NULL), GW_PARSE_OK);
	assert_true(h.has_ech);
	assert_int_equal(h.ech_type, 0);
	assert_string_equal(h.sni, "x.example.test");  /* the outer SNI */
	/* A second ECH extension is refused. */
	d = add_ext(&e, 0xfe0d, ech, sizeof(ech));
	assert_int_equal(tls_hello_parse(d.p, d.n, &h, NULL), GW_PARSE_MALFORMED);
	free(d.p);
	free(e.p);
	free(b.p);
}

static void test_duplicate_sni(void **state)
{
	struct blob b = load("tls_openssl_alpn.bin");
	const uint8_t sni[] = { 0x00, 0x0b, 0x00, 0x00, 0x08, 'e', 'v', 'i', 'l', '.', 't', 's', 't' };
	const uint8_t two[] = { 0x00, 0x16, 0x00, 0x00, 0x08, 'g', 'o', 'o', 'd', '.', 't', 's', 't',
				0x00, 0x00, 0x08, 'e', 'v', 'i', 'l', '.', 't', 's', 't' };
	const uint8_t nul[] = { 0x00, 0x05, 0x00, 0x00, 0x02, 'a', 0x00 };
	struct blob d = add_ext(&b, 0x0000, sni, sizeof(sni));
	struct tls_hello h;

	(void)state;
	assert_int_equal(tls_hello_parse(d.p, d.n, &h, NULL), GW_PARSE_MALFORMED);
	free(d.p);
	/* Two host_names in one extension, and a NUL inside a name (on the no-SNI hello). */
	free(b.p);
	b = load("tls_openssl_nosni.bin");
	d = add_ext(&b, 0x0000, two, sizeof(two));
	assert_int_equal(tls_hello_parse(d.p, d.n, &h, NULL), GW_PARSE_MALFORMED);
	free(d.p);
	d = add_ext(&b, 0x0000, nul, sizeof(nul));
	assert_int_equal(tls_hello_parse(d.p, d.n, &h, NULL), GW_PARSE_MALFORMED);
	free(d.p);
	d = add_ext(&b, 0x0000, sni, sizeof(sni));
	assert_int_equal(tls_hello_parse(d.p, d.n, &h, NULL), GW_PARSE_OK);
	assert_string_equal(h.sni, "evil.tst");
	free(d.p);
	free(b.p);
}

static void test_not_mine(void **state)
{
	const uint8_t http[] = "GET / HTTP/1.1\r\n";
	const uint8_t alert[] = { 0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28 };
	const uint8_t server_hello[] = { 0x16, 0x03, 0x03, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00 };
	const uint8_t sslv2[] = { 0x80, 0x2e, 0x01, 0x00, 0x02 };
	struct tls_hello h;
	size_t need = 0;

	(void)state;
	assert_int_equal(tls_hello_parse(http, sizeof(http) - 1, &h, NULL), GW_PARSE_NOT_MINE);
	assert_int_equal(tls_hello_parse(alert, sizeof(alert), &h, NULL), GW_PARSE_NOT_MINE);
	assert_int_equal(tls_hello_parse(server_hello, sizeof(server_hello), &h, NULL),
			 GW_PARSE_NOT_MINE);
	assert_int_equal(tls_hello_parse(sslv2, sizeof(sslv2), &h, NULL), GW_PARSE_NOT_MINE);
	assert_int_equal(tls_hello_parse(http, 0, &h, &need), GW_PARSE_NEED_MORE);
	assert_int_equal(need, 5);
	assert_int_equal(tls_hello_parse(NULL, 0, NULL, NULL), -22);
}

static void test_bad_lengths(void **state)
{
	struct blob b = load("tls_curl_www.bin");
	struct tls_hello h;
	int r;

	(void)state;
	/* Huge handshake length: beyond the cap. */
	b.p[6] = 0xff;
	assert_int_equal(tls_hello_parse(b.p, b.n, &h, NULL), GW_PARSE_TOO_BIG);
	b.p[6] = 0x00;
	/* Record of length 0, and one past the plaintext maximum. */
	put16(b.p + 3, 0);
	assert_int_equal(tls_hello_parse(b.p, b.n, &h, NULL), GW_PARSE_MALFORMED);
	put16(b.p + 3, 16385);
	assert_int_equal(tls_hello_parse(b.p, b.n, &h, NULL), GW_PARSE_MALFORMED);
	put16(b.p + 3, b.n - 5);
	/* Every single-byte value at every offset: no crash, and an OK result always
	 * reports a name that was in the input (the SNI bytes may have been changed). */
	for (size_t i = 0; i < b.n; i++) {
		uint8_t saved = b.p[i];
		const uint8_t vals[] = { 0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff };

		for (size_t v = 0; v < sizeof(vals); v++) {
			b.p[i] = vals[v];
			r = tls_hello_parse(b.p, b.n, &h, NULL);
			assert_true(r >= GW_PARSE_OK && r <= GW_PARSE_TOO_BIG);
			if (r == GW_PARSE_OK && h.has_sni)
				assert_int_equal(strlen(h.sni), 16);
		}
		b.p[i] = saved;
	}
	free(b.p);
}

/* A hello bigger than the cap, spread over records, is refused, not buffered. */
static void test_too_big_stream(void **state)
{
	uint8_t *p = calloc(1, TLS_STREAM_MAX + 64);
	struct tls_hello h;
	size_t need = 0, off = 0;

	(void)state;
	assert_non_null(p);
	/* 1-byte records: the stream cap is hit before the hello completes. */
	while (off + 6 <= TLS_STREAM_MAX + 64) {
		p[off] = 0x16;
		p[off + 1] = 0x03;
		p[off + 2] = 0x01;
		put16(p + off + 3, 1);
		p[off + 5] = off == 0 ? 0x01 : (off == 6 ? 0x00 : (off == 12 ? 0x3f : 0x00));
		off += 6;
	}
	assert_int_equal(tls_hello_parse(p, off, &h, &need), GW_PARSE_TOO_BIG);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_curl_hello),
		cmocka_unit_test(test_openssl_hellos),
		cmocka_unit_test(test_segments_and_records),
		cmocka_unit_test(test_ech),
		cmocka_unit_test(test_duplicate_sni),
		cmocka_unit_test(test_not_mine),
		cmocka_unit_test(test_bad_lengths),
		cmocka_unit_test(test_too_big_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
