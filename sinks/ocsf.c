/*
 * The OCSF envelope every rendered event shares (sinks/ocsf.h): class, activity,
 * type, time, severity, metadata, device, actor, the native fields under `unmapped`
 * and the native line in `raw_data`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/version.h"
#include "journal/envelope.h"
#include "sinks/ocsf.h"
#include "sinks/ocsf_impl.h"

static const char *const envelope_keys[] = {
	"ts", "seq", "prev", "event", "host", "session_id", "source",
};

static const char *category_name(int cat)
{
	switch (cat) {
	case 1: return "System Activity";
	case 2: return "Findings";
	case 3: return "Identity & Access Management";
	case 4: return "Network Activity";
	case 6: return "Application Activity";
	default: return "Uncategorized";
	}
}

/* alert.severity -> OCSF severity_id; everything else is Informational. */
static int severity_id(json_t *n, const char *event)
{
	static const char *const names[] = { "low", "medium", "high", "critical" };
	const char *s = json_string_value(json_object_get(n, "severity"));

	if (strcmp(event, "alert") != 0 || !s)
		return strcmp(event, "sensor.loss") == 0 ? 3 : 1;
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i + 2;
	return 99;
}

static json_t *unmapped(json_t *n)
{
	json_t *u = json_deep_copy(n);

	for (size_t i = 0; u && i < sizeof(envelope_keys) / sizeof(envelope_keys[0]); i++)
		json_object_del(u, envelope_keys[i]);
	return u;
}

/*
 * The envelope's "source" (the observer) read at its place: the first ,"source":" of a
 * line is the envelope's, as no JSON string can hold an unescaped quote after a comma.
 * A line written before 2026-12 may repeat the key in its body (package.install's
 * registry, file.mount's device), and a JSON parser keeps that last one.
 */
static json_t *observer(const char *line, size_t len)
{
	static const char key[] = ",\"source\":\"";
	const char *p = memmem(line, len, key, sizeof(key) - 1), *q;

	if (!p)
		return NULL;
	p += sizeof(key) - 1;
	q = memchr(p, '"', len - (size_t)(p - line));
	return q ? json_stringn(p, (size_t)(q - p)) : NULL;
}

/* product is sandgate (the sensor suite); log_provider the part of it that observed. */
static json_t *metadata(json_t *obs, const struct line_envelope *env, const char *event)
{
	return json_pack("{s:s, s:{s:s, s:s, s:s}, s:I, s:s, s:s, s:s%, s:O?}",
			 "version", "1.8.0", "product", "name", "sandgate", "vendor_name",
			 "sandgate", "version", sandgate_version(), "sequence", (json_int_t)env->seq,
			 "log_name", "journal", "event_code", event, "original_time", env->ts,
			 (size_t)27, "log_provider", obs);
}

/* A pre-2026-12 line's second "source" is what the contract now calls device/registry. */
static void legacy_source(json_t *n, json_t *obs, const char *event)
{
	json_t *s = json_object_get(n, "source");
	const char *k = strcmp(event, "package.install") == 0 ? "registry"
			: strncmp(event, "file.", 5) == 0 ? "device" : NULL;

	if (!k || !obs || !json_is_string(s) || json_equal(s, obs) || json_object_get(n, k))
		return;
	json_object_set(n, k, s);
	json_object_set(n, "source", obs);
}

static json_t *actor(json_t *n)
{
	json_t *a = json_object(), *sid = json_object_get(n, "session_id");

	if (!a)
		return NULL;
	if (json_is_string(sid))
		json_object_set_new(a, "session", json_pack("{s:O}", "uid", sid));
	if (json_is_integer(json_object_get(n, "pid")))
		json_object_set_new(a, "process", json_pack("{s:O}", "pid",
							   json_object_get(n, "pid")));
	if (json_is_integer(json_object_get(n, "uid")))
		json_object_set_new(a, "user", json_pack("{s:o}", "uid", json_sprintf(
			"%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(n, "uid")))));
	return a;
}

static json_t *build(json_t *n, const struct line_envelope *env, const char *event,
		     const char *line, size_t len)
{
	const struct ocsf_map *m = ocsf_map_of(event);
	int cls = m->class_uid, act = m->class_uid ? m->activity_id : 99, sev;
	int64_t us = 0;
	json_t *o, *obs;

	(void)line_ts_parse(env->ts, 27, &us);
	obs = observer(line, len);
	legacy_source(n, obs, event);
	sev = severity_id(n, event);
	o = json_pack("{s:i, s:s, s:i, s:s, s:i, s:s, s:I, s:I, s:s%, s:i, s:s, s:o, s:{s:O?},"
		      " s:o, s:o, s:s%}",
		      "class_uid", cls, "class_name", ocsf_class_name(cls),
		      "category_uid", cls / 1000, "category_name", category_name(cls / 1000),
		      "activity_id", act, "activity_name", m->activity_name,
		      "type_uid", (json_int_t)cls * 100 + act, "time", (json_int_t)(us / 1000),
		      "time_dt", env->ts, (size_t)27, "severity_id", sev,
		      "severity", sev == 1 ? "Informational" : sev == 2 ? "Low"
				  : sev == 3 ? "Medium" : sev == 4 ? "High"
				  : sev == 5 ? "Critical" : "Other",
		      "metadata", metadata(obs, env, event),
		      "device", "hostname", json_object_get(n, "host"),
		      "actor", actor(n), "unmapped", unmapped(n), "raw_data", line, len);
	if (o)
		ocsf_fill_class(o, n, m);
	json_decref(obs);
	return o;
}

int ocsf_render(struct buf *out, const char *line, size_t len)
{
	struct line_envelope env;
	char event[64];
	json_t *n = NULL, *o = NULL;
	char *text = NULL;
	int ret = -EINVAL;

	if (line_envelope_parse(line, len, &env) || env.event_len >= sizeof(event))
		return -EINVAL;
	memcpy(event, env.event, env.event_len);
	event[env.event_len] = '\0';
	if (line_json_load(line, len, &n) == 0) {
		/* NULL: a value jansson refuses (not UTF-8); the journal never writes one. */
		o = build(n, &env, event, line, len);
		text = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		ret = !o ? -EINVAL : text ? 0 : -ENOMEM;
	}
	if (text)
		buf_puts(out, text);
	free(text);
	json_decref(o);
	json_decref(n);
	return ret == 0 && out->oom ? -ENOMEM : ret;
}
