/*
 * QUIC Initial: the client's first packets are encrypted with keys anyone can derive
 * from the Destination Connection ID (RFC 9001 5.2, RFC 9369 3.3), so the gateway
 * can read the ClientHello and its SNI. Versions 1 and 2, AES-128-GCM with AES-ECB
 * header protection, CRYPTO frames reassembled across the datagrams of one flow.
 */
#include "gateway/parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#define TAG_LEN 16
/* Clients send Initials of 1200..1500 bytes; larger ones are refused (TOO_BIG). */
#define PACKET_MAX 4096
#define TOKEN_MAX 1024
#define SAMPLE_LEN 16
#define FRAME_PADDING 0x00
#define FRAME_PING 0x01
#define FRAME_ACK 0x02
#define FRAME_ACK_ECN 0x03
#define FRAME_CRYPTO 0x06
#define FRAME_CLOSE 0x1c

static const uint8_t salt_v1[20] = {
	0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
	0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a,
};
static const uint8_t salt_v2[20] = {
	0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
	0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9,
};

void quic_initial_init(struct quic_initial *q)
{
	if (q)
		memset(q, 0, sizeof(*q));
}

/* QUIC variable-length integer (RFC 9000 16). */
static bool varint(const uint8_t *p, size_t n, size_t *off, uint64_t *v)
{
	size_t len;

	if (*off >= n)
		return false;
	len = (size_t)1 << (p[*off] >> 6);
	if (n - *off < len)
		return false;
	*v = p[*off] & 0x3f;
	for (size_t i = 1; i < len; i++)
		*v = *v << 8 | p[*off + i];
	*off += len;
	return true;
}

/* HKDF-Expand-Label (RFC 8446 7.1) with an empty context, for outputs <= 32 bytes. */
static int expand_label(const uint8_t prk[32], const char *label, uint8_t *out, size_t len)
{
	uint8_t info[2 + 1 + 64 + 1 + 1];
	uint8_t md[32];
	unsigned mdlen = 0;
	size_t ll = strlen(label), n = 0;

	info[n++] = (uint8_t)(len >> 8);
	info[n++] = (uint8_t)len;
	info[n++] = (uint8_t)(6 + ll);
	memcpy(info + n, "tls13 ", 6);
	memcpy(info + n + 6, label, ll);
	n += 6 + ll;
	info[n++] = 0;          /* empty context */
	info[n++] = 0x01;       /* HKDF-Expand counter of the first (only) block */
	if (!HMAC(EVP_sha256(), prk, 32, info, n, md, &mdlen) || mdlen != 32)
		return -EIO;
	memcpy(out, md, len);
	return 0;
}

static int derive_keys(struct quic_initial *q)
{
	const uint8_t *salt = q->version == QUIC_V2 ? salt_v2 : salt_v1;
	const char *pfx = q->version == QUIC_V2 ? "quicv2 " : "quic ";
	char label[16];
	uint8_t initial[32], client[32];
	unsigned len = 0;
	int ret;

	/* HKDF-Extract is one HMAC keyed with the salt. */
	if (!HMAC(EVP_sha256(), salt, sizeof(salt_v1), q->dcid, q->dcid_len, initial, &len))
		return -EIO;
	ret = expand_label(initial, "client in", client, 32);
	snprintf(label, sizeof(label), "%skey", pfx);
	if (ret == 0)
		ret = expand_label(client, label, q->key, 16);
	snprintf(label, sizeof(label), "%siv", pfx);
	if (ret == 0)
		ret = expand_label(client, label, q->iv, 12);
	snprintf(label, sizeof(label), "%shp", pfx);
	if (ret == 0)
		ret = expand_label(client, label, q->hp, 16);
	q->have_keys = ret == 0;
	return ret;
}

/* mask = AES-128-ECB(hp, sample) (RFC 9001 5.4.3). */
static int hp_mask(const uint8_t hp[16], const uint8_t *sample, uint8_t mask[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int len = 0, ok;

	if (!c)
		return -ENOMEM;
	ok = EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, hp, NULL) == 1 &&
	     EVP_CIPHER_CTX_set_padding(c, 0) == 1 &&
	     EVP_EncryptUpdate(c, mask, &len, sample, SAMPLE_LEN) == 1 && len == SAMPLE_LEN;
	EVP_CIPHER_CTX_free(c);
	return ok ? 0 : -EIO;
}

/*
 * AES-128-GCM open of ct[0..n) with the tag after it, into out.
 * Returns 0, GW_PARSE_MALFORMED when authentication fails, -EIO, -ENOMEM.
 */
