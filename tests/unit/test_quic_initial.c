/*
 * QUIC Initial tests. Golden data: the client Initial packet of RFC 9001 Appendix
 * A.2 (QUIC v1) and of RFC 9369 Appendix A.2 (QUIC v2), re-typed as hex in
 * tests/data/parsers/quic_v{1,2}_*.hex, and the RFC 9001 A.1 client keys. Packets
 * spanning several datagrams are built here with the same keys, and checked to
 * reassemble.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "gateway/parse.h"

static const uint8_t rfc_dcid[8] = { 0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08 };

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static size_t load_hex(const char *name, uint8_t *out, size_t cap)
{
	const char *dir = getenv("SANDGATE_TESTDATA");
	char path[512];
	size_t n = 0;
	int c, hi = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/parsers/%s", dir ? dir : "tests/data", name);
	f = fopen(path, "r");
	assert_non_null(f);
	while ((c = fgetc(f)) != EOF) {
		int v = hexval(c);

		if (v < 0)
			continue;
		if (hi < 0) {
			hi = v;
			continue;
		}
		assert_true(n < cap);
		out[n++] = (uint8_t)(hi << 4 | v);
		hi = -1;
	}
	fclose(f);
	return n;
}

static void unhex(const char *s, uint8_t *out)
{
	for (size_t i = 0; s[2 * i]; i++)
		out[i] = (uint8_t)(hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1]));
}

static void test_rfc9001_v1(void **state)
{
	static struct quic_initial q;
	uint8_t pkt[2048], key[16], iv[12], hp[16];
	size_t n = load_hex("quic_v1_rfc9001_a2.hex", pkt, sizeof(pkt)), need = 99;

	(void)state;
	assert_int_equal(n, 1200);
	quic_initial_init(&q);
	assert_int_equal(quic_initial_parse(&q, pkt, n, &need), GW_PARSE_OK);
	/* RFC 9001 A.1: client key, iv, hp derived from DCID 8394c8f03e515708. */
	unhex("1f369613dd76d5467730efcbe3b1a22d", key);
	unhex("fa044b2f42a3fd3b46fb255c", iv);
	unhex("9f50449e04a0e810283a1e9933adedd2", hp);
	assert_memory_equal(q.key, key, 16);
	assert_memory_equal(q.iv, iv, 12);
	assert_memory_equal(q.hp, hp, 16);
	assert_int_equal(q.version, QUIC_V1);
	assert_int_equal(q.dcid_len, 8);
	assert_memory_equal(q.dcid, rfc_dcid, 8);
	assert_true(q.hello.has_sni);
	assert_string_equal(q.hello.sni, "example.com");
	assert_int_equal(q.hello.n_alpn, 1);
	assert_string_equal(q.hello.alpn[0], "alpn");
	assert_int_equal(q.hello.max_version, 0x0304);
}

static void test_rfc9369_v2(void **state)
{
	static struct quic_initial q;
	uint8_t pkt[2048];
	size_t n = load_hex("quic_v2_rfc9369_a2.hex", pkt, sizeof(pkt));

	(void)state;
	assert_int_equal(n, 1200);
	quic_initial_init(&q);
	assert_int_equal(quic_initial_parse(&q, pkt, n, NULL), GW_PARSE_OK);
	assert_int_equal(q.version, QUIC_V2);
	assert_string_equal(q.hello.sni, "example.com");
}

static void test_truncated_and_flipped(void **state)
{
	static struct quic_initial q;
	uint8_t pkt[2048];
	size_t n = load_hex("quic_v1_rfc9001_a2.hex", pkt, sizeof(pkt));
	int r;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		quic_initial_init(&q);
		r = quic_initial_parse(&q, pkt, i, NULL);
		assert_true(r == GW_PARSE_NOT_MINE || r == GW_PARSE_MALFORMED);
	}
	/* Any changed byte past the header fails authentication (or header checks). */
	for (size_t i = 0; i < n; i += 7) {
		pkt[i] ^= 0x01;
		quic_initial_init(&q);
		r = quic_initial_parse(&q, pkt, n, NULL);
		assert_int_not_equal(r, GW_PARSE_OK);
		pkt[i] ^= 0x01;
	}
	/* Unknown version, short header. */
	pkt[4] = 0x02;
	quic_initial_init(&q);
	assert_int_equal(quic_initial_parse(&q, pkt, n, NULL), GW_PARSE_NOT_MINE);
	pkt[4] = 0x01;
	pkt[0] = 0x40;
	assert_int_equal(quic_initial_parse(&q, pkt, n, NULL), GW_PARSE_NOT_MINE);
}

