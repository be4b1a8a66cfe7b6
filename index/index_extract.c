/*
 * Journal line -> index row (index/index.h). Lines carry bytes a sandbox chose, so
 * nothing here trusts the shape beyond what it checks: wrong types are treated as
 * absent, and only the envelope's seq, ts and event are required. The line is checked
 * and its fields located in one pass (index/index_scan.h), without a JSON tree: the
 * strings the row keeps are decoded into one buffer, so a row costs one allocation.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "journal/envelope.h"
#include "index/index.h"
#include "index/index_scan.h"

/* The top-level keys the row is made of. Paths, then network names, in this order. */
enum field {
	F_SESSION, F_REASON, F_NAME, F_RESOLVED, F_REQUESTED,
	F_PATH, F_NEW_PATH, F_EXE, F_TARGET,
	F_QNAME, F_DOMAIN, F_SNI, F_HTTP_HOST,
	F_UID, F_EUID, F_PID, F_PPID, F_COUNT
};

static const char *const field_keys[F_COUNT] = {
	"session_id", "reason", "name", "resolved_version", "requested_version",
	"path", "new_path", "exe", "target",
	"qname", "domain", "sni", "http_host",
	"uid", "euid", "pid", "ppid",
};

/* Appends string field f decoded (up to a "\u0000") into the row's buffer, or NULL. */
static char *take(const char *line, const struct scan_val *vals, enum field f, char **at)
{
	char *s = *at;

	if (vals[f].kind != SCAN_STRING)
		return NULL;
	*at += index_scan_decode(line, &vals[f], s) + 1;
	return s;
}

/* Names are compared case-insensitively and without the root's trailing dot. */
static void normalise_domain(char *s)
{
	size_t n;

	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	n = strlen(s);
	if (n > 1 && s[n - 1] == '.')
		s[n - 1] = '\0';
}

static void add_names(const char *line, const struct scan_val *vals, struct index_row *row,
		      char **at, enum field from, enum field to, enum index_name_kind kind)
{
	for (enum field f = from; f <= to && row->n_names < INDEX_MAX_NAMES; f++) {
		char *v = take(line, vals, f, at);

		if (!v || !*v)
			continue;
		if (kind == INDEX_NAME_DOMAIN)
			normalise_domain(v);
		row->names[row->n_names].kind = kind;
		row->names[row->n_names++].value = v;
	}
}

static void get_int(const struct scan_val *v, int64_t *out, bool *has)
{
	*has = v->kind == SCAN_INT;
	*out = *has ? v->i : 0;
}

/* The buffer the row's strings live in: the event name and every string field kept. */
static size_t strings_size(const struct line_envelope *env, const struct scan_val *vals)
{
	size_t n = env->event_len + 1;

	for (size_t f = 0; f < F_COUNT; f++)
		if (vals[f].kind == SCAN_STRING)
			n += vals[f].end - vals[f].at + 1;
	return n;
}

static void fill_fields(const char *line, const struct scan_val *vals, struct index_row *row,
			char *at)
{
	row->session_id = take(line, vals, F_SESSION, &at);
	row->reason = take(line, vals, F_REASON, &at);
	if (strncmp(row->event, "package.", 8) == 0) {
		row->pkg_name = take(line, vals, F_NAME, &at);
		row->pkg_version = take(line, vals, F_RESOLVED, &at);
		if (!row->pkg_version)
			row->pkg_version = take(line, vals, F_REQUESTED, &at);
	}
	add_names(line, vals, row, &at, F_PATH, F_TARGET, INDEX_NAME_PATH);
	add_names(line, vals, row, &at, F_QNAME, F_HTTP_HOST, INDEX_NAME_DOMAIN);
	get_int(&vals[F_UID], &row->uid, &row->has_uid);
	get_int(&vals[F_EUID], &row->euid, &row->has_euid);
	get_int(&vals[F_PID], &row->pid, &row->has_pid);
	get_int(&vals[F_PPID], &row->ppid, &row->has_ppid);
}

/* The row from the line's envelope and its fields' values, however they were found. */
static int extract(const char *line, size_t len, const struct scan_val *vals,
		   struct index_row *row)
{
	struct line_envelope env;
	int ret;

	/* seq, ts and event from their fixed places (journal/envelope.h says why). */
	ret = line_envelope_parse(line, len, &env);
	if (ret == 0)
		ret = line_ts_parse(env.ts, LINE_TS_LEN, &row->ts_us);
	if (ret)
		return ret;
	row->seq = env.seq;
	row->strings = malloc(strings_size(&env, vals));
	if (!row->strings)
		return -ENOMEM;
	row->event = row->strings;
	memcpy(row->event, env.event, env.event_len);
	row->event[env.event_len] = '\0';
	fill_fields(line, vals, row, row->strings + env.event_len + 1);
	return 0;
}

int index_extract(const char *line, size_t len, struct index_row *row)
{
	struct scan_val vals[F_COUNT];
	int ret;

	memset(row, 0, sizeof(*row));
	ret = index_scan(line, len, field_keys, F_COUNT, vals);
	return ret ? ret : extract(line, len, vals, row);
}

int index_extract_shaped(const char *line, size_t len, const struct shape *shape,
			 struct index_row *row)
{
	struct scan_val vals[F_COUNT];

	memset(row, 0, sizeof(*row));
	if (index_scan_shaped(line, len, shape, field_keys, F_COUNT, vals) != 0)
		return index_extract(line, len, row);
	return extract(line, len, vals, row);
}

void index_row_free(struct index_row *row)
{
	free(row->strings);
	memset(row, 0, sizeof(*row));
}
