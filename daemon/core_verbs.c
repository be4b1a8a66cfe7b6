/* Verbs every daemon answers, and host facts the wiring needs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "daemon/daemon.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static int verb_ping(void *ctx, const struct control_peer *peer,
		     const struct control_request *req, json_t **result, char *err,
		     size_t errlen)
{
	(void)ctx;
	(void)peer;
	(void)req;
	(void)err;
	(void)errlen;
	*result = json_pack("{s:s,s:s}", "pong", "sandgated", "version", SANDGATE_VERSION);
	return *result ? 0 : -ENOMEM;
}

/* "health": {"ok": bool, "reasons": "..." or null}: `sandgate status` exits 1 unless ok. */
static int add_health(struct daemon *d, json_t *result)
{
	char why[HEALTH_REASONS_MAX];
	bool ok = health_check(d, why, sizeof(why));

	if (json_object_set_new(result, "health",
				json_pack("{s:b,s:s?}", "ok", ok, "reasons", ok ? NULL : why)))
		return -ENOMEM;
	return 0;
}

static int verb_status(void *ctx, const struct control_peer *peer,
		       const struct control_request *req, json_t **result, char *err,
		       size_t errlen)
{
	struct daemon *d = ctx;
	struct journal_stats st;

	(void)peer;
	(void)req;
	(void)err;
	(void)errlen;
	journal_get_stats(d->journal, &st);
	*result = json_pack("{s:s,s:i,s:s,s:s,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b}}",
			    "version", SANDGATE_VERSION, "pid", (int)getpid(),
			    "state_dir", d->cfg->state_dir, "cgroup_root", d->cgroup_root,
			    "journal",
			    "next_seq", (json_int_t)st.next_seq,
			    "checkpoints", (json_int_t)st.checkpoints,
			    "checkpoints_durable", (json_int_t)st.checkpoints_durable,
			    "queue_depth", (json_int_t)st.queue_depth,
			    "bytes_written", (json_int_t)st.bytes_written,
			    "lost", (json_int_t)st.lost,
			    "write_errors", (json_int_t)st.write_errors,
			    "stalled", st.stalled);
	return *result ? add_health(d, *result) : -ENOMEM;
}

/* reload: as SIGHUP, with the outcome (and the first FILE:LINE error) in the reply. */
static int verb_reload(void *ctx, const struct control_peer *peer,
		       const struct control_request *req, json_t **result, char *err,
		       size_t errlen)
{
	struct daemon *d = ctx;
	int ret;

	(void)peer;
	(void)req;
	ret = daemon_reload(d, err, errlen);
	if (ret)
		return ret == -ENOMEM ? ret : -EINVAL;
	*result = json_pack("{s:b,s:s?}", "reloaded", 1, "config", d->opts.config_path);
	return *result ? 0 : -ENOMEM;
}

int daemon_register_core_verbs(struct daemon *d)
{
	int ret = control_register(d->control, "ping", verb_ping, d);

	if (ret == 0)
		ret = control_register(d->control, "version", control_verb_version, d);
	if (ret == 0)
		ret = control_register(d->control, "reload", verb_reload, d);
	if (ret == 0)
		ret = control_register(d->control, "status", verb_status, d);
	return ret;
}

static bool is_cgroup2(const char *path)
{
	struct statfs sfs;

	return statfs(path, &sfs) == 0 && (unsigned long)sfs.f_type == CGROUP2_SUPER_MAGIC;
}

int daemon_cgroup2_root(const char *configured, char *out, size_t len)
{
	if (configured && strcmp(configured, "auto") != 0) {
		snprintf(out, len, "%s", configured);
		return 0;
	}
	if (is_cgroup2("/sys/fs/cgroup/unified"))
		snprintf(out, len, "/sys/fs/cgroup/unified");
	else
		snprintf(out, len, "/sys/fs/cgroup");
	return 0;
}