static int aead_open(const struct quic_initial *q, uint64_t pn, const uint8_t *aad,
		     size_t aadlen, const uint8_t *ct, size_t n, uint8_t *out)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t nonce[12];
	int len = 0, ret = -EIO;

	if (!c)
		return -ENOMEM;
	memcpy(nonce, q->iv, 12);
	for (int i = 0; i < 8; i++)
		nonce[11 - i] ^= (uint8_t)(pn >> (8 * i));
	if (EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), NULL, NULL, NULL) == 1 &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1 &&
	    EVP_DecryptInit_ex(c, NULL, NULL, q->key, nonce) == 1 &&
	    EVP_DecryptUpdate(c, NULL, &len, aad, (int)aadlen) == 1 &&
	    EVP_DecryptUpdate(c, out, &len, ct, (int)n) == 1 &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, TAG_LEN, (void *)(ct + n)) == 1)
		ret = EVP_DecryptFinal_ex(c, out + len, &len) == 1 ? 0 : GW_PARSE_MALFORMED;
	EVP_CIPHER_CTX_free(c);
	return ret;
}

/* The parts of a long header packet we need. */
struct lh {
	uint32_t version;
	bool initial;
	const uint8_t *dcid, *scid;
	size_t dcid_len, scid_len;
	size_t pn_off;      /* offset of the packet number */
	size_t end;         /* offset just past this packet */
};

static int long_header(const uint8_t *p, size_t n, struct lh *h)
{
	size_t off = 5;
	uint64_t tok, len;

	if (n < 7 || !(p[0] & 0x80))
		return GW_PARSE_NOT_MINE;
	h->version = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
	if (h->version != QUIC_V1 && h->version != QUIC_V2)
		return GW_PARSE_NOT_MINE;
	/* Initial is type 0 in v1 and type 1 in v2 (RFC 9369 3.2). */
	h->initial = ((p[0] >> 4) & 3) == (h->version == QUIC_V2 ? 1 : 0);
	h->dcid_len = p[off++];
	if (h->dcid_len > QUIC_CID_MAX || n - off < h->dcid_len + 1)
		return GW_PARSE_MALFORMED;
	h->dcid = p + off;
	off += h->dcid_len;
	h->scid_len = p[off++];
	if (h->scid_len > QUIC_CID_MAX || n - off < h->scid_len)
		return GW_PARSE_MALFORMED;
	h->scid = p + off;
	off += h->scid_len;
	if (h->initial && (!varint(p, n, &off, &tok) || tok > n - off))
		return GW_PARSE_MALFORMED;
	if (h->initial && tok > TOKEN_MAX)
		return GW_PARSE_TOO_BIG;
	if (h->initial)
		off += (size_t)tok;
	if (!varint(p, n, &off, &len) || len > n - off)
		return GW_PARSE_MALFORMED;
	h->pn_off = off;
	h->end = off + (size_t)len;
	return GW_PARSE_OK;
}

/* Stores CRYPTO data at its offset; the same byte sent twice must not change. */
static int crypto_store(struct quic_initial *q, uint64_t off, const uint8_t *d, size_t n)
{
	if (off > QUIC_CRYPTO_MAX || n > QUIC_CRYPTO_MAX - off)
		return GW_PARSE_TOO_BIG;
	for (size_t i = 0; i < n; i++) {
		size_t k = (size_t)off + i;
		uint8_t bit = (uint8_t)(1u << (k & 7));

		if ((q->have[k / 8] & bit) && q->crypto[k] != d[i])
			return GW_PARSE_MALFORMED;
		q->crypto[k] = d[i];
		q->have[k / 8] |= bit;
	}
	return GW_PARSE_OK;
}

static bool skip_varints(const uint8_t *p, size_t n, size_t *off, uint64_t count)
{
	uint64_t v;

	for (uint64_t i = 0; i < count; i++)
		if (!varint(p, n, off, &v))
			return false;
	return true;
}

/* ACK frame body (RFC 9000 19.3), after its type. */
static bool skip_ack(const uint8_t *p, size_t n, size_t *off, bool ecn)
{
	uint64_t ranges;

	if (!skip_varints(p, n, off, 2) || !varint(p, n, off, &ranges) ||
	    ranges > n || !skip_varints(p, n, off, 1))
		return false;
	if (!skip_varints(p, n, off, 2 * ranges))
		return false;
	return !ecn || skip_varints(p, n, off, 3);
}

/* CONNECTION_CLOSE (0x1c) body: error code, frame type, reason phrase. */
static bool skip_close(const uint8_t *p, size_t n, size_t *off)
{
	uint64_t len;

	if (!skip_varints(p, n, off, 2) || !varint(p, n, off, &len) || len > n - *off)
		return false;
	*off += (size_t)len;
	return true;
}

