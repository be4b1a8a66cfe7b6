/*
 * session.create: check every argument, then make the cgroup (or adopt one), apply the
 * limits, register the attribution, persist, watch and log. Any failure undoes what was
 * done, so a refused create leaves no cgroup, element or file behind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attribution/cgmap.h"
#include "sessions/session_int.h"
#include "nft/nft.h"

static const char *const create_keys[] = {
	"id", "tenant", "tenant_id", "user", "user_id", "template", "policy", "memory", "cpus",
	"pids", "disk", "timeout", "iface", "cgroup", "workdir", "net_rate", "end_when_empty",
	"privileged", "cap_add", NULL,
};

static int dup_opt(const json_t *args, const char *key, const char *alt, char **out,
		   char *err, size_t errlen)
{
	const char *v = NULL;
	int ret = arg_str(args, key, 256, &v, err, errlen);

	if (ret == 0 && !v && alt)
		ret = arg_str(args, alt, 256, &v, err, errlen);
	if (ret || !v)
		return ret;
	*out = strdup(v);
	return *out ? 0 : -ENOMEM;
}

static int parse_cpus(const json_t *args, int64_t *milli, char *err, size_t errlen)
{
	const json_t *v = json_object_get(args, "cpus");
	double d;

	*milli = 0;
	if (!v || json_is_null(v))
		return 0;
	d = json_is_number(v) ? json_number_value(v) : -1;
	if (!(d > 0 && d <= SESSION_CPUS_MAX)) {
		snprintf(err, errlen, "\"cpus\" must be a number above 0 (e.g. 0.5, 2)");
		return -EINVAL;
	}
	*milli = (int64_t)(d * 1000 + 0.5);
	if (*milli == 0)
		*milli = 1;
	return 0;
}

static int parse_limits(const json_t *args, struct session_limits *l, char *err,
			size_t errlen)
{
	int ret = arg_int(args, "memory", &l->memory, err, errlen);

	if (ret == 0)
		ret = arg_int(args, "pids", &l->pids, err, errlen);
	if (ret == 0)
		ret = arg_int(args, "disk", &l->disk, err, errlen);
	if (ret == 0)
		ret = arg_int(args, "timeout", &l->timeout_s, err, errlen);
	if (ret == 0)
		ret = parse_cpus(args, &l->millicpus, err, errlen);
	if (ret == 0)
		ret = arg_int(args, "net_rate", &l->net_rate, err, errlen);
	if (ret == 0 && (l->net_rate == 0 || l->net_rate > (int64_t)NFT_RATE_MAX)) {
		snprintf(err, errlen, "\"net_rate\" must be 1 to %llu bytes/second",
			 (unsigned long long)NFT_RATE_MAX);
		ret = -EINVAL;
	}
	if (ret == 0 && l->memory >= 0 && l->memory < 4096) {
		snprintf(err, errlen, "\"memory\" must be at least 4096 bytes");
		ret = -EINVAL;
	}
	if (ret == 0 && l->timeout_s > SESSION_TIMEOUT_MAX) {
		snprintf(err, errlen, "\"timeout\" must be at most %lld seconds",
			 SESSION_TIMEOUT_MAX);
		ret = -EINVAL;
	}
	return ret;
}

static bool ifname_ok(const char *n)
{
	size_t len = strlen(n);

	return len > 0 && len < 16 && !strchr(n, '/') && !strchr(n, ' ') &&
	       strcmp(n, ".") != 0 && strcmp(n, "..") != 0;
}

static int parse_ifaces(const json_t *args, struct session *s, char *err, size_t errlen)
{
	const json_t *a = json_object_get(args, "iface"), *v;
	size_t i;

	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a) || json_array_size(a) > SESSION_IFACES_MAX)
		goto bad;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || !ifname_ok(json_string_value(v)))
			goto bad;
		s->ifaces[i] = strdup(json_string_value(v));
		if (!s->ifaces[i])
			return -ENOMEM;
		s->n_ifaces = i + 1;
	}
	return 0;
bad:
	snprintf(err, errlen, "\"iface\" must be an array of at most %d interface names",
		 SESSION_IFACES_MAX);
	return -EINVAL;
}

static int parse_workdir(const json_t *args, struct session *s, char *err, size_t errlen)
{
	const char *w = NULL;
	struct stat st;
	int ret = arg_str(args, "workdir", 1024, &w, err, errlen);

	if (ret || !w)
		return ret;
	/* cleanup --fs deleted removes it: never "/", never a path that climbs. */
	if (w[0] != '/' || strcmp(w, "/") == 0 || strstr(w, "/..") || stat(w, &st) < 0 ||
	    !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "\"workdir\" must be an existing absolute directory, not /");
		return -EINVAL;
	}
	s->workdir = strdup(w);
	return s->workdir ? 0 : -ENOMEM;
}