/* ---- building v1 Initial packets with the RFC keys -------------------------- */

static void seal(const struct quic_initial *k, uint32_t pn, const uint8_t *hdr, size_t hlen,
		 const uint8_t *pt, size_t n, uint8_t *out)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t nonce[12];
	int len = 0;

	assert_non_null(c);
	memcpy(nonce, k->iv, 12);
	for (int i = 0; i < 4; i++)
		nonce[11 - i] ^= (uint8_t)(pn >> (8 * i));
	assert_int_equal(EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, k->key, nonce), 1);
	assert_int_equal(EVP_EncryptUpdate(c, NULL, &len, hdr, (int)hlen), 1);
	assert_int_equal(EVP_EncryptUpdate(c, out, &len, pt, (int)n), 1);
	assert_int_equal(EVP_EncryptFinal_ex(c, out + len, &len), 1);
	assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, out + n), 1);
	EVP_CIPHER_CTX_free(c);
}

static void protect(const struct quic_initial *k, uint8_t *pkt, size_t pn_off)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t mask[16];
	int len = 0;

	assert_non_null(c);
	assert_int_equal(EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, k->hp, NULL), 1);
	assert_int_equal(EVP_EncryptUpdate(c, mask, &len, pkt + pn_off + 4, 16), 1);
	EVP_CIPHER_CTX_free(c);
	pkt[0] ^= mask[0] & 0x0f;
	for (int i = 0; i < 4; i++)
		pkt[pn_off + i] ^= mask[1 + i];
}

/* One v1 Initial packet with 4-byte pn, payload padded to 1000 bytes. */
static size_t build(const struct quic_initial *k, uint32_t pn, const uint8_t *frames,
		    size_t flen, uint8_t *out)
{
	uint8_t pt[1000] = { 0 };
	size_t off = 0, pn_off, plen = sizeof(pt) + 4 + 16;

	assert_true(flen <= sizeof(pt));
	memcpy(pt, frames, flen);
	out[off++] = 0xc3;
	memcpy(out + off, "\x00\x00\x00\x01", 4);
	off += 4;
	out[off++] = 8;
	memcpy(out + off, rfc_dcid, 8);
	off += 8;
	out[off++] = 0;       /* scid */
	out[off++] = 0;       /* token */
	out[off++] = (uint8_t)(0x40 | plen >> 8);
	out[off++] = (uint8_t)plen;
	pn_off = off;
	for (int i = 3; i >= 0; i--)
		out[off++] = (uint8_t)(pn >> (8 * i));
	seal(k, pn, out, off, pt, sizeof(pt), out + off);
	protect(k, out, pn_off);
	return off + sizeof(pt) + 16;
}

static size_t crypto_frame(uint8_t *out, size_t off, const uint8_t *d, size_t n)
{
	size_t o = 0;

	out[o++] = 0x06;
	out[o++] = (uint8_t)(0x40 | off >> 8);
	out[o++] = (uint8_t)off;
	out[o++] = (uint8_t)(0x40 | n >> 8);
	out[o++] = (uint8_t)n;
	memcpy(out + o, d, n);
	return o + n;
}

/* The RFC ClientHello, out of the golden packet's decrypted CRYPTO frame. */
static size_t rfc_hello(uint8_t *out)
{
	static const char *hx =
		"010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e86804fe3a47f06a2b69484c"
		"00000413011302010000c000000010000e00000b6578616d706c652e636f6dff01000100000a"
		"00080006001d0017001800100007000504616c706e000500050100000000003300260024001d"
		"00209370b2c9caa47fbabaf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b0003"
		"020304000d0010000e0403050306030203080408050806002d00020101001c00024001003900"
		"320408ffffffffffffffff05048000ffff07048000ffff0801100104800075300901100f0883"
		"94c8f03e51570806048000ffff";

	unhex(hx, out);
	return strlen(hx) / 2;
}

