/*
 * Ed25519 keys and C2SP signed notes (journal/note.h), compatible with
 * golang.org/x/mod/sumdb/note: same key id, vkey form and note syntax.
 *
 * Everything that parses takes untrusted bytes, so lengths are checked before every
 * copy and nothing is NUL-terminated implicitly.
 */
#include "journal/note.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "common/buf.h"

#define ALG_ED25519 0x01
#define ED25519_LEN 32
#define SIG_LEN 64
#define MAX_SIGS 100
#define EM_DASH_SP "\xe2\x80\x94 "

struct note_signer {
	EVP_PKEY *pkey;
	uint8_t pub[ED25519_LEN];
	uint32_t id;
	char name[NOTE_KEY_NAME_MAX];
};

struct note_verifier {
	EVP_PKEY *pkey;
	uint32_t id;
	char name[NOTE_KEY_NAME_MAX];
};

static const char b64chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int note_b64_encode(const uint8_t *in, size_t n, char *out, size_t cap)
{
	size_t need = (n + 2) / 3 * 4, i, o = 0;

	if (need + 1 > cap || need > INT32_MAX)
		return -ENOSPC;
	for (i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		v |= i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0;
		v |= i + 2 < n ? in[i + 2] : 0;
		out[o++] = b64chars[v >> 18 & 63];
		out[o++] = b64chars[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64chars[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64chars[v & 63] : '=';
	}
	out[o] = '\0';
	return (int)o;
}

static int b64val(char c)
{
	const char *p = c ? strchr(b64chars, c) : NULL;

	return p ? (int)(p - b64chars) : -1;
}

int note_b64_decode(const char *in, size_t n, uint8_t *out, size_t cap)
{
	size_t i, o = 0;

	if (n % 4 || n / 4 * 3 > (size_t)INT32_MAX)
		return -EINVAL;
	for (i = 0; i < n; i += 4) {
		bool last = i + 4 == n;
		int pad = last ? (in[i + 3] == '=') + (in[i + 2] == '=' && in[i + 3] == '=') : 0;
		int a = b64val(in[i]), b = b64val(in[i + 1]);
		int c = pad >= 2 ? 0 : b64val(in[i + 2]), d = pad >= 1 ? 0 : b64val(in[i + 3]);
		uint32_t v;

		if (a < 0 || b < 0 || c < 0 || d < 0 || o + 3 - (size_t)pad > cap)
			return -EINVAL;
		v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
		/* Non-canonical encodings (stray bits under the padding) are refused. */
		if ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff)))
			return -EINVAL;
		out[o++] = (uint8_t)(v >> 16);
		if (pad < 2)
			out[o++] = (uint8_t)(v >> 8);
		if (pad < 1)
			out[o++] = (uint8_t)v;
	}
	return (int)o;
}

/* Non-empty, no space, no control byte, no '+', valid UTF-8 (as sumdb/note asks). */
static bool name_valid(const char *s, size_t n)
{
	size_t i = 0;

	if (n == 0 || n >= NOTE_KEY_NAME_MAX)
		return false;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		size_t k = utf8_valid_seq((const unsigned char *)s + i, n - i);

		if (k == 0 || c <= 0x20 || c == 0x7f || c == '+')
			return false;
		/* U+0085 and U+00A0 are Unicode spaces. */
		if (k == 2 && c == 0xc2 && (s[i + 1] == '\x85' || s[i + 1] == '\xa0'))
			return false;
		i += k;
	}
	return true;
}

static int key_id(const char *name, const uint8_t pub[ED25519_LEN], uint32_t *id)
{
	uint8_t buf[NOTE_KEY_NAME_MAX + 2 + ED25519_LEN], md[EVP_MAX_MD_SIZE];
	size_t n = strlen(name);
	unsigned int mdlen = 0;

	if (n >= NOTE_KEY_NAME_MAX)
		return -EINVAL;
	memcpy(buf, name, n);
	buf[n] = '\n';
	buf[n + 1] = ALG_ED25519;
	memcpy(buf + n + 2, pub, ED25519_LEN);
	if (!EVP_Digest(buf, n + 2 + ED25519_LEN, md, &mdlen, EVP_sha256(), NULL))
		return -EIO;
	*id = (uint32_t)md[0] << 24 | (uint32_t)md[1] << 16 | (uint32_t)md[2] << 8 | md[3];
	return 0;
}