/* The daemon's own v2 cgroup (from /proc/self/cgroup), "" when unreadable. */
static void own_cgroup(char *out, size_t len)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");
	size_t got = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	out[0] = '\0';
	if (f)
		fclose(f);
	if (proc_cgroup_v2(buf, got, out, len) < 0)
		out[0] = '\0';
}

/*
 * --cgroup: any existing v2 cgroup the daemon can see (a container's scope, a systemd
 * slice, one below the session parent): attribution follows its id, the session id is
 * the caller's. Not the root, not the daemon's own cgroup or one holding it, not one
 * inside or around another session's.
 */
static int parse_cgroup(struct sessions *ss, const json_t *args, struct session *s,
			char *err, size_t errlen)
{
	const char *cg = NULL, *prefix = ss->conf.session_prefix;
	char other[SESSION_ID_MAX + 1], self[4096];
	size_t n;
	int ret = arg_str(args, "cgroup", sizeof(s->cgroup) - 1, &cg, err, errlen);

	if (ret)
		return ret;
	if (!cg) {
		snprintf(s->cgroup, sizeof(s->cgroup), "%s/%s", prefix, s->id);
		return 0;
	}
	n = strlen(cg);
	if (cg[0] != '/' || n < 2 || cg[n - 1] == '/' || strstr(cg, "/..") || strstr(cg, "//") ||
	    strstr(cg, "/./")) {
		snprintf(err, errlen, "\"cgroup\" must be a cgroup v2 path from the mount, "
			 "e.g. /system.slice/docker-ID.scope (not /, no .., no trailing /)");
		return -EINVAL;
	}
	own_cgroup(self, sizeof(self));
	if (self[0] && strncmp(self, cg, n) == 0 && (self[n] == '\0' || self[n] == '/')) {
		snprintf(err, errlen, "cgroup %s holds sandgated itself", cg);
		return -EINVAL;
	}
	if (cgmap_overlap(cg, other, sizeof(other)) == 0) {
		snprintf(err, errlen, "cgroup %s is, holds or lies inside session %s's", cg, other);
		return -EEXIST;
	}
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", cg);
	s->adopted = true;
	return 0;
}

/* Who ends the session: by default the orchestrator (terminate), its timeout or a limit. */
static int parse_end_when_empty(const json_t *args, struct session *s, char *err,
				size_t errlen)
{
	const json_t *v = json_object_get(args, "end_when_empty");

	if (v && !json_is_boolean(v) && !json_is_null(v)) {
		snprintf(err, errlen, "\"end_when_empty\" must be true or false");
		return -EINVAL;
	}
	s->end_when_empty = json_is_true(v);
	return 0;
}

/* --privileged (no containment at all) or --cap-add (capabilities kept beyond the
 * default set); either is recorded in session.create's "containment". */
