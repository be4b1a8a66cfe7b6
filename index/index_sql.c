/*
 * The query builder (index/index_query.h). Only fixed SQL fragments are appended to the
 * statement; every user value goes into the parameter list.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "index/index_query.h"

static int add_sql(struct index_sql *s, const char *frag)
{
	size_t have = strlen(s->sql), add = strlen(frag);

	if (have + add + 1 > sizeof(s->sql))
		return -E2BIG;
	memcpy(s->sql + have, frag, add + 1);
	return 0;
}

static int add_text(struct index_sql *s, const char *v)
{
	if (s->n_params == INDEX_SQL_MAX_PARAMS)
		return -E2BIG;
	s->params[s->n_params++] = (struct index_param){ .kind = INDEX_PARAM_TEXT, .text = v };
	return 0;
}

static int add_int(struct index_sql *s, int64_t v)
{
	if (s->n_params == INDEX_SQL_MAX_PARAMS)
		return -E2BIG;
	s->params[s->n_params++] = (struct index_param){ .kind = INDEX_PARAM_INT, .i = v };
	return 0;
}

/* A copy of v in out's own storage, for values the builder derives. */
static int own(struct index_sql *s, const char *v, size_t len, char **out)
{
	char *dst;

	if (s->n_strings == sizeof(s->strings) / sizeof(s->strings[0]) ||
	    len + 2 > sizeof(s->strings[0]))
		return -E2BIG;
	dst = s->strings[s->n_strings++];
	memcpy(dst, v, len);
	dst[len] = '\0';
	*out = dst;
	return 0;
}

/*
 * names.value = v, or for "prefix*" the range [prefix, prefix+0xFF): the journal's text
 * is valid UTF-8, which never holds the byte 0xFF, and a range uses the index.
 */
static int add_name(struct index_sql *s, int kind, const char *v, bool lower)
{
	size_t len = strlen(v);
	bool prefix = len > 0 && v[len - 1] == '*';
	char *val;
	int ret;

	if (prefix)
		len--;
	ret = own(s, v, len, &val);
	if (ret)
		return ret;
	for (char *p = val; lower && *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (lower && !prefix && len > 1 && val[len - 1] == '.')
		val[len - 1] = '\0';
	/* names holds postings: each row's seqs is a JSON array of the lines. */
	ret = add_sql(s, kind == INDEX_NAME_PATH
			 ? " AND seq IN (SELECT p.value FROM names, json_each(names.seqs) AS p"
			   " WHERE kind = 1"
			 : " AND seq IN (SELECT p.value FROM names, json_each(names.seqs) AS p"
			   " WHERE kind = 2");
	if (ret == 0 && !prefix)
		ret = add_sql(s, " AND names.value = ?)");
	if (ret == 0 && prefix)
		ret = add_sql(s, " AND names.value >= ? AND names.value < ?)");
	if (ret == 0)
		ret = add_text(s, val);
	if (ret == 0 && prefix) {
		char *hi;

		ret = own(s, val, strlen(val), &hi);
		if (ret == 0) {
			size_t n = strlen(hi);

			hi[n] = (char)0xff;
			hi[n + 1] = '\0';
			ret = add_text(s, hi);
		}
	}
	return ret;
}

static int add_events(struct index_sql *s, const struct index_query *q)
{
	int ret = add_sql(s, " AND eid IN (SELECT id FROM event_names WHERE event IN (");

	for (size_t i = 0; i < q->n_events && ret == 0; i++) {
		ret = add_sql(s, i ? ",?" : "?");
		if (ret == 0)
			ret = add_text(s, q->events[i]);
	}
	return ret ? ret : add_sql(s, "))");
}

static int add_eq(struct index_sql *s, const char *frag, const char *v)
{
	int ret = add_sql(s, frag);

	return ret ? ret : add_text(s, v);
}

static int add_scalars(struct index_sql *s, const struct index_query *q)
{
	int ret = 0;

	if (q->session)
		ret = add_eq(s, " AND sid = (SELECT id FROM sessions WHERE session_id = ?)",
			     q->session);
	if (ret == 0 && q->has_since && (ret = add_sql(s, " AND ts >= ?")) == 0)
		ret = add_int(s, q->since_us);
	if (ret == 0 && q->has_until && (ret = add_sql(s, " AND ts <= ?")) == 0)
		ret = add_int(s, q->until_us);
	if (ret == 0 && q->n_events)
		ret = add_events(s, q);
	if (ret == 0 && q->pkg_name)
		ret = add_eq(s, " AND pkg_name = ?", q->pkg_name);
	if (ret == 0 && q->pkg_version)
		ret = add_eq(s, " AND pkg_version = ?", q->pkg_version);
	if (ret == 0 && q->reason)
		ret = add_eq(s, " AND reason = ?", q->reason);
	/* euid is indexed where it differs from uid (index_schema.h): the second branch
	 * says so, which lets it use that index. */
	if (ret == 0 && q->has_uid &&
	    (ret = add_sql(s, " AND (uid = ? OR (euid = ? AND euid IS NOT uid))")) == 0) {
		ret = add_int(s, q->uid);
		if (ret == 0)
			ret = add_int(s, q->uid);
	}
	return ret;
}

int index_sql_build(const struct index_query *q, struct index_sql *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = add_sql(out, "SELECT seq, segment, off, len FROM events WHERE 1");
	if (ret == 0)
		ret = add_scalars(out, q);
	if (ret == 0 && q->path)
		ret = add_name(out, INDEX_NAME_PATH, q->path, false);
	if (ret == 0 && q->domain)
		ret = add_name(out, INDEX_NAME_DOMAIN, q->domain, true);
	/* A question on time alone walks (eid, ts) once per event name (no ts index). */
	if (ret == 0 && (q->has_since || q->has_until) && !q->session && !q->n_events &&
	    !q->pkg_name && !q->reason && !q->has_uid && !q->path && !q->domain)
		ret = add_sql(out, " AND eid IN (SELECT id FROM event_names)");
	if (ret == 0 && !q->include_cold)
		ret = add_sql(out, " AND segment NOT IN (SELECT segment FROM cold)");
	if (ret == 0)
		ret = add_sql(out, " ORDER BY seq");
	return ret;
}

int index_query_set_events(struct index_query *q, char *list)
{
	char *save = NULL, *tok;
	size_t len = strlen(list);

	if (len == 0 || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"))
		return -EINVAL;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (q->n_events == INDEX_QUERY_MAX_EVENTS)
			return -E2BIG;
		q->events[q->n_events++] = tok;
	}
	return 0;
}

int index_query_set_package(struct index_query *q, char *spec)
{
	char *at = spec[0] ? strrchr(spec + 1, '@') : NULL;

	if (at) {
		*at = '\0';
		q->pkg_version = at[1] ? at + 1 : NULL;
	}
	q->pkg_name = spec;
	return spec[0] ? 0 : -EINVAL;
}