/* Takes ownership of pkey (freed on failure). */
static int signer_wrap(struct note_signer **out, EVP_PKEY *pkey, const char *name)
{
	struct note_signer *s = NULL;
	size_t publen = ED25519_LEN;
	int ret = -EINVAL;

	if (!name || !name_valid(name, strlen(name)) ||
	    EVP_PKEY_get_base_id(pkey) != EVP_PKEY_ED25519)
		goto out;
	ret = -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto out;
	ret = -EINVAL;
	if (!EVP_PKEY_get_raw_public_key(pkey, s->pub, &publen) || publen != ED25519_LEN)
		goto out;
	strcpy(s->name, name);
	ret = key_id(name, s->pub, &s->id);
	if (ret < 0)
		goto out;
	s->pkey = pkey;
	pkey = NULL;
	*out = s;
	s = NULL;
out:
	EVP_PKEY_free(pkey);
	free(s);
	return ret;
}

int note_signer_load(struct note_signer **out, const char *path, const char *name)
{
	EVP_PKEY *pkey;
	FILE *f = fopen(path, "re");

	if (!f)
		return errno == ENOENT ? -ENOENT : errno == EACCES ? -EACCES : -errno;
	pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!pkey)
		return -EINVAL;
	return signer_wrap(out, pkey, name);
}

int note_signer_from_seed(struct note_signer **out, const uint8_t seed[32], const char *name)
{
	EVP_PKEY *pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);

	if (!pkey)
		return -ENOMEM;
	return signer_wrap(out, pkey, name);
}

/* Writes the whole of data to a new file (O_EXCL) with the given mode. */
static int write_new_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	size_t off = 0;
	int ret = 0;

	if (fd < 0)
		return -errno;
	while (off < len && ret == 0) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno != EINTR)
			ret = -errno;
		else if (w > 0)
			off += (size_t)w;
	}
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret < 0)
		unlink(path);
	return ret;
}

/* PEM PKCS#8 of the private key into a malloc'ed string. */
static int private_pem(EVP_PKEY *pkey, char **pem, size_t *len)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *p = NULL;
	long n;
	int ret = -EIO;

	if (!bio)
		return -ENOMEM;
	if (!PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL))
		goto out;
	n = BIO_get_mem_data(bio, &p);
	if (n <= 0)
		goto out;
	ret = -ENOMEM;
	*pem = malloc((size_t)n);
	if (!*pem)
		goto out;
	memcpy(*pem, p, (size_t)n);
	*len = (size_t)n;
	ret = 0;
out:
	BIO_free(bio);
	return ret;
}

int note_signer_write_vkey(const struct note_signer *s, const char *pub_path)
{
	char vkey[NOTE_KEY_NAME_MAX + 80];
	int ret = note_signer_vkey(s, vkey, sizeof(vkey) - 1);

	if (ret == 0) {
		strcat(vkey, "\n");
		ret = write_new_file(pub_path, vkey, strlen(vkey), 0444);
	}
	return ret;
}

int note_signer_generate(struct note_signer **out, const char *priv_path,
			 const char *pub_path, const char *name)
{
	struct note_signer *s = NULL;
	char *pem = NULL;
	size_t pemlen = 0;
	EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	int ret;

	if (!pkey)
		return -EIO;
	ret = signer_wrap(&s, pkey, name);
	if (ret < 0)
		return ret;
	ret = private_pem(s->pkey, &pem, &pemlen);
	if (ret == 0)
		ret = write_new_file(priv_path, pem, pemlen, 0400);
	if (ret == 0) {
		ret = note_signer_write_vkey(s, pub_path);
		if (ret < 0)
			unlink(priv_path);
	}
	if (pem)
		OPENSSL_cleanse(pem, pemlen);
	free(pem);
	if (ret == 0)
		*out = s;
	else
		note_signer_free(s);
	return ret;
}

void note_signer_free(struct note_signer *s)
{
	if (!s)
		return;
	EVP_PKEY_free(s->pkey);
	free(s);
}