static int parse_containment(const json_t *args, struct session *s, char *err,
			     size_t errlen)
{
	const json_t *p = json_object_get(args, "privileged"), *caps, *v;
	size_t i;
	int cap;

	if (p && !json_is_boolean(p) && !json_is_null(p)) {
		snprintf(err, errlen, "\"privileged\" must be true or false");
		return -EINVAL;
	}
	s->privileged = json_is_true(p);
	caps = json_object_get(args, "cap_add");
	if (!caps || json_is_null(caps))
		return 0;
	if (!json_is_array(caps) || json_array_size(caps) > CONTAIN_CAP_MAX)
		goto bad;
	json_array_foreach(caps, i, v) {
		if (!json_is_string(v) || contain_cap_parse(json_string_value(v), &cap) < 0)
			goto bad;
		s->cap_add |= 1ULL << cap;
	}
	return 0;
bad:
	snprintf(err, errlen, "\"cap_add\" must be an array of capability names (CAP_NET_RAW)");
	return -EINVAL;
}

static int parse_create(struct sessions *ss, const json_t *args, struct session *s,
			char *err, size_t errlen)
{
	int ret = parse_limits(args, &s->lim, err, errlen);

	if (ret == 0)
		ret = dup_opt(args, "tenant", "tenant_id", &s->tenant, err, errlen);
	if (ret == 0)
		ret = dup_opt(args, "user", "user_id", &s->user, err, errlen);
	if (ret == 0)
		ret = dup_opt(args, "template", NULL, &s->template_name, err, errlen);
	if (ret == 0)
		ret = dup_opt(args, "policy", NULL, &s->policy, err, errlen);
	if (ret == 0 && !sess_policy(ss, s->policy)) {
		snprintf(err, errlen, "unknown policy \"%s\"", s->policy);
		ret = -EINVAL;
	}
	/* The limit lives in the gateway's ruleset: without a gateway nothing enforces it. */
	if (ret == 0 && s->lim.net_rate > 0 && !ss->conf.gateway_enabled) {
		snprintf(err, errlen, "\"net_rate\" needs the gateway (gateway.enabled: true):"
			 " the limit is a rule of its nftables ruleset");
		ret = -EINVAL;
	}
	if (ret == 0)
		ret = parse_ifaces(args, s, err, errlen);
	if (ret == 0)
		ret = parse_workdir(args, s, err, errlen);
	if (ret == 0)
		ret = parse_cgroup(ss, args, s, err, errlen);
	if (ret == 0)
		ret = parse_end_when_empty(args, s, err, errlen);
	if (ret == 0)
		ret = parse_containment(args, s, err, errlen);
	return ret;
}

static int make_cgroup(struct sessions *ss, struct session *s, char *err, size_t errlen)
{
	int ret = 0;

	if (!s->adopted)
		ret = cg_create(&ss->cg, s->cgroup, &s->lim, &s->v1_mask, err, errlen);
	if (ret == -EEXIST)
		snprintf(err, errlen, "cgroup %s already exists (adopt it with --cgroup)",
			 s->cgroup);
	if (ret == 0 && (ret = cg_id(&ss->cg, s->cgroup, &s->cgroup_id)) < 0)
		snprintf(err, errlen, "cgroup %s: %s", s->cgroup, strerror(-ret));
	if (ret == 0 && s->adopted) {
		char procs[600];

		cg_path(&ss->cg, s->cgroup, "cgroup.procs", procs, sizeof(procs));
		if (access(procs, F_OK) < 0) {
			snprintf(err, errlen, "%s is not a cgroup (no cgroup.procs)", s->cgroup);
			ret = -ENOTDIR;
		}
	}
	if (ret == 0 && cg_oom_kills(&ss->cg, s->cgroup, s->v1_mask, &s->oom_base) < 0)
		s->oom_base = 0;
	return ret;
}

