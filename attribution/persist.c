/*
 * The registry on disk: STATE_DIR/sessions/<id>.json, one object per session, replaced
 * atomically (temp file, fsync, rename, fsync of the directory) so a crash leaves the old
 * or the new version, never a torn one. Format: docs/sessions.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "attribution/attribution.h"
#include "attribution/registry_int.h"

#define SESSION_FILE_MAX (64 * 1024)

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *int_or_null(int64_t v)
{
	return v > 0 ? json_integer(v) : json_null();
}

static json_t *limits_json(const struct session_limits *l)
{
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "memory", int_or_null(l->memory),
			 "cpus", l->millicpus > 0 ? json_real((double)l->millicpus / 1000.0)
						  : json_null(),
			 "pids", int_or_null(l->pids), "disk", int_or_null(l->disk),
			 "timeout", int_or_null(l->timeout_s), "net_rate",
			 int_or_null(l->net_rate));
}

json_t *session_containment_json(const struct session *s)
{
	json_t *caps = json_array();
	int cap;

	for (cap = 0; caps && cap <= CONTAIN_CAP_MAX; cap++)
		if ((s->cap_add >> cap & 1) && contain_cap_name(cap))
			json_array_append_new(caps, json_string(contain_cap_name(cap)));
	return json_pack("{s:s,s:b,s:o}", "mode", s->privileged ? "privileged" : "contained",
			 "privileged", s->privileged, "cap_add", caps ? caps : json_array());
}

/* "containment": {"privileged": b, "cap_add": [names]}; absent in files before it. */
static int parse_containment(const json_t *o, struct session *s)
{
	const json_t *c = json_object_get(o, "containment"), *caps, *v;
	size_t i;
	int cap;

	if (!c || json_is_null(c))
		return 0;
	if (!json_is_object(c))
		return -EINVAL;
	s->privileged = json_is_true(json_object_get(c, "privileged"));
	caps = json_object_get(c, "cap_add");
	if (caps && !json_is_array(caps))
		return -EINVAL;
	json_array_foreach(caps, i, v) {
		if (!json_is_string(v) || contain_cap_parse(json_string_value(v), &cap) < 0)
			return -EINVAL;
		s->cap_add |= 1ULL << cap;
	}
	return 0;
}