int note_signer_vkey(const struct note_signer *s, char *buf, size_t len)
{
	uint8_t key[1 + ED25519_LEN];
	char b64[64];
	int n;

	key[0] = ALG_ED25519;
	memcpy(key + 1, s->pub, ED25519_LEN);
	if (note_b64_encode(key, sizeof(key), b64, sizeof(b64)) < 0)
		return -ENOSPC;
	n = snprintf(buf, len, "%s+%08x+%s", s->name, (unsigned int)s->id, b64);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* Parses "<8 hex>" exactly. */
static int parse_hex32(const char *s, size_t n, uint32_t *out)
{
	uint32_t v = 0;
	size_t i;

	if (n != 8)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			return -EINVAL;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return 0;
}

int note_verifier_parse(struct note_verifier **out, const char *vkey)
{
	const char *p1, *p2;
	size_t n = strlen(vkey), namelen;
	uint8_t key[64];
	uint32_t id, want;
	int klen;
	struct note_verifier *v;

	while (n > 0 && (vkey[n - 1] == '\n' || vkey[n - 1] == ' ' || vkey[n - 1] == '\t' ||
			 vkey[n - 1] == '\r'))
		n--;
	p1 = memchr(vkey, '+', n);
	p2 = p1 ? memchr(p1 + 1, '+', n - (size_t)(p1 + 1 - vkey)) : NULL;
	if (!p2)
		return -EINVAL;
	namelen = (size_t)(p1 - vkey);
	klen = note_b64_decode(p2 + 1, n - (size_t)(p2 + 1 - vkey), key, sizeof(key));
	if (!name_valid(vkey, namelen) || parse_hex32(p1 + 1, (size_t)(p2 - p1 - 1), &id) < 0 ||
	    klen != 1 + ED25519_LEN || key[0] != ALG_ED25519)
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v->name, vkey, namelen);
	v->id = id;
	v->pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, key + 1, ED25519_LEN);
	if (!v->pkey || key_id(v->name, key + 1, &want) < 0 || want != id) {
		note_verifier_free(v);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int note_verifier_load(struct note_verifier **out, const char *path)
{
	char line[NOTE_KEY_NAME_MAX + 128];
	FILE *f = fopen(path, "re");
	int ret = -EINVAL;

	if (!f)
		return -errno;
	if (fgets(line, sizeof(line), f))
		ret = note_verifier_parse(out, line);
	fclose(f);
	return ret;
}

void note_verifier_free(struct note_verifier *v)
{
	if (!v)
		return;
	EVP_PKEY_free(v->pkey);
	free(v);
}

uint32_t note_verifier_key_id(const struct note_verifier *v)
{
	return v->id;
}

const char *note_verifier_name(const struct note_verifier *v)
{
	return v->name;
}

static int ed25519_sign(EVP_PKEY *pkey, const void *msg, size_t len, uint8_t sig[SIG_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t siglen = SIG_LEN;
	int ret = -EIO;

	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
	    EVP_DigestSign(ctx, sig, &siglen, msg, len) == 1 && siglen == SIG_LEN)
		ret = 0;
	EVP_MD_CTX_free(ctx);
	return ret;
}

static bool ed25519_verify(EVP_PKEY *pkey, const void *msg, size_t len, const uint8_t *sig)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok = false;

	if (!ctx)
		return false;
	ok = EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
	     EVP_DigestVerify(ctx, sig, SIG_LEN, msg, len) == 1;
	EVP_MD_CTX_free(ctx);
	return ok;
}

/* Well-formed UTF-8 with no control byte but '\n' (sumdb/note's first rule). */
static bool text_clean(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		size_t k = utf8_valid_seq((const unsigned char *)s + i, n - i);

		if (k == 0 || (c < 0x20 && c != '\n'))
			return false;
		i += k;
	}
	return true;
}