/* Walks the frames of a decrypted Initial payload. */
static int frames(struct quic_initial *q, const uint8_t *p, size_t n)
{
	size_t off = 0;
	uint64_t type, coff, clen;
	int ret;

	while (off < n) {
		if (!varint(p, n, &off, &type))
			return GW_PARSE_MALFORMED;
		switch (type) {
		case FRAME_PADDING:
		case FRAME_PING:
			continue;
		case FRAME_ACK:
		case FRAME_ACK_ECN:
			if (!skip_ack(p, n, &off, type == FRAME_ACK_ECN))
				return GW_PARSE_MALFORMED;
			continue;
		case FRAME_CLOSE:
			if (!skip_close(p, n, &off))
				return GW_PARSE_MALFORMED;
			continue;
		case FRAME_CRYPTO:
			if (!varint(p, n, &off, &coff) || !varint(p, n, &off, &clen) ||
			    clen > n - off)
				return GW_PARSE_MALFORMED;
			ret = crypto_store(q, coff, p + off, (size_t)clen);
			if (ret != GW_PARSE_OK)
				return ret;
			off += (size_t)clen;
			continue;
		default:
			/* RFC 9000 12.4: no other frame may appear in an Initial packet. */
			return GW_PARSE_MALFORMED;
		}
	}
	return GW_PARSE_OK;
}

/* First packet fixes the connection; later ones must name the same DCID. */
static int bind_conn(struct quic_initial *q, const struct lh *h)
{
	if (q->have_keys)
		return (h->version == q->version && h->dcid_len == q->dcid_len &&
			memcmp(h->dcid, q->dcid, h->dcid_len) == 0) ? GW_PARSE_OK
								    : GW_PARSE_MALFORMED;
	/* RFC 9000 7.2: a client's first DCID is at least 8 bytes. */
	if (h->dcid_len < 8)
		return GW_PARSE_MALFORMED;
	q->version = h->version;
	q->dcid_len = h->dcid_len;
	memcpy(q->dcid, h->dcid, h->dcid_len);
	q->scid_len = h->scid_len;
	memcpy(q->scid, h->scid, h->scid_len);
	return derive_keys(q);
}

/* Removes header protection and decrypts one Initial packet p[0..h->end). */
static int open_packet(struct quic_initial *q, const uint8_t *p, const struct lh *h)
{
	uint8_t hdr[64 + 2 * QUIC_CID_MAX + TOKEN_MAX], mask[16], plain[PACKET_MAX];
	size_t pn_len, hlen, ctlen;
	uint64_t pn = 0;
	int ret;

	/* The sample starts 4 bytes past the packet number offset (RFC 9001 5.4.2). */
	if (h->end - h->pn_off < 4 + SAMPLE_LEN || h->pn_off + 4 > sizeof(hdr))
		return GW_PARSE_MALFORMED;
	ret = hp_mask(q->hp, p + h->pn_off + 4, mask);
	if (ret < 0)
		return ret;
	memcpy(hdr, p, h->pn_off + 4);
	hdr[0] ^= mask[0] & 0x0f;
	pn_len = (size_t)(hdr[0] & 3) + 1;
	for (size_t i = 0; i < pn_len; i++) {
		hdr[h->pn_off + i] ^= mask[1 + i];
		pn = pn << 8 | hdr[h->pn_off + i];
	}
	hlen = h->pn_off + pn_len;
	if (h->end - hlen < TAG_LEN)
		return GW_PARSE_MALFORMED;
	ctlen = h->end - hlen - TAG_LEN;
	if (ctlen > sizeof(plain))
		return GW_PARSE_TOO_BIG;
	ret = aead_open(q, pn, hdr, hlen, p + hlen, ctlen, plain);
	if (ret != 0)
		return ret;
	q->packets++;
	return frames(q, plain, ctlen);
}

/* Length of the contiguous CRYPTO data from offset 0. */
static size_t crypto_contig(const struct quic_initial *q)
{
	size_t k = 0;

	while (k < QUIC_CRYPTO_MAX && (q->have[k / 8] & (1u << (k & 7))))
		k++;
	return k;
}

/* Tries the ClientHello over what is contiguous so far. */
static int try_hello(struct quic_initial *q, size_t *need)
{
	size_t have = crypto_contig(q), want = 0;
	int ret = tls_hello_parse_handshake(q->crypto, have, &q->hello, &want);

	if (ret == GW_PARSE_NEED_MORE)
		*need = want > have ? want - have : 0;
	return ret;
}

int quic_initial_parse(struct quic_initial *q, const uint8_t *p, size_t n, size_t *need)
{
	size_t off = 0, dummy;
	bool any = false;
	int ret;

	if (!q || (!p && n > 0))
		return -EINVAL;
	if (!need)
		need = &dummy;
	*need = 0;
	/* Coalesced packets (RFC 9000 12.2): use the Initial ones, skip the rest. */
	while (off < n) {
		struct lh h;

		ret = long_header(p + off, n - off, &h);
		if (ret == GW_PARSE_NOT_MINE && any)
			break;      /* a short-header packet ends the datagram's long ones */
		if (ret != GW_PARSE_OK)
			return ret;
		if (!h.initial) {
			if (!any && !q->have_keys)
				return GW_PARSE_NOT_MINE;
			off += h.end;
			continue;
		}
		ret = bind_conn(q, &h);
		if (ret == 0)
			ret = open_packet(q, p + off, &h);
		if (ret != GW_PARSE_OK)
			return ret;
		any = true;
		off += h.end;
	}
	return any || q->have_keys ? try_hello(q, need) : GW_PARSE_NOT_MINE;
}
