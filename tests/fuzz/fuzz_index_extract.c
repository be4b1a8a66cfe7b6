/*
 * libFuzzer target, differential: the index's one-pass extractor (index/index_scan.c,
 * index_extract) against the jansson-based extraction it replaced (below, as it was).
 * Both must refuse the same lines and, on the others, yield the same row; and neither
 * may crash, leak or read out of bounds on any bytes.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "journal/envelope.h"
#include "index/index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct ref_row {
	int64_t uid, euid, pid, ppid;
	bool has_uid, has_euid, has_pid, has_ppid;
	const char *str[5];          /* session_id, reason, pkg_name, pkg_version, event */
	const char *names[INDEX_MAX_NAMES];
	int kinds[INDEX_MAX_NAMES];
	size_t n_names;
	char *owned[5 + INDEX_MAX_NAMES];
	size_t n_owned;
};

static const char *ref_str(json_t *o, const char *key, struct ref_row *r)
{
	json_t *v = json_object_get(o, key);
	char *s;

	if (!json_is_string(v))
		return NULL;
	s = strdup(json_string_value(v));
	if (!s)
		abort();
	r->owned[r->n_owned++] = s;
	return s;
}

static void ref_int(json_t *o, const char *key, int64_t *v, bool *has)
{
	json_t *j = json_object_get(o, key);

	*has = json_is_integer(j);
	*v = *has ? (int64_t)json_integer_value(j) : 0;
}

static void ref_names(json_t *o, struct ref_row *r, const char *const *keys, int kind)
{
	for (size_t i = 0; i < 4 && r->n_names < INDEX_MAX_NAMES; i++) {
		char *v = (char *)ref_str(o, keys[i], r);
		size_t n;

		if (!v || !*v)
			continue;
		if (kind == INDEX_NAME_DOMAIN) {
			for (char *p = v; *p; p++)
				*p = (char)tolower((unsigned char)*p);
			n = strlen(v);
			if (n > 1 && v[n - 1] == '.')
				v[n - 1] = '\0';
		}
		r->kinds[r->n_names] = kind;
		r->names[r->n_names++] = v;
	}
}

static const char *const path_keys[] = { "path", "new_path", "exe", "target" };
static const char *const domain_keys[] = { "qname", "domain", "sni", "http_host" };

static void ref_fields(json_t *o, const struct line_envelope *env, struct ref_row *r)
{
	char *ev = strndup(env->event, env->event_len);

	if (!ev)
		abort();
	r->owned[r->n_owned++] = ev;
	r->str[4] = ev;
	r->str[0] = ref_str(o, "session_id", r);
	r->str[1] = ref_str(o, "reason", r);
	if (strncmp(ev, "package.", 8) == 0) {
		r->str[2] = ref_str(o, "name", r);
		r->str[3] = ref_str(o, "resolved_version", r);
		if (!r->str[3])
			r->str[3] = ref_str(o, "requested_version", r);
	}
	ref_names(o, r, path_keys, INDEX_NAME_PATH);
	ref_names(o, r, domain_keys, INDEX_NAME_DOMAIN);
	ref_int(o, "uid", &r->uid, &r->has_uid);
	ref_int(o, "euid", &r->euid, &r->has_euid);
	ref_int(o, "pid", &r->pid, &r->has_pid);
	ref_int(o, "ppid", &r->ppid, &r->has_ppid);
}

/* The extraction as it was before index_scan: 0 and r filled, or -EINVAL. */
static int ref_extract(const char *line, size_t len, struct ref_row *r)
{
	struct line_envelope env;
	int64_t ts;
	json_t *o;
	int ret;

	/* A raw NUL byte: not JSON; jansson takes it between some tokens (after a
	 * keyword) and not others. The extractor refuses every such line: so does this. */
	if (memchr(line, '\0', len))
		return -EINVAL;
	ret = line_json_load(line, len, &o);
	if (ret)
		return ret;
	ret = line_envelope_parse(line, len, &env);
	if (ret == 0)
		ret = line_ts_parse(env.ts, LINE_TS_LEN, &ts);
	if (ret == 0)
		ref_fields(o, &env, r);
	json_decref(o);
	return ret;
}

static void same_str(const char *a, const char *b)
{
	if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
		abort();
}

static void compare(const struct ref_row *r, const struct index_row *row)
{
	same_str(r->str[0], row->session_id);
	same_str(r->str[1], row->reason);
	same_str(r->str[2], row->pkg_name);
	same_str(r->str[3], row->pkg_version);
	same_str(r->str[4], row->event);
	if (r->has_uid != row->has_uid || r->uid != row->uid || r->has_euid != row->has_euid ||
	    r->euid != row->euid || r->has_pid != row->has_pid || r->pid != row->pid ||
	    r->has_ppid != row->has_ppid || r->ppid != row->ppid || r->n_names != row->n_names)
		abort();
	for (size_t i = 0; i < r->n_names; i++) {
		same_str(r->names[i], row->names[i].value);
		if (r->kinds[i] != (int)row->names[i].kind)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ref_row r = { 0 };
	struct index_row row;
	int a = ref_extract((const char *)data, size, &r);
	int b = index_extract((const char *)data, size, &row);

	if (a == -ENOMEM || b == -ENOMEM)
		goto out;
	if (a != b)
		abort();
	if (a == 0)
		compare(&r, &row);
out:
	index_row_free(&row);
	for (size_t i = 0; i < r.n_owned; i++)
		free(r.owned[i]);
	return 0;
}