static void emit_create(const struct session *s, const struct actor *a)
{
	struct event *e = event_new("session.create", s->id, EVENT_SRC_ORCHESTRATOR);
	json_t *res = session_to_json(s);
	char *text = res ? json_dumps(json_object_get(res, "resources"), JSON_COMPACT) : NULL;
	char *cont = res ? json_dumps(json_object_get(res, "containment"), JSON_COMPACT) : NULL;
	size_t i;

	if (e) {
		event_str(e, "tenant_id", s->tenant);
		event_str(e, "user_id", s->user);
		event_str(e, "template", s->template_name);
		event_str(e, "policy", s->policy ? s->policy : "default");
		event_raw(e, "resources", text ? text : "null");
		event_uint(e, "mark", sess_nft_mark(s->mark));
		event_str(e, "cgroup", s->cgroup);
		event_uint(e, "cgroup_id", s->cgroup_id);
		event_bool(e, "adopted", s->adopted);
		event_array_begin(e, "ifaces");
		for (i = 0; i < s->n_ifaces; i++)
			event_str(e, NULL, s->ifaces[i]);
		event_array_end(e);
		event_str(e, "workdir", s->workdir);
		event_bool(e, "end_when_empty", s->end_when_empty);
		event_raw(e, "containment", cont ? cont : "null");
		event_actor(e, a);
		event_emit(e);
	}
	free(cont);
	free(text);
	json_decref(res);
}

/* Registers s everywhere; on failure undoes each step in reverse. */
static int commit(struct sessions *ss, struct session *s, char *err, size_t errlen)
{
	bool frozen;
	int ret = make_cgroup(ss, s, err, errlen);

	if (ret)
		return ret;
	ret = sess_nft_add(ss, s);
	if (ret) {
		snprintf(err, errlen, "cannot add the nft elements: %s", strerror(-ret));
		goto undo_cg;
	}
	s->created_us = time_wall_us();
	ret = sessions_save(ss->reg, s);
	if (ret == 0)
		ret = sess_watch(ss, s);
	/* An adopted cgroup may already hold processes (a container): their exit is an
	 * end for --end-when-empty. */
	if (ret == 0 && cg_events(&ss->cg, s->cgroup, &s->populated, &frozen) < 0)
		s->populated = false;
	if (ret == 0)
		ret = sessions_add(ss->reg, s);
	if (ret == 0)
		return 0;
	snprintf(err, errlen, "cannot register session %s: %s", s->id, strerror(-ret));
	sess_unwatch(ss, s);
	sess_nft_del(ss, s);
undo_cg:
	if (!s->adopted)
		cg_remove(&ss->cg, s->cgroup, s->v1_mask, false);
	return ret;
}

/* An adopted cgroup's processes (a running container): the audit sensors follow them
 * from now on, as they follow a `sandgate run` child (their forks are in the past). */
static void seed_adopted(struct sessions *ss, const struct session *s)
{
	pid_t *pids = NULL;
	size_t n = 0;

	if (cg_pids(&ss->cg, s->cgroup, &pids, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++)
		sess_attached(ss, pids[i], s);
	free(pids);
}

static void unlink_file(struct sessions *ss, const char *id)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/sessions/%s.json", ss->conf.state_dir, id);
	unlink(path);
}

int verb_session_create(void *ctx, const struct control_peer *peer,
			const struct control_request *req, json_t **result, char *err,
			size_t errlen)
{
	struct sessions *ss = ctx;
	struct session *s = NULL;
	const char *id = NULL;
	struct actor a;
	int ret = args_only(req->args, create_keys, err, errlen);

	if (ret == 0)
		ret = arg_str(req->args, "id", SESSION_ID_MAX + 1, &id, err, errlen);
	if (ret == 0 && (!id || !session_id_valid(id))) {
		snprintf(err, errlen, "\"id\" must be 1-64 chars of [A-Za-z0-9._-], not starting "
			 "with '.'");
		return -EINVAL;
	}
	if (ret == 0 && (ret = sessions_prepare(ss->reg, id, &s)) == -EEXIST)
		snprintf(err, errlen, "session \"%s\" already exists", id);
	if (ret == 0)
		ret = parse_create(ss, req->args, s, err, errlen);
	if (ret == 0 && (ret = commit(ss, s, err, errlen)) < 0 && ret != -EEXIST)
		unlink_file(ss, s->id);
	if (ret) {
		session_free(s);
		return ret;
	}
	actor_from(&a, peer, req);
	emit_create(s, &a);
	if (s->adopted)
		seed_adopted(ss, s);
	*result = session_to_json(s);
	return *result ? 0 : -ENOMEM;
}
