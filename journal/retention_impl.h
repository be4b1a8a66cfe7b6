/* Internals shared by journal/retention*.c. */
#ifndef SANDGATE_JOURNAL_RETENTION_IMPL_H
#define SANDGATE_JOURNAL_RETENTION_IMPL_H

#include <jansson.h>

#include "journal/index.h"
#include "journal/retention.h"

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

/* retention.c: whether the manifest's sessions fall under a legal hold. */
bool retention_held(const struct retention_settings *s, json_t *sessions);


#endif
