/*
 * Journal line -> index row (index/index.h). Lines carry bytes a sandbox chose, so
 * nothing here trusts the shape beyond what it checks: wrong types are treated as
 * absent, and only the envelope's seq, ts and event are required.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "journal/envelope.h"
#include "index/index.h"

/* Fields whose value is a file path, and those whose value is a network name. */
static const char *const path_keys[] = { "path", "new_path", "exe", "target" };
static const char *const domain_keys[] = { "qname", "domain", "sni", "http_host" };

/* A copy of a string value up to its first NUL (no path or name holds one), or NULL. */
static int dup_str(json_t *o, const char *key, char **out)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!json_is_string(v))
		return 0;
	*out = strdup(json_string_value(v));
	return *out ? 0 : -ENOMEM;
}

static void get_int(json_t *o, const char *key, int64_t *v, bool *has)
{
	json_t *j = json_object_get(o, key);

	*has = json_is_integer(j);
	*v = *has ? (int64_t)json_integer_value(j) : 0;
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

static int add_names(json_t *o, struct index_row *row, const char *const *keys, size_t nk,
		     enum index_name_kind kind)
{
	for (size_t i = 0; i < nk && row->n_names < INDEX_MAX_NAMES; i++) {
		char *v;
		int ret = dup_str(o, keys[i], &v);

		if (ret)
			return ret;
		if (!v)
			continue;
		if (!*v) {
			free(v);
			continue;
		}
		if (kind == INDEX_NAME_DOMAIN)
			normalise_domain(v);
		row->names[row->n_names].kind = kind;
		row->names[row->n_names++].value = v;
	}
	return 0;
}

/* seq, ts and event from their fixed places; session_id from the parsed object. */
static int extract_envelope(const char *line, size_t len, json_t *o, struct index_row *row)
{
	struct line_envelope env;
	int ret = line_envelope_parse(line, len, &env);

	if (ret)
		return ret;
	row->seq = env.seq;
	ret = line_ts_parse(env.ts, 27, &row->ts_us);
	if (ret == 0 && !(row->event = strndup(env.event, env.event_len)))
		ret = -ENOMEM;
	if (ret == 0)
		ret = dup_str(o, "session_id", &row->session_id);
	return ret;
}

static int extract_package(json_t *o, struct index_row *row)
{
	int ret = dup_str(o, "name", &row->pkg_name);

	if (ret == 0)
		ret = dup_str(o, "resolved_version", &row->pkg_version);
	if (ret == 0 && !row->pkg_version)
		ret = dup_str(o, "requested_version", &row->pkg_version);
	return ret;
}

static int extract_fields(const char *line, size_t len, json_t *o, struct index_row *row)
{
	int ret = extract_envelope(line, len, o, row);

	if (ret == 0)
		ret = dup_str(o, "reason", &row->reason);
	if (ret == 0 && strncmp(row->event, "package.", 8) == 0)
		ret = extract_package(o, row);
	if (ret == 0)
		ret = add_names(o, row, path_keys, sizeof(path_keys) / sizeof(path_keys[0]),
				INDEX_NAME_PATH);
	if (ret == 0)
		ret = add_names(o, row, domain_keys,
				sizeof(domain_keys) / sizeof(domain_keys[0]), INDEX_NAME_DOMAIN);
	get_int(o, "uid", &row->uid, &row->has_uid);
	get_int(o, "euid", &row->euid, &row->has_euid);
	get_int(o, "pid", &row->pid, &row->has_pid);
	get_int(o, "ppid", &row->ppid, &row->has_ppid);
	return ret;
}

int index_extract(const char *line, size_t len, struct index_row *row)
{
	json_t *o;
	int ret;

	memset(row, 0, sizeof(*row));
	ret = line_json_load(line, len, &o);
	if (ret)
		return ret;
	ret = extract_fields(line, len, o, row);
	json_decref(o);
	return ret;
}

void index_row_free(struct index_row *row)
{
	free(row->event);
	free(row->session_id);
	free(row->pkg_name);
	free(row->pkg_version);
	free(row->reason);
	for (size_t i = 0; i < row->n_names; i++)
		free(row->names[i].value);
	memset(row, 0, sizeof(*row));
}