static void keys(struct quic_initial *k)
{
	uint8_t pkt[2048];
	size_t n = load_hex("quic_v1_rfc9001_a2.hex", pkt, sizeof(pkt));

	quic_initial_init(k);
	assert_int_equal(quic_initial_parse(k, pkt, n, NULL), GW_PARSE_OK);
}

static void test_two_datagrams(void **state)
{
	static struct quic_initial k, q;
	uint8_t hello[512], fr[600], d1[1100], d2[1100];
	size_t hl = rfc_hello(hello), n1, n2, need = 0, half = 100;

	(void)state;
	assert_int_equal(hl, 241);
	keys(&k);
	/* Second half first (reordered datagrams), then the first half plus an ACK. */
	n2 = build(&k, 1, fr, crypto_frame(fr, half, hello + half, hl - half), d2);
	{
		size_t o = 0;

		fr[o++] = 0x02;   /* ACK: largest 0, delay 0, 0 ranges, first range 0 */
		fr[o++] = 0;
		fr[o++] = 0;
		fr[o++] = 0;
		fr[o++] = 0;
		o += crypto_frame(fr + o, 0, hello, half);
		n1 = build(&k, 0, fr, o, d1);
	}
	quic_initial_init(&q);
	assert_int_equal(quic_initial_parse(&q, d2, n2, &need), GW_PARSE_NEED_MORE);
	assert_int_equal(quic_initial_parse(&q, d1, n1, &need), GW_PARSE_OK);
	assert_string_equal(q.hello.sni, "example.com");
	assert_int_equal(q.packets, 2);
	/* In order: the first datagram tells how many bytes are missing. */
	quic_initial_init(&q);
	assert_int_equal(quic_initial_parse(&q, d1, n1, &need), GW_PARSE_NEED_MORE);
	assert_int_equal(need, hl - half);
	/* Coalesced into one datagram, both packets are used. */
	{
		uint8_t both[2200];

		memcpy(both, d1, n1);
		memcpy(both + n1, d2, n2);
		quic_initial_init(&q);
		assert_int_equal(quic_initial_parse(&q, both, n1 + n2, NULL), GW_PARSE_OK);
	}
}

static void test_overlap_and_frames(void **state)
{
	static struct quic_initial k, q;
	uint8_t hello[512], fr[600], d1[1100], d2[1100];
	size_t hl = rfc_hello(hello), n1, n2;

	(void)state;
	keys(&k);
	n1 = build(&k, 0, fr, crypto_frame(fr, 0, hello, 50), d1);
	hello[10] ^= 0xff;   /* the same offset again with other bytes: evasion */
	n2 = build(&k, 1, fr, crypto_frame(fr, 0, hello, hl), d2);
	quic_initial_init(&q);
	assert_int_equal(quic_initial_parse(&q, d1, n1, NULL), GW_PARSE_NEED_MORE);
	assert_int_equal(quic_initial_parse(&q, d2, n2, NULL), GW_PARSE_MALFORMED);
	/* A STREAM frame is not allowed in Initial. */
	fr[0] = 0x08;
	n1 = build(&k, 0, fr, 1, d1);
	quic_initial_init(&q);
	assert_int_equal(quic_initial_parse(&q, d1, n1, NULL), GW_PARSE_MALFORMED);
	/* CRYPTO past the cap. */
	{
		uint8_t big[] = { 0x06, 0x80, 0x01, 0x00, 0x00, 0x01, 0xaa };

		n1 = build(&k, 0, big, sizeof(big), d1);
		quic_initial_init(&q);
		assert_int_equal(quic_initial_parse(&q, d1, n1, NULL), GW_PARSE_TOO_BIG);
	}
	/* A later datagram with another DCID does not join this flow. */
	rfc_hello(hello);
	n1 = build(&k, 0, fr, crypto_frame(fr, 0, hello, 50), d1);
	quic_initial_init(&q);
	assert_int_equal(quic_initial_parse(&q, d1, n1, NULL), GW_PARSE_NEED_MORE);
	d1[6] ^= 1;
	assert_int_equal(quic_initial_parse(&q, d1, n1, NULL), GW_PARSE_MALFORMED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc9001_v1),
		cmocka_unit_test(test_rfc9369_v2),
		cmocka_unit_test(test_truncated_and_flipped),
		cmocka_unit_test(test_two_datagrams),
		cmocka_unit_test(test_overlap_and_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
