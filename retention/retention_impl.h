/* Internals shared by retention/retention*.c. */
#ifndef SANDGATE_RETENTION_RETENTION_IMPL_H
#define SANDGATE_RETENTION_RETENTION_IMPL_H

#include <jansson.h>

#include "index/index.h"
#include "retention/retention.h"

struct retention_run {
	const struct retention_settings *s;
	int64_t now_us;
	retention_fn fn;
	void *ctx;
	struct index_db *db;             /* NULL when there is no index */
	char journal_dir[4096], cold_dir[4096], sinks_dir[4096];
};

/* retention_archive.c: archives segment seg (file name) when due. 0 or -errno. */
int retention_archive_one(struct retention_run *r, const char *name, uint64_t seg);

/*
 * retention_tree.c: the Merkle state before segment first_seq, from its predecessor's
 * manifest or tombstone (empty for seq 0). 0, -ENOENT when no record gives it.
 */
int retention_tree_start(struct retention_run *r, uint64_t first_seq, struct merkle_range *t,
			 uint8_t last[MERKLE_HASH_LEN]);
/* {"size":N,"hashes":[hex...],"next_prev":hex}, or NULL (out of memory). */
json_t *retention_tree_json(const struct merkle_range *t, const uint8_t last[MERKLE_HASH_LEN]);

/* retention.c: whether the manifest's sessions fall under a legal hold. */
bool retention_held(const struct retention_settings *s, json_t *sessions);


#endif
