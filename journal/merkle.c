/*
 * RFC 6962 hashing and the compact range (journal/merkle.h).
 *
 * Every journal line is hashed once by the writer and once by the verifier, so the
 * leaf hash keeps one digest context per thread instead of allocating one per call.
 */
#include "journal/merkle.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <openssl/evp.h>

/* Per-thread digest context, freed when its thread exits (the writer has its own). */
static pthread_key_t ctx_key;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;
static int ctx_key_ok;

static void ctx_free(void *p)
{
	EVP_MD_CTX_free(p);
}

static void ctx_key_init(void)
{
	ctx_key_ok = pthread_key_create(&ctx_key, ctx_free) == 0;
}

/* This thread's context, or NULL when out of memory. */
static EVP_MD_CTX *thread_ctx(void)
{
	EVP_MD_CTX *ctx;

	if (pthread_once(&ctx_once, ctx_key_init) != 0 || !ctx_key_ok)
		return NULL;
	ctx = pthread_getspecific(ctx_key);
	if (!ctx) {
		ctx = EVP_MD_CTX_new();
		if (ctx && pthread_setspecific(ctx_key, ctx) != 0) {
			EVP_MD_CTX_free(ctx);
			ctx = NULL;
		}
	}
	return ctx;
}

/* The SHA-256 implementation, fetched once: an implicit fetch per digest is slow. */
static const EVP_MD *sha256_md(void)
{
	static EVP_MD *md;

	if (!md)
		md = EVP_MD_fetch(NULL, "SHA256", NULL);
	return md ? md : EVP_sha256();
}

/*
 * Hashes prefix ‖ a ‖ b. On an allocation failure the output is all 0xff: callers
 * compare hashes, and such a value never matches a real one.
 */
static void hash3(uint8_t prefix, const void *a, size_t alen, const void *b, size_t blen,
		  uint8_t out[MERKLE_HASH_LEN])
{
	EVP_MD_CTX *ctx = thread_ctx();
	unsigned int n = 0;

	if (!ctx || !EVP_DigestInit_ex(ctx, sha256_md(), NULL) ||
	    !EVP_DigestUpdate(ctx, &prefix, 1) || !EVP_DigestUpdate(ctx, a, alen) ||
	    (blen && !EVP_DigestUpdate(ctx, b, blen)) || !EVP_DigestFinal_ex(ctx, out, &n) ||
	    n != MERKLE_HASH_LEN)
		memset(out, 0xff, MERKLE_HASH_LEN);
}

void merkle_leaf_hash(const void *data, size_t len, uint8_t out[MERKLE_HASH_LEN])
{
	hash3(0x00, data, len, NULL, 0, out);
}

void merkle_node_hash(const uint8_t left[MERKLE_HASH_LEN],
		      const uint8_t right[MERKLE_HASH_LEN], uint8_t out[MERKLE_HASH_LEN])
{
	hash3(0x01, left, MERKLE_HASH_LEN, right, MERKLE_HASH_LEN, out);
}

void merkle_range_init(struct merkle_range *r)
{
	memset(r, 0, sizeof(*r));
}

int merkle_range_append(struct merkle_range *r, const uint8_t leaf[MERKLE_HASH_LEN])
{
	uint64_t s = r->size;

	if (s == UINT64_MAX)
		return -EOVERFLOW;
	memcpy(r->range[r->count++], leaf, MERKLE_HASH_LEN);
	/* Each trailing 1 bit of the old size is a perfect subtree the new leaf completes. */
	while (s & 1) {
		r->count--;
		merkle_node_hash(r->range[r->count - 1], r->range[r->count],
				 r->range[r->count - 1]);
		s >>= 1;
	}
	r->size++;
	return 0;
}

void merkle_range_root(const struct merkle_range *r, uint8_t out[MERKLE_HASH_LEN])
{
	uint8_t h[MERKLE_HASH_LEN];
	int i;

	if (r->count == 0) {
		unsigned int n = 0;

		if (!EVP_Digest("", 0, out, &n, sha256_md(), NULL))
			memset(out, 0xff, MERKLE_HASH_LEN);
		return;
	}
	/* RFC 6962 splits at the largest power of two: fold the subtrees right to left. */
	memcpy(h, r->range[r->count - 1], MERKLE_HASH_LEN);
	for (i = r->count - 2; i >= 0; i--)
		merkle_node_hash(r->range[i], h, h);
	memcpy(out, h, MERKLE_HASH_LEN);
}

int merkle_range_load(struct merkle_range *r, uint64_t size,
		      const uint8_t (*hashes)[MERKLE_HASH_LEN], int count)
{
	if (count < 0 || count > MERKLE_MAX_HEIGHT || count != __builtin_popcountll(size))
		return -EINVAL;
	if (count > 0 && !hashes)
		return -EINVAL;
	merkle_range_init(r);
	r->size = size;
	r->count = count;
	if (count > 0)
		memcpy(r->range, hashes, (size_t)count * MERKLE_HASH_LEN);
	return 0;
}
