/*
 * libFuzzer target for the QUIC Initial parser. Random bytes almost never pass
 * AES-GCM, so an input whose first byte is odd is taken as a decrypted payload
 * instead: it is sealed here into a valid v1 Initial (DCID 8394c8f03e515708 and
 * the RFC 9001 A.1 client keys) so the frame walker and the CRYPTO reassembly are
 * fuzzed too. Even first bytes: the input is one raw datagram, then two halves.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>

#include "gateway/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PT_MAX 1400

/* RFC 9001 Appendix A.1: client key, iv, hp for DCID 8394c8f03e515708. */
static const uint8_t dcid[8] = { 0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08 };
static const uint8_t key[16] = { 0x1f, 0x36, 0x96, 0x13, 0xdd, 0x76, 0xd5, 0x46,
				 0x77, 0x30, 0xef, 0xcb, 0xe3, 0xb1, 0xa2, 0x2d };
static const uint8_t iv[12] = { 0xfa, 0x04, 0x4b, 0x2f, 0x42, 0xa3, 0xfd, 0x3b,
				0x46, 0xfb, 0x25, 0x5c };
static const uint8_t hp[16] = { 0x9f, 0x50, 0x44, 0x9e, 0x04, 0xa0, 0xe8, 0x10,
				0x28, 0x3a, 0x1e, 0x99, 0x33, 0xad, 0xed, 0xd2 };

static int seal(const uint8_t *hdr, size_t hlen, const uint8_t *pt, size_t n, uint8_t *out)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int len = 0, ok;

	if (!c)
		return -1;
	/* Packet number 0: the nonce is the iv itself. */
	ok = EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, iv) == 1 &&
	     EVP_EncryptUpdate(c, NULL, &len, hdr, (int)hlen) == 1 &&
	     EVP_EncryptUpdate(c, out, &len, pt, (int)n) == 1 &&
	     EVP_EncryptFinal_ex(c, out + len, &len) == 1 &&
	     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, out + n) == 1;
	EVP_CIPHER_CTX_free(c);
	return ok ? 0 : -1;
}

static int protect(uint8_t *pkt, size_t pn_off)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t mask[16];
	int len = 0, ok;

	if (!c)
		return -1;
	ok = EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, hp, NULL) == 1 &&
	     EVP_EncryptUpdate(c, mask, &len, pkt + pn_off + 4, 16) == 1;
	EVP_CIPHER_CTX_free(c);
	pkt[0] ^= mask[0] & 0x0f;
	for (int i = 0; i < 4; i++)
		pkt[pn_off + i] ^= mask[1 + i];
	return ok ? 0 : -1;
}

static void fuzz_payload(const uint8_t *data, size_t size)
{
	static uint8_t pt[PT_MAX], pkt[PT_MAX + 64];
	static struct quic_initial q;
	size_t n = size < PT_MAX ? size : PT_MAX, off = 0, plen;

	/* Pad to a size that leaves room for the header protection sample. */
	memset(pt, 0, sizeof(pt));
	memcpy(pt, data, n);
	if (n < 32)
		n = 32;
	plen = n + 4 + 16;
	memcpy(pkt, "\xc3\x00\x00\x00\x01\x08", 6);
	off = 6;
	memcpy(pkt + off, dcid, 8);
	off += 8;
	pkt[off++] = 0;
	pkt[off++] = 0;
	pkt[off++] = (uint8_t)(0x40 | plen >> 8);
	pkt[off++] = (uint8_t)plen;
	memset(pkt + off, 0, 4);
	off += 4;
	if (seal(pkt, off, pt, n, pkt + off) != 0 || protect(pkt, off - 4) != 0)
		return;
	quic_initial_init(&q);
	(void)quic_initial_parse(&q, pkt, off + n + 16, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct quic_initial q;
	size_t need, cut = size / 2;

	if (size > 0 && (data[0] & 1)) {
		fuzz_payload(data + 1, size - 1);
		return 0;
	}
	quic_initial_init(&q);
	(void)quic_initial_parse(&q, data, size, &need);
	quic_initial_init(&q);
	if (quic_initial_parse(&q, data, cut, &need) == GW_PARSE_NEED_MORE)
		(void)quic_initial_parse(&q, data + cut, size - cut, &need);
	return 0;
}