int note_sign_text(const struct note_signer *s, const char *text, size_t tlen, char *buf,
		   size_t len)
{
	uint8_t sig[4 + SIG_LEN];
	char b64[128];
	int n;

	if (tlen == 0 || text[tlen - 1] != '\n' || !text_clean(text, tlen) ||
	    memmem(text, tlen, "\n\n", 2) || text[0] == '\n')
		return -EINVAL;
	sig[0] = (uint8_t)(s->id >> 24);
	sig[1] = (uint8_t)(s->id >> 16);
	sig[2] = (uint8_t)(s->id >> 8);
	sig[3] = (uint8_t)s->id;
	if (ed25519_sign(s->pkey, text, tlen, sig + 4) < 0 ||
	    note_b64_encode(sig, sizeof(sig), b64, sizeof(b64)) < 0)
		return -EIO;
	if (tlen > INT32_MAX / 2)
		return -ENOSPC;
	n = snprintf(buf, len, "%.*s\n" EM_DASH_SP "%s %s\n", (int)tlen, text, s->name, b64);
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

int note_sign_checkpoint(const struct note_signer *s, const struct checkpoint *cp,
			 char *buf, size_t len)
{
	char root[64], body[NOTE_KEY_NAME_MAX + 96];
	int n;

	if (note_b64_encode(cp->root, MERKLE_HASH_LEN, root, sizeof(root)) < 0)
		return -EIO;
	n = snprintf(body, sizeof(body), "%s\n%llu\n%s\n", cp->origin,
		     (unsigned long long)cp->size, root);
	if (n < 0 || (size_t)n >= sizeof(body))
		return -ENOSPC;
	n = note_sign_text(s, body, (size_t)n, buf, len);
	return n == -EINVAL ? -EIO : n;
}

/* Decimal without sign, leading zeros or overflow. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 20 || (n > 1 && s[0] == '0'))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int note_parse_checkpoint(const char *text, size_t len, struct checkpoint *cp)
{
	const char *l1 = memchr(text, '\n', len), *l2, *l3;
	size_t olen;

	if (!l1)
		return -EINVAL;
	l2 = memchr(l1 + 1, '\n', len - (size_t)(l1 + 1 - text));
	l3 = l2 ? memchr(l2 + 1, '\n', len - (size_t)(l2 + 1 - text)) : NULL;
	olen = (size_t)(l1 - text);
	if (!l3 || olen == 0 || olen >= sizeof(cp->origin) ||
	    parse_u64(l1 + 1, (size_t)(l2 - l1 - 1), &cp->size) < 0 ||
	    note_b64_decode(l2 + 1, (size_t)(l3 - l2 - 1), cp->root, MERKLE_HASH_LEN) !=
		    MERKLE_HASH_LEN)
		return -EINVAL;
	memcpy(cp->origin, text, olen);
	cp->origin[olen] = '\0';
	return 0;
}

/* One signature line (without '\n'): returns -EINVAL, 0 (not v's), or 1 (v's, and *ok). */
static int check_sig_line(const struct note_verifier *v, const char *line, size_t n,
			  const char *text, size_t tlen, bool *ok)
{
	const char *sp;
	uint8_t sig[128];
	int slen;
	uint32_t id;

	if (n < 4 || memcmp(line, EM_DASH_SP, 4) != 0)
		return -EINVAL;
	line += 4;
	n -= 4;
	sp = memchr(line, ' ', n);
	if (!sp || !name_valid(line, (size_t)(sp - line)))
		return -EINVAL;
	slen = note_b64_decode(sp + 1, n - (size_t)(sp + 1 - line), sig, sizeof(sig));
	if (slen < 5)
		return -EINVAL;
	id = (uint32_t)sig[0] << 24 | (uint32_t)sig[1] << 16 | (uint32_t)sig[2] << 8 | sig[3];
	if (!v || id != v->id || (size_t)(sp - line) != strlen(v->name) ||
	    memcmp(line, v->name, (size_t)(sp - line)) != 0)
		return 0;
	*ok = slen == 4 + SIG_LEN && ed25519_verify(v->pkey, text, tlen, sig + 4);
	return 1;
}

/* Finds the last "\n\n": the text ends at its first '\n'. */
static const char *last_blank(const char *msg, size_t len)
{
	size_t i;

	for (i = len; i >= 2; i--)
		if (msg[i - 1] == '\n' && msg[i - 2] == '\n')
			return msg + i - 2;
	return NULL;
}

enum note_status note_open(const struct note_verifier *v, const char *msg, size_t len,
			   size_t *text_len)
{
	const char *split, *p, *end = msg + len;
	enum note_status st = NOTE_UNKNOWN_KEY;
	size_t tlen;
	int nsig = 0;

	if (len > NOTE_MAX_LEN || !text_clean(msg, len))
		return NOTE_MALFORMED;
	split = last_blank(msg, len);
	if (!split || split + 2 == end || end[-1] != '\n')
		return NOTE_MALFORMED;
	tlen = (size_t)(split - msg) + 1;
	for (p = split + 2; p < end; nsig++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		bool ok = false;
		int r = nsig < MAX_SIGS ? check_sig_line(v, p, (size_t)(nl - p), msg, tlen, &ok)
					: -EINVAL;

		if (r < 0)
			return NOTE_MALFORMED;
		/* A valid signature by v wins over a bad duplicate, as in sumdb/note. */
		if (r == 1 && st != NOTE_OK)
			st = ok ? NOTE_OK : NOTE_BAD_SIGNATURE;
		p = nl + 1;
	}
	*text_len = tlen;
	return st;
}

enum note_status note_open_checkpoint(const struct note_verifier *v, const char *text,
				      size_t len, struct checkpoint *cp)
{
	size_t tlen = 0;
	enum note_status st = note_open(v, text, len, &tlen);

	if (st == NOTE_MALFORMED) {
		/* Still fill cp when only the signature block is broken. */
		const char *split = len <= NOTE_MAX_LEN ? last_blank(text, len) : NULL;

		if (split && note_parse_checkpoint(text, (size_t)(split - text) + 1, cp) < 0)
			memset(cp, 0, sizeof(*cp));
		return st;
	}
	if (note_parse_checkpoint(text, tlen, cp) < 0)
		return NOTE_MALFORMED;
	return st;
}

const char *note_status_str(enum note_status st)
{
	switch (st) {
	case NOTE_OK:
		return "ok";
	case NOTE_MALFORMED:
		return "malformed note";
	case NOTE_UNKNOWN_KEY:
		return "no signature by the trusted key";
	case NOTE_BAD_SIGNATURE:
		return "signature does not verify";
	}
	return "unknown status";
}
