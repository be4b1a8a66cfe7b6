/* The class-specific OCSF objects (sinks/ocsf.h; docs/ocsf.md). */
#include <stdio.h>
#include <string.h>

#include "sinks/ocsf_impl.h"

#define G(k) json_object_get(n, k)

/* "allowed"/"blocked" -> OCSF disposition (1 Allowed, 2 Blocked). */
static void disposition(json_t *o, json_t *n)
{
	const char *v = json_string_value(G("verdict"));

	if (!v)
		return;
	json_object_set_new(o, "disposition_id", json_integer(strcmp(v, "allowed") ? 2 : 1));
	json_object_set_new(o, "disposition", json_string(strcmp(v, "allowed") ? "Blocked"
									     : "Allowed"));
}

static json_t *endpoint(json_t *ep, json_t *domain)
{
	return json_pack("{s:O?, s:O?, s:O?}", "ip", json_object_get(ep, "ip"),
			 "port", json_object_get(ep, "port"), "hostname", domain);
}

static void process(json_t *o, json_t *n)
{
	json_t *p = json_pack("{s:O?, s:O?, s:{s:O?}, s:{s:O?}, s:O?}", "pid", G("pid"),
			      "name", G("cmd"), "file", "path", G("exe"),
			      "parent_process", "pid", G("ppid"), "cwd", G("cwd"));

	if (p)
		json_object_set_new(o, "process", p);
	if (G("exit_code"))
		json_object_set(o, "exit_code", G("exit_code"));
}

static void file(json_t *o, json_t *n)
{
	json_t *path = G("path") ? G("path") : G("target");

	json_object_set_new(o, "file", json_pack("{s:O?, s:i}", "path", path, "type_id", 1));
	if (G("new_path"))
		json_object_set_new(o, "file_result", json_pack("{s:O}", "path", G("new_path")));
}

static void network(json_t *o, json_t *n)
{
	json_object_set_new(o, "src_endpoint", endpoint(G("src"), NULL));
	json_object_set_new(o, "dst_endpoint", endpoint(G("dst"), G("domain")));
	json_object_set_new(o, "connection_info", json_pack("{s:O?}", "protocol_name",
							     G("proto")));
	if (json_is_string(G("sni")))
		json_object_set_new(o, "tls", json_pack("{s:O}", "sni", G("sni")));
	if (G("bytes_out"))
		json_object_set_new(o, "traffic", json_pack("{s:O?, s:O?, s:O?, s:O?}",
			"bytes_out", G("bytes_out"), "bytes_in", G("bytes_in"),
			"packets_out", G("packets_out"), "packets_in", G("packets_in")));
	if (G("duration_ms"))
		json_object_set(o, "duration", G("duration_ms"));
	disposition(o, n);
	/* A connection the gateway refused is OCSF's Refuse, not Open. */
	if (G("flow_id") == NULL && json_integer_value(json_object_get(o, "disposition_id")) == 2) {
		json_object_set_new(o, "activity_id", json_integer(5));
		json_object_set_new(o, "activity_name", json_string("Refuse"));
		json_object_set_new(o, "type_uid", json_integer(400105));
	}
}

static void dns(json_t *o, json_t *n)
{
	json_t *answers = json_array(), *a;
	size_t i;

	json_array_foreach(G("answers"), i, a)
		json_array_append_new(answers, json_pack("{s:O?, s:O?, s:O?}", "rdata",
			json_object_get(a, "data"), "type", json_object_get(a, "type"),
			"ttl", json_object_get(a, "ttl")));
	json_object_set_new(o, "query", json_pack("{s:O?, s:O?}", "hostname", G("qname"),
						  "type", G("qtype")));
	json_object_set_new(o, "answers", answers);
	if (G("rcode"))
		json_object_set(o, "rcode", G("rcode"));
	disposition(o, n);
}

static void api(json_t *o, json_t *n)
{
	const char *st = json_string_value(G("status"));

	json_t *op = G("tool") ? G("tool") : G("model");

	/* "o" hands the inner object over; "O" would keep a second reference to it. */
	json_object_set_new(o, "api", json_pack("{s:O?, s:o}", "operation", op,
						"request", json_pack("{s:O?}", "uid", G("call_id"))));
	/* detail.read has no status: it happened. */
	json_object_set_new(o, "status_id", json_integer(!st || !strcmp(st, "success") ? 1 : 2));
}

static void app(json_t *o, json_t *n, const struct ocsf_map *m)
{
	if (strncmp(m->event, "daemon.", 7) == 0 || strncmp(m->event, "gateway.", 8) == 0)
		json_object_set_new(o, "app", json_pack("{s:s, s:O?}", "name", "sandgated",
							"version", G("version")));
	else if (strcmp(m->event, "package.install") == 0)
		/* The registry is where the product came from: Product's url_string. */
		json_object_set_new(o, "app", json_pack("{s:O?, s:O?, s:O?, s:O?}", "name",
			G("name"), "version", G("resolved_version"), "vendor_name", G("manager"),
			"url_string", G("registry")));
	else
		json_object_set_new(o, "app", json_pack("{s:O?, s:O?}", "uid", G("session_id"),
							"name", G("template")));
}

static void finding(json_t *o, json_t *n)
{
	json_object_set_new(o, "finding_info", json_pack("{s:O?, s:O?, s:O?}", "uid",
		G("rule"), "title", G("summary"), "related_events_uids", G("refs")));
}

/* The journal's own events: the log is sandgate's journal, its file the segment. */
static void event_log(json_t *o, json_t *n)
{
	json_t *seg = G("segment");

	json_object_set_new(o, "log_name", json_string("journal"));
	json_object_set_new(o, "log_provider", json_string(json_is_string(G("sensor"))
		? json_string_value(G("sensor")) : "sandgate"));
	if (json_is_string(seg))
		json_object_set_new(o, "file", json_pack("{s:O, s:i}", "name", seg, "type_id", 1));
}

/* A peer refused on the control socket: a failed logon by that uid. */
static void auth(json_t *o, json_t *n)
{
	json_t *uid = G("uid");
	char id[24];

	json_object_set_new(o, "status_id", json_integer(2));
	json_object_set_new(o, "status", json_string("Failure"));
	if (json_is_string(G("reason")))
		json_object_set(o, "status_detail", G("reason"));
	if (json_is_integer(uid)) {
		/* OCSF user.uid is a string, as in actor.user (sinks/ocsf.c). */
		snprintf(id, sizeof(id), "%lld", (long long)json_integer_value(uid));
		json_object_set_new(o, "user", json_pack("{s:s}", "uid", id));
	}
}

void ocsf_fill_class(json_t *o, json_t *n, const struct ocsf_map *m)
{
	switch (m->class_uid) {
	case 1007: process(o, n); break;
	case 1001: file(o, n); break;
	case 4001: network(o, n); break;
	case 4003: dns(o, n); break;
	case 6003: api(o, n); break;
	case 6002: app(o, n, m); break;
	case 2004: finding(o, n); break;
	case 1008: event_log(o, n); break;
	case 3002: auth(o, n); break;
	default: break;
	}
}