json_t *session_to_json(const struct session *s)
{
	json_t *ifs = json_array(), *o;
	size_t i;

	for (i = 0; ifs && i < s->n_ifaces; i++)
		json_array_append_new(ifs, json_string(s->ifaces[i]));
	o = json_pack("{s:s,s:i,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:s,s:I,s:b,s:i}",
		      "format", "sandgate.session/1", "version", 1, "id", s->id,
		      "tenant_id", str_or_null(s->tenant), "user_id", str_or_null(s->user),
		      "template", str_or_null(s->template_name), "policy", str_or_null(s->policy),
		      "workdir", str_or_null(s->workdir), "resources", limits_json(&s->lim),
		      "ifaces", ifs ? ifs : json_null(), "state", session_state_name(s->state),
		      "mark", (json_int_t)s->mark, "adopted", s->adopted, "v1", (int)s->v1_mask);
	if (!o)
		return NULL;
	if (json_object_set_new(o, "cgroup", json_string(s->cgroup)) ||
	    json_object_set_new(o, "cgroup_id", json_integer((json_int_t)s->cgroup_id)) ||
	    json_object_set_new(o, "created_us", json_integer(s->created_us)) ||
	    json_object_set_new(o, "attached", json_boolean(s->attached)) ||
	    json_object_set_new(o, "end_when_empty", json_boolean(s->end_when_empty)) ||
	    json_object_set_new(o, "started_us", int_or_null(s->started_us)) ||
	    json_object_set_new(o, "ended_us", int_or_null(s->ended_us)) ||
	    json_object_set_new(o, "end_reason", str_or_null(s->end_reason)) ||
	    json_object_set_new(o, "exit_status",
				s->exit_status >= 0 ? json_integer(s->exit_status) : json_null()) ||
	    json_object_set_new(o, "containment", session_containment_json(s))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Copies an optional string member; a present non-string is an error. */
static int opt_str(const json_t *o, const char *key, char **out)
{
	const json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return -EINVAL;
	*out = strdup(json_string_value(v));
	return *out ? 0 : -ENOMEM;
}

static int64_t opt_int(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static int parse_state(const char *name, enum session_state *st)
{
	enum session_state i;

	for (i = SESSION_CREATED; i <= SESSION_TERMINATED; i++) {
		if (strcmp(name, session_state_name(i)) == 0) {
			*st = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_limits(const json_t *o, struct session_limits *l)
{
	const json_t *r = json_object_get(o, "resources"), *cpus;

	if (!json_is_object(r))
		return -EINVAL;
	l->memory = opt_int(r, "memory");
	l->pids = opt_int(r, "pids");
	l->disk = opt_int(r, "disk");
	l->timeout_s = opt_int(r, "timeout");
	l->net_rate = opt_int(r, "net_rate");   /* absent in records of older versions */
	cpus = json_object_get(r, "cpus");
	if (json_is_number(cpus) && !(json_number_value(cpus) > 0 &&
				      json_number_value(cpus) <= SESSION_CPUS_MAX))
		return -EINVAL;
	l->millicpus = json_is_number(cpus) ? (int64_t)(json_number_value(cpus) * 1000 + 0.5)
					    : 0;
	return l->timeout_s <= SESSION_TIMEOUT_MAX ? 0 : -EINVAL;
}

static int parse_ifaces(const json_t *o, struct session *s)
{
	const json_t *a = json_object_get(o, "ifaces"), *v;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) > SESSION_IFACES_MAX)
		return -EINVAL;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v))
			return -EINVAL;
		s->ifaces[i] = strdup(json_string_value(v));
		if (!s->ifaces[i])
			return -ENOMEM;
		s->n_ifaces = i + 1;
	}
	return 0;
}

static int parse_core(const json_t *o, struct session *s)
{
	const char *id = json_string_value(json_object_get(o, "id"));
	const char *cg = json_string_value(json_object_get(o, "cgroup"));
	const char *st = json_string_value(json_object_get(o, "state"));
	int64_t mark = opt_int(o, "mark");

	if (!id || !session_id_valid(id) || !cg || cg[0] != '/' ||
	    strlen(cg) >= sizeof(s->cgroup) || strstr(cg, "/..") || !st ||
	    parse_state(st, &s->state) < 0 || mark < 1 || mark > SESSION_MARK_MAX)
		return -EINVAL;
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", cg);
	s->mark = (uint32_t)mark;
	s->cgroup_id = (uint64_t)opt_int(o, "cgroup_id");
	s->adopted = json_is_true(json_object_get(o, "adopted"));
	s->attached = json_is_true(json_object_get(o, "attached"));
	/* Missing: saved before 2026-12, when every session ended when empty. */
	s->end_when_empty = !json_is_false(json_object_get(o, "end_when_empty"));
	s->v1_mask = (unsigned)opt_int(o, "v1") & (CG_MEMORY | CG_CPU | CG_PIDS);
	s->created_us = opt_int(o, "created_us");
	s->started_us = opt_int(o, "started_us");
	s->ended_us = opt_int(o, "ended_us");
	if (json_is_integer(json_object_get(o, "exit_status")))
		s->exit_status = opt_int(o, "exit_status");
	return 0;
}

int session_from_json(const json_t *o, struct session **out)
{
	struct session *s = session_alloc();
	int ret;

	if (!s)
		return -ENOMEM;
	ret = json_is_object(o) ? parse_core(o, s) : -EINVAL;
	if (ret == 0)
		ret = parse_limits(o, &s->lim);
	if (ret == 0)
		ret = parse_ifaces(o, s);
	if (ret == 0)
		ret = opt_str(o, "tenant_id", &s->tenant);
	if (ret == 0)
		ret = opt_str(o, "user_id", &s->user);
	if (ret == 0)
		ret = opt_str(o, "template", &s->template_name);
	if (ret == 0)
		ret = opt_str(o, "policy", &s->policy);
	if (ret == 0)
		ret = opt_str(o, "workdir", &s->workdir);
	if (ret == 0)
		ret = opt_str(o, "end_reason", &s->end_reason);
	if (ret == 0)
		ret = parse_containment(o, s);
	if (ret) {
		session_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int sessions_save(struct session_reg *r, const struct session *s)
{
	char tmp[1024], path[1024], *text;
	json_t *o = session_to_json(s);
	bool existed;
	int fd, ret;

	text = o ? json_dumps(o, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	if (!text)
		return -ENOMEM;
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", r->dir, s->id);
	snprintf(path, sizeof(path), "%s/%s.json", r->dir, s->id);
	existed = access(path, F_OK) == 0;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		free(text);
		return -errno;
	}
	ret = fd_write_all(fd, text, strlen(text));
	if (ret == 0)
		ret = fd_write_all(fd, "\n", 1);
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	/* Replacing a name needs no directory sync: old or new, either is whole. */
	if (ret)
		unlink(tmp);
	else if (!existed)
		ret = dir_fsync(r->dir);
	free(text);
	return ret;
}

static bool mark_taken(struct session_reg *r, uint32_t mark)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i]->mark == mark)
			return true;
	return false;
}

/* One file: parse, check it names itself, and take it; bad ones are set aside. */
static int load_one(struct session_reg *r, const char *name, size_t *bad)
{
	char path[1024], aside[1100];
	json_error_t jerr;
	struct session *s = NULL;
	json_t *o;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", r->dir, name);
	o = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	ret = o ? session_from_json(o, &s) : -EINVAL;
	json_decref(o);
	if (ret == 0 && (strncmp(name, s->id, strlen(s->id)) != 0 ||
			 strcmp(name + strlen(s->id), ".json") != 0 || sessions_find(r, s->id) ||
			 mark_taken(r, s->mark)))
		ret = -EINVAL;
	if (ret == 0)
		ret = sessions_add(r, s);
	if (ret == 0)
		return 0;
	session_free(s);
	if (ret == -EINVAL) {
		snprintf(aside, sizeof(aside), "%s.bad", path);
		if (rename(path, aside) < 0)
			unlink(path);
		(*bad)++;
		ret = 0;
	}
	return ret;
}

int sessions_load(struct session_reg *r, size_t *bad)
{
	struct dirent *de;
	DIR *d = opendir(r->dir);
	int ret = 0;
	size_t n;

	*bad = 0;
	if (!d)
		return -errno;
	while (ret == 0 && (de = readdir(d))) {
		n = strlen(de->d_name);
		if (de->d_name[0] == '.' || n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		ret = load_one(r, de->d_name, bad);
	}
	closedir(d);
	return ret;
}
