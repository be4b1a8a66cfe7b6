/* RFC 6962 Merkle hashing and the compact range (journal/merkle.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "journal/merkle.h"

/* C17 does not convert uint8_t (*)[N] to const uint8_t (*)[N] implicitly. */
#define CONST_RANGE(r) ((const uint8_t(*)[MERKLE_HASH_LEN])(r))

/*
 * The 8-leaf reference tree of transparency-dev/merkle, testonly/constants.go
 * (LeafInputs, RootHashes, CompactTrees), the same data as certificate-transparency's
 * testdata. Re-typed here as test data.
 */
static const char *const leaf_hex[8] = {
	"", "00", "10", "2021", "3031", "40414243", "5051525354555657",
	"606162636465666768696a6b6c6d6e6f",
};
static const char *const root_hex[9] = {
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};
/* Node hashes of CompactTrees() for size 7: nh[2][0], nh[1][2], nh[0][6]. */
static const char *const range7_hex[3] = {
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
	"b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
};

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2, i;

	for (i = 0; i < n; i++) {
		unsigned int b;

		assert_int_equal(sscanf(h + 2 * i, "%2x", &b), 1);
		out[i] = (uint8_t)b;
	}
	return n;
}

static void test_reference_roots(void **st)
{
	struct merkle_range r;
	uint8_t leaf[MERKLE_HASH_LEN], root[MERKLE_HASH_LEN], want[MERKLE_HASH_LEN], in[16];
	int i;

	(void)st;
	merkle_range_init(&r);
	for (i = 0; i <= 8; i++) {
		merkle_range_root(&r, root);
		unhex(root_hex[i], want);
		assert_memory_equal(root, want, MERKLE_HASH_LEN);
		if (i == 7) {
			assert_int_equal(r.count, 3);
			for (int k = 0; k < 3; k++) {
				unhex(range7_hex[k], want);
				assert_memory_equal(r.range[k], want, MERKLE_HASH_LEN);
			}
		}
		if (i < 8) {
			merkle_leaf_hash(in, unhex(leaf_hex[i], in), leaf);
			assert_int_equal(merkle_range_append(&r, leaf), 0);
		}
	}
	assert_int_equal(r.size, 8);
	assert_int_equal(r.count, 1);
}

/* MTH per RFC 6962 section 2.1, recursively. */
static void naive_root(uint8_t (*leaves)[MERKLE_HASH_LEN], size_t n, uint8_t out[32])
{
	uint8_t l[MERKLE_HASH_LEN], r[MERKLE_HASH_LEN];
	size_t k = 1;

	if (n == 1) {
		memcpy(out, leaves[0], MERKLE_HASH_LEN);
		return;
	}
	while (k * 2 < n)
		k *= 2;
	naive_root(leaves, k, l);
	naive_root(leaves + k, n - k, r);
	merkle_node_hash(l, r, out);
}

static void test_random_sizes(void **st)
{
	uint8_t (*leaves)[MERKLE_HASH_LEN] = malloc(4100 * MERKLE_HASH_LEN);
	uint8_t a[MERKLE_HASH_LEN], b[MERKLE_HASH_LEN];
	struct merkle_range r;
	size_t i, checks = 0;

	(void)st;
	assert_non_null(leaves);
	srand(6962);
	merkle_range_init(&r);
	for (i = 0; i < 4100; i++) {
		uint32_t x = (uint32_t)rand();

		merkle_leaf_hash(&x, sizeof(x), leaves[i]);
		assert_int_equal(merkle_range_append(&r, leaves[i]), 0);
		assert_int_equal(r.count, __builtin_popcountll(r.size));
		/* Every size up to 300, then a random sample up to 4100. */
		if (i < 300 || rand() % 40 == 0 || i == 4095 || i == 4099) {
			merkle_range_root(&r, a);
			naive_root(leaves, i + 1, b);
			assert_memory_equal(a, b, MERKLE_HASH_LEN);
			checks++;
		}
	}
	assert_true(checks > 350);
	free(leaves);
}

static void test_load_round_trip(void **st)
{
	struct merkle_range r, l;
	uint8_t leaf[MERKLE_HASH_LEN], a[MERKLE_HASH_LEN], b[MERKLE_HASH_LEN];
	uint32_t i;

	(void)st;
	merkle_range_init(&r);
	for (i = 0; i < 1234; i++) {
		merkle_leaf_hash(&i, sizeof(i), leaf);
		assert_int_equal(merkle_range_append(&r, leaf), 0);
	}
	assert_int_equal(merkle_range_load(&l, r.size, CONST_RANGE(r.range), r.count), 0);
	for (; i < 2000; i++) {
		merkle_leaf_hash(&i, sizeof(i), leaf);
		assert_int_equal(merkle_range_append(&r, leaf), 0);
		assert_int_equal(merkle_range_append(&l, leaf), 0);
	}
	merkle_range_root(&r, a);
	merkle_range_root(&l, b);
	assert_memory_equal(a, b, MERKLE_HASH_LEN);
	assert_int_equal(merkle_range_load(&l, 1234, CONST_RANGE(r.range), 4), -EINVAL);
	assert_int_equal(merkle_range_load(&l, 0, NULL, 0), 0);
	assert_int_equal(merkle_range_load(&l, 3, CONST_RANGE(r.range), -1), -EINVAL);
	assert_int_equal(merkle_range_load(&l, UINT64_MAX, CONST_RANGE(r.range), 64), 0);
	assert_int_equal(merkle_range_append(&l, leaf), -EOVERFLOW);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_roots),
		cmocka_unit_test(test_random_sizes),
		cmocka_unit_test(test_load_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
