/*
 * Questions to the index (`sandgate query`): a filter turned into one parameterised
 * SELECT (never pasted SQL: every value is a bound parameter), run against the index,
 * and each matching line read back from its segment byte for byte.
 */
#ifndef SANDGATE_INDEX_INDEX_QUERY_H
#define SANDGATE_INDEX_INDEX_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "index/index.h"

#define INDEX_QUERY_MAX_EVENTS 32
#define INDEX_SQL_MAX_PARAMS 48

/* All given filters must match (AND). Strings are borrowed. */
struct index_query {
	const char *session;
	bool has_since, has_until;
	int64_t since_us, until_us;      /* inclusive bounds, microseconds since the epoch */
	const char *events[INDEX_QUERY_MAX_EVENTS];
	size_t n_events;                 /* any of them (OR) */
	const char *path;                /* exact, or a prefix when it ends with '*' */
	const char *domain;              /* the same; compared lowercased, no trailing dot */
	const char *pkg_name;
	const char *pkg_version;         /* NULL: any version */
	const char *reason;
	bool has_uid;
	int64_t uid;                     /* matches uid or euid */
	bool include_cold;               /* also lines of segments moved to the cold tier */
};

enum index_param_kind { INDEX_PARAM_INT, INDEX_PARAM_TEXT };

struct index_param {
	enum index_param_kind kind;
	int64_t i;
	const char *text;                /* borrowed from the query or from sql->strings */
};

/* A built statement: SQL text with ? placeholders, and the values to bind in order. */
struct index_sql {
	char sql[2048];
	struct index_param params[INDEX_SQL_MAX_PARAMS];
	size_t n_params;
	char strings[4][1024];           /* derived values (prefix bounds, lowercased names) */
	size_t n_strings;
};

/*
 * Builds the SELECT for q (columns: seq, segment, off, len, ordered by seq). Pure.
 * Returns 0, or -E2BIG when a value or the statement does not fit.
 */
int index_sql_build(const struct index_query *q, struct index_sql *out);

/*
 * Splits "a,b,c" (modified in place) into q->events. Returns 0, -EINVAL on an empty
 * item, -E2BIG beyond INDEX_QUERY_MAX_EVENTS.
 */
int index_query_set_events(struct index_query *q, char *list);

/*
 * Splits NAME[@VERSION] (modified in place; a leading '@' is part of the name, as in
 * npm's "@scope/pkg"). Returns 0 or -EINVAL on an empty name.
 */
int index_query_set_package(struct index_query *q, char *spec);

/* Called with each matching line (NUL-terminated, without '\n') and its row's seq. */
typedef int (*index_result_fn)(void *ctx, uint64_t seq, const char *line, size_t len);

/*
 * Runs q on db and calls fn for each match in seq order; fn returning non-zero stops.
 * A line whose bytes no longer match the index (a segment moved, or rewritten) stops
 * the run with -ESTALE: `sandgate reindex` repairs it. Returns 0, fn's value, -EIO,
 * -ENOMEM, -ESTALE.
 */
int index_query_run(struct index_db *db, const struct index_query *q, index_result_fn fn,
		    void *ctx);

#endif
