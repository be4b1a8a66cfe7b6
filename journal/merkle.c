/*
 * RFC 6962 hashing and the compact range (journal/merkle.h).
 *
 * Every journal line is hashed once by the writer and once by the verifier, about two
 * digests per line (its leaf and, amortised, one interior node). OpenSSL 3.0's EVP
 * allocates, wipes and frees a provider context on every EVP_DigestInit_ex, which cost
 * more than the hashing of a short line; the low-level SHA256_* calls run the same
 * compression code (SHA-NI where the CPU has it) on a context on the stack. They are
 * marked deprecated in OpenSSL 3 but kept in every 3.x release.
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "journal/merkle.h"

#include <errno.h>
#include <string.h>

#include <openssl/sha.h>

/*
 * Hashes prefix ‖ a ‖ b. On a failure (none is possible with these calls, but they
 * return a status) the output is all 0xff: callers compare hashes, and such a value
 * never matches a real one.
 */
static void hash3(uint8_t prefix, const void *a, size_t alen, const void *b, size_t blen,
		  uint8_t out[MERKLE_HASH_LEN])
{
	SHA256_CTX c;

	if (!SHA256_Init(&c) || !SHA256_Update(&c, &prefix, 1) || !SHA256_Update(&c, a, alen) ||
	    (blen && !SHA256_Update(&c, b, blen)) || !SHA256_Final(out, &c))
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
		if (!SHA256((const unsigned char *)"", 0, out))
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
