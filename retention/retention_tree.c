/*
 * The Merkle state a manifest carries (retention/retention.h): the compact range after a
 * segment's last line and that line's hash. It is what `sandgate verify` needs to go on
 * checking the lines after a purged segment against the later checkpoints. The state at
 * a segment's start is the one its predecessor's manifest (or tombstone) recorded.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "retention/retention_impl.h"

/* A JSON string of exactly 2n hex digits (NULL when the member is missing or no string). */
static int unhex(const char *s, uint8_t *out, size_t n)
{
	return s ? hex_decode(s, strlen(s), out, n) : -EINVAL;
}

json_t *retention_tree_json(const struct merkle_range *t, const uint8_t last[MERKLE_HASH_LEN])
{
	char h[2 * MERKLE_HASH_LEN + 1];
	json_t *hashes = json_array(), *o;

	for (int i = 0; hashes && i < t->count; i++) {
		hex_encode(t->range[i], MERKLE_HASH_LEN, h);
		if (json_array_append_new(hashes, json_string(h)) < 0) {
			json_decref(hashes);
			return NULL;
		}
	}
	hex_encode(last, MERKLE_HASH_LEN, h);
	o = hashes ? json_pack("{s:I, s:o, s:s}", "size", (json_int_t)t->size, "hashes", hashes,
			       "next_prev", h) : NULL;
	return o;
}

int retention_tree_parse(json_t *tree, struct merkle_range *t, uint8_t next_prev[MERKLE_HASH_LEN])
{
	uint8_t hashes[MERKLE_MAX_HEIGHT][MERKLE_HASH_LEN];
	json_t *size = json_object_get(tree, "size"), *arr = json_object_get(tree, "hashes");
	size_t n = json_array_size(arr);

	if (!json_is_integer(size) || json_integer_value(size) < 0 || !json_is_array(arr) ||
	    n > MERKLE_MAX_HEIGHT ||
	    unhex(json_string_value(json_object_get(tree, "next_prev")), next_prev,
		  MERKLE_HASH_LEN) != 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (unhex(json_string_value(json_array_get(arr, i)), hashes[i], MERKLE_HASH_LEN))
			return -EINVAL;
	return merkle_range_load(t, (uint64_t)json_integer_value(size),
				 (const uint8_t (*)[MERKLE_HASH_LEN])hashes, (int)n);
}

/* "<20 digits>.jsonl.manifest.json" or ".purged.json": the segment's first seq, or -1. */
static int64_t record_seq(const char *name)
{
	size_t n = strlen(name);

	if (n < 26 || strspn(name, "0123456789") != 20 || strncmp(name + 20, ".jsonl.", 7) != 0 ||
	    (strcmp(name + 26, ".manifest.json") != 0 && strcmp(name + 26, ".purged.json") != 0))
		return -1;
	return (int64_t)strtoull(name, NULL, 10);
}

int retention_tree_start(struct retention_run *r, uint64_t first_seq, struct merkle_range *t,
			 uint8_t last[MERKLE_HASH_LEN])
{
	char best[64] = "", path[8192];
	int64_t best_seq = -1;
	struct dirent *de;
	json_t *m;
	DIR *d;
	int ret;

	merkle_range_init(t);
	memset(last, 0, MERKLE_HASH_LEN);   /* the journal's first line links to zeros */
	if (first_seq == 0)
		return 0;
	if (!(d = opendir(r->cold_dir)))
		return -errno;
	while ((de = readdir(d))) {
		int64_t s = record_seq(de->d_name);

		if (s > best_seq && (uint64_t)s < first_seq && strlen(de->d_name) < sizeof(best)) {
			best_seq = s;
			snprintf(best, sizeof(best), "%s", de->d_name);
		}
	}
	closedir(d);
	if (best_seq < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", r->cold_dir, best);
	m = json_load_file(path, 0, NULL);
	ret = m ? retention_tree_parse(json_object_get(m, "tree"), t, last) : -ENOENT;
	json_decref(m);
	if (ret == 0 && t->size != first_seq)
		ret = -ENOENT;   /* the predecessor is not the segment right before */
	return ret;
}
