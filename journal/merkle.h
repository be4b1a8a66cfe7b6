/*
 * RFC 6962 Merkle tree hashing over journal lines, kept as a compact range: the roots
 * of the perfect subtrees that cover leaves [0, size), left to right. Appending a leaf
 * costs O(1) amortised hashes and memory is O(log size), so the writer and the verifier
 * never hold the tree.
 */
#ifndef SANDGATE_JOURNAL_MERKLE_H
#define SANDGATE_JOURNAL_MERKLE_H

#include <stddef.h>
#include <stdint.h>

#define MERKLE_HASH_LEN 32
#define MERKLE_MAX_HEIGHT 64

struct merkle_range {
	uint64_t size;                                       /* leaves covered */
	int count;                                           /* hashes in range[] */
	uint8_t range[MERKLE_MAX_HEIGHT][MERKLE_HASH_LEN];   /* left to right */
};

/* SHA-256(0x00 ‖ data). Also the journal's `prev` link. */
void merkle_leaf_hash(const void *data, size_t len, uint8_t out[MERKLE_HASH_LEN]);

/* SHA-256(0x01 ‖ left ‖ right). */
void merkle_node_hash(const uint8_t left[MERKLE_HASH_LEN],
		      const uint8_t right[MERKLE_HASH_LEN], uint8_t out[MERKLE_HASH_LEN]);

/* Empty range (size 0). */
void merkle_range_init(struct merkle_range *r);

/* Appends one leaf hash. Returns 0, or -EOVERFLOW at 2^64-1 leaves. */
int merkle_range_append(struct merkle_range *r, const uint8_t leaf[MERKLE_HASH_LEN]);

/* Root of the tree of r->size leaves (SHA-256 of "" for the empty tree). */
void merkle_range_root(const struct merkle_range *r, uint8_t out[MERKLE_HASH_LEN]);

/*
 * Restores a range from its size and hashes (as persisted). Returns 0, or -EINVAL
 * when count is not popcount(size).
 */
int merkle_range_load(struct merkle_range *r, uint64_t size,
		      const uint8_t (*hashes)[MERKLE_HASH_LEN], int count);

#endif
