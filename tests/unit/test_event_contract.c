/*
 * The event contract over every event type the code can produce (interface.md): each
 * line is one JSON object with unique keys, and no event field reuses an envelope key
 * (ts, seq, prev, event, host, session_id, source).
 *
 * Which types and fields exist is read from the emitters themselves: every function of
 * the part folders that calls event_new(), the helpers it hands its event to (in
 * source order, with their object/array nesting) and the keys they set. For each type
 * an event with every top-level key found is built through the real builder
 * (journal/event.c) and encoded by the journal's real line encoder (journal/line.c),
 * then parsed with duplicates rejected. Real emitters that need no kernel (process,
 * package) are also run and their lines checked the same way.
 *
 * The inventory is then checked against docs/schema/ (the JSON Schema of the events):
 * every type has its schema file, and every top-level key the code sets is a property
 * the schema names.
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "sensors/process/proc_int.h"
#include "packages/pkg_int.h"
#include "journal/event.h"
#include "journal/journal_impl.h"
#include "tests/unit/strict_json.h"

#define MAX_FNS 4096
#define MAX_OPS 256
#define MAX_TYPES 96
#define MAX_KEYS 96

static const char *const parts[] = {
	"sessions", "limits",   /* the parts sessions/ and limits/ (were in daemon/) */
	"attribution", "audit", "daemon", "detect", "gateway", "journal", "policy", "nft",
	"dns", "common", "sensors/shared", "sensors/process", "sensors/file", "sensors/kaudit",
	"packages",
	/* Those below emit little or nothing today; scanned so that a new event there
	 * meets the same contract (unique keys, documented, in the schema). */
	"sinks", "index", "retention", "verify", "conf", "contain", "cli", "clients",
};

static const char *const envelope[] = {
	"ts", "seq", "prev", "event", "host", "session_id", "source",
};

/*
 * Emitters whose type is a parameter: the types their callers pass. A new one fails
 * the test until it is named here (and in docs/schema/).
 */
static const struct { const char *fn; const char *types[6]; } dynamic[] = {
	{ "emit_mount", { "file.mount", "file.unmount" } },
	{ "fanemit_begin", { "file.create", "file.write", "file.read", "file.delete",
			     "file.rename", "file.attr" } },
	{ "emit_lifecycle", { "daemon.start", "daemon.stop" } },
	{ "on_retention", { "retention.archive", "retention.purge" } },
	{ "writer_segment_head", { "journal.open", "journal.segment" } },
	{ "record", { "sink.stalled", "sink.recovered" } },
};

/* One step of a function body, in source order. */
enum op_kind { OP_KEY, OP_OPEN, OP_CLOSE, OP_CALL, OP_NEW };
struct op {
	enum op_kind kind;
	char name[64];               /* key, callee or event type ("" for a dynamic type) */
	char key[48];                /* OP_CALL: its second argument when a string literal */
};

struct fn {
	char file[64];
	char name[64];
	bool takes_event;            /* a parameter is a struct event * */
	bool has_new;
	struct op *ops;
	size_t n_ops;
};

struct type_keys {
	char type[EVENT_TYPE_MAX];
	char keys[MAX_KEYS][48];
	size_t n_keys;
};

static struct fn *fns;
static size_t n_fns;
static struct type_keys types[MAX_TYPES];
static size_t n_types;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		s = malloc((size_t)n + 1);
		if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
			free(s);
			s = NULL;
		}
		if (s) {
			s[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return s;
}

/* Blanks comments (string literals are kept: keys are literals). */
static void strip_comments(char *s)
{
	for (char *p = s; *p; p++) {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				return;
		} else if (*p == '\'') {
			for (p++; *p && *p != '\''; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				return;
		} else if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");
			char *end = e ? e + 2 : p + strlen(p);

			memset(p, ' ', (size_t)(end - p));
			p = end - 1;
		} else if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				*p++ = ' ';
			if (!*p)
				return;
		}
	}
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static void add_op(struct fn *f, enum op_kind k, const char *name, size_t len)
{
	struct op *o;

	assert_true(f->n_ops < MAX_OPS);
	o = &f->ops[f->n_ops++];
	o->kind = k;
	if (len >= sizeof(o->name))
		len = sizeof(o->name) - 1;
	memcpy(o->name, name, len);
	o->name[len] = '\0';
}

/* The string literal that is the second argument of the call whose '(' is at p. */
static bool second_literal(const char *p, const char *end, const char **lit, size_t *len)
{
	int depth = 0;

	for (p++; p < end; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && depth-- == 0)
			return false;
		else if (*p == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\')
					p++;
		} else if (*p == ',' && depth == 0) {
			break;
		}
	}
	for (p++; p < end && isspace((unsigned char)*p); p++)
		;
	if (p >= end || *p != '"')
		return false;
	*lit = ++p;
	while (p < end && *p != '"')
		p++;
	*len = (size_t)(p - *lit);
	return true;
}

/* Records the calls of one function body [b, e) in source order. */
static void scan_body(struct fn *f, const char *b, const char *e)
{
	for (const char *p = b; p < e; p++) {
		const char *id, *lit;
		size_t n, ln;

		if (*p == '"' || *p == '\'') {
			char q = *p;

			for (p++; p < e && *p != q; p++)
				if (*p == '\\')
					p++;
			continue;
		}
		if (!ident_char(*p) || (p > b && ident_char(p[-1])))
			continue;
		for (id = p; p < e && ident_char(*p); p++)
			;
		n = (size_t)(p - id);
		if (p >= e || *p != '(') {
			p--;
			continue;
		}
		if (n == 9 && memcmp(id, "event_new", 9) == 0) {
			f->has_new = true;
			for (lit = p + 1; lit < e && isspace((unsigned char)*lit); lit++)
				;
			if (lit < e && *lit == '"') {
				for (ln = 0, lit++; lit + ln < e && lit[ln] != '"'; ln++)
					;
				add_op(f, OP_NEW, lit, ln);
			} else {
				add_op(f, OP_NEW, "", 0);
			}
		} else if ((n == 18 && memcmp(id, "event_object_begin", n) == 0) ||
			   (n == 17 && memcmp(id, "event_array_begin", n) == 0)) {
			if (second_literal(p, e, &lit, &ln))
				add_op(f, OP_KEY, lit, ln);
			add_op(f, OP_OPEN, "", 0);
		} else if ((n == 16 && memcmp(id, "event_object_end", n) == 0) ||
			   (n == 15 && memcmp(id, "event_array_end", n) == 0)) {
			add_op(f, OP_CLOSE, "", 0);
		} else {
			add_op(f, OP_CALL, id, n);
			if (second_literal(p, e, &lit, &ln) && ln < 48) {
				memcpy(f->ops[f->n_ops - 1].key, lit, ln);
				f->ops[f->n_ops - 1].key[ln] = '\0';
			}
		}
		p--;
	}
}

/* Finds function definitions: a top-level '{' right after a ')'. */
static void scan_file(const char *part, const char *name, char *s)
{
	int depth = 0;
	char *body = NULL;
	struct fn *f = NULL;

	strip_comments(s);
	for (char *p = s; *p; p++) {
		if (*p == '"' || *p == '\'') {
			char q = *p;

			for (p++; *p && *p != q; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				break;
			continue;
		}
		if (*p == '{' && depth++ == 0) {
			char *q = p - 1, *close, *open, *nm;
			int d = 0;

			while (q > s && isspace((unsigned char)*q))
				q--;
			if (*q != ')')
				continue;
			close = q;
			for (open = close; open > s; open--)
				if (*open == ')')
					d++;
				else if (*open == '(' && --d == 0)
					break;
			for (nm = open; nm > s && ident_char(nm[-1]); nm--)
				;
			assert_true(n_fns < MAX_FNS);
			f = &fns[n_fns++];
			memset(f, 0, sizeof(*f));
			f->ops = calloc(MAX_OPS, sizeof(*f->ops));
			assert_non_null(f->ops);
			snprintf(f->file, sizeof(f->file), "%s/%s", part, name);
			snprintf(f->name, sizeof(f->name), "%.*s", (int)(open - nm), nm);
			{
				char c = *close;

				*close = '\0';   /* within the parameter list only */
				f->takes_event = strstr(open + 1, "struct event *") != NULL;
				*close = c;
			}
			body = p + 1;
		} else if (*p == '}' && --depth == 0 && f) {
			scan_body(f, body, p);
			f = NULL;
		}
	}
}

static void scan_tree(void)
{
	const char *td = getenv("SANDGATE_TESTDATA");
	char cmd[4096], path[4096];
	FILE *ls;

	assert_non_null(td);
	fns = calloc(MAX_FNS, sizeof(*fns));
	assert_non_null(fns);
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		snprintf(cmd, sizeof(cmd), "ls %s/../../%s/ 2>/dev/null", td, parts[i]);
		ls = popen(cmd, "r");
		assert_non_null(ls);
		while (fgets(path, sizeof(path), ls)) {
			char full[8192], *src;
			size_t len;

			path[strcspn(path, "\n")] = '\0';
			if (strlen(path) < 3 || strcmp(path + strlen(path) - 2, ".c") != 0)
				continue;
			snprintf(full, sizeof(full), "%s/../../%s/%s", td, parts[i], path);
			src = slurp(full, &len);
			assert_non_null(src);
			scan_file(parts[i], path, src);
			free(src);
		}
		pclose(ls);
	}
}

static struct fn *find_fn(const char *name, const char *file)
{
	struct fn *any = NULL;

	for (size_t i = 0; i < n_fns; i++)
		if (strcmp(fns[i].name, name) == 0) {
			if (strcmp(fns[i].file, file) == 0)
				return &fns[i];
			any = any ? any : &fns[i];
		}
	return any;
}

static struct type_keys *type_of(const char *t)
{
	for (size_t i = 0; i < n_types; i++)
		if (strcmp(types[i].type, t) == 0)
			return &types[i];
	assert_true(n_types < MAX_TYPES);
	snprintf(types[n_types].type, EVENT_TYPE_MAX, "%s", t);
	return &types[n_types++];
}

static void add_key(const char *type, const char *key)
{
	struct type_keys *t = type_of(type);

	for (size_t i = 0; i < t->n_keys; i++)
		if (strcmp(t->keys[i], key) == 0)
			return;
	assert_true(t->n_keys < MAX_KEYS);
	snprintf(t->keys[t->n_keys++], 48, "%s", key);
}

struct walk {
	const char *cur[8];          /* the types the keys being set belong to */
	size_t n_cur;
};

static void walk_fn(struct walk *w, const struct fn *f, int depth, int level);

static void set_types(struct walk *w, const struct fn *f, const char *lit)
{
	w->n_cur = 0;
	if (lit[0]) {
		w->cur[w->n_cur++] = lit;
		return;
	}
	for (size_t i = 0; i < sizeof(dynamic) / sizeof(dynamic[0]); i++)
		if (strcmp(dynamic[i].fn, f->name) == 0)
			for (size_t k = 0; k < 6 && dynamic[i].types[k]; k++)
				w->cur[w->n_cur++] = dynamic[i].types[k];
	if (w->n_cur == 0)
		fail_msg("%s: %s builds an event of a type it takes as a parameter: name its "
			 "types in this test's dynamic[] table", f->file, f->name);
}

/* A function returning a new event: its callers may add fields to it. */
static const struct op *factory_new(const struct fn *f)
{
	for (size_t i = 0; i < f->n_ops; i++)
		if (f->ops[i].kind == OP_NEW)
			return &f->ops[i];
	return NULL;
}

static void walk_fn(struct walk *w, const struct fn *f, int depth, int level)
{
	assert_true(level < 8);
	for (size_t i = 0; i < f->n_ops; i++) {
		const struct op *o = &f->ops[i];
		const struct fn *c;

		switch (o->kind) {
		case OP_NEW:
			set_types(w, f, o->name);
			depth = 0;
			break;
		case OP_OPEN:
			depth++;
			break;
		case OP_CLOSE:
			depth--;
			break;
		case OP_KEY:
			for (size_t t = 0; depth == 0 && t < w->n_cur; t++)
				add_key(w->cur[t], o->name);
			break;
		case OP_CALL:
			c = find_fn(o->name, f->file);
			/* The caller's literal key: a builder's, or a helper's that sets (or
			 * opens, as gw_ev_endpoint does) the field it is given. */
			if (o->key[0] && depth == 0 &&
			    (strncmp(o->name, "event_", 6) == 0 || (c && c->takes_event)))
				for (size_t t = 0; t < w->n_cur; t++)
					add_key(w->cur[t], o->key);
			if (!c || c == f)
				break;
			if (c->takes_event && !c->has_new) {
				/* a helper: its keys at our depth (one deeper under a named key
				 * it opens itself, which its own OPEN op records) */
				walk_fn(w, c, depth, level + 1);
			} else if (level == 0 && c->has_new && factory_new(c)) {
				struct walk inner = { .n_cur = 0 };

				walk_fn(&inner, c, 0, level + 1);
				/* the caller goes on adding to the factory's event */
				if (strstr(o->name, "ev_") || strstr(o->name, "_event"))
					*w = inner, depth = 0;
			}
			break;
		}
	}
}

static bool is_envelope(const char *k)
{
	for (size_t i = 0; i < sizeof(envelope) / sizeof(envelope[0]); i++)
		if (strcmp(envelope[i], k) == 0)
			return true;
	return false;
}

static void inventory(void)
{
	if (n_types)
		return;
	scan_tree();
	for (size_t i = 0; i < n_fns; i++) {
		struct walk w = { .n_cur = 0 };

		if (fns[i].has_new)
			walk_fn(&w, &fns[i], 0, 0);
	}
}

/* Encodes e as the journal would and checks the line strictly. Takes e. */
static void check_line(struct event *e)
{
	static uint64_t seq;
	struct journal j = { .host = "host-a" };
	uint8_t prev[MERKLE_HASH_LEN] = { 0 };
	struct buf b;
	char err[256];

	buf_init(&b);
	line_encode(&b, &j, e, seq++, prev);
	assert_false(b.oom);
	assert_true(b.len > 2 && b.data[b.len - 1] == '\n');
	assert_null(memchr(b.data, '\n', b.len - 1));
	if (strict_json_object(b.data, b.len - 1, err, sizeof(err)) != 0)
		fail_msg("%s: %s\n%.*s", e->type, err, (int)b.len, b.data);
	buf_free(&b);
	event_free(e);
}

static void test_every_type_unique_keys(void **state)
{
	(void)state;
	inventory();
	/* The contract's types are all found (the scan reads the emitters it should). */
	static const char *const contract[] = {
		"session.create", "session.start", "session.pause", "session.resume",
		"session.terminate", "session.cleanup", "process.exec", "process.exit",
		"file.read", "file.write", "file.create", "file.delete", "file.rename",
		"file.mount", "file.unmount", "net.dns", "net.connect", "net.flow",
		"package.install", "tool.invoke", "resource.limit", "alert", "sensor.loss",
	};
	for (size_t i = 0; i < sizeof(contract) / sizeof(contract[0]); i++) {
		bool found = false;

		for (size_t t = 0; t < n_types; t++)
			found |= strcmp(types[t].type, contract[i]) == 0;
		if (!found)
			fail_msg("no emitter of %s found", contract[i]);
	}
	for (size_t t = 0; getenv("SG_CONTRACT_DUMP") && t < n_types; t++) {
		printf("%s:", types[t].type);
		for (size_t k = 0; k < types[t].n_keys; k++)
			printf(" %s", types[t].keys[k]);
		printf("\n");
	}
	for (size_t t = 0; t < n_types; t++) {
		struct event *e = event_new(types[t].type, "s1", EVENT_SRC_KERNEL);

		assert_non_null(e);
		for (size_t k = 0; k < types[t].n_keys; k++) {
			if (is_envelope(types[t].keys[k]))
				fail_msg("%s sets the envelope's key \"%s\"", types[t].type,
					 types[t].keys[k]);
			event_null(e, types[t].keys[k]);
		}
		check_line(e);
	}
	/* The fields the contract renamed in 2026-12 are where they belong. */
	for (size_t t = 0; t < n_types; t++) {
		const char *want = strcmp(types[t].type, "package.install") == 0 ? "registry"
				   : strncmp(types[t].type, "file.", 5) == 0 &&
				     strstr(types[t].type, "mount") ? "device" : NULL;
		bool found = false;

		for (size_t k = 0; want && k < types[t].n_keys; k++)
			found |= strcmp(types[t].keys[k], want) == 0;
		if (want && !found)
			fail_msg("%s has no \"%s\"", types[t].type, want);
	}
}

/* Every type has its schema (docs/schema/events/TYPE.json) naming every field it sets. */
static void test_schema_names_every_field(void **state)
{
	const char *td = getenv("SANDGATE_TESTDATA");

	(void)state;
	inventory();
	assert_non_null(td);
	for (size_t t = 0; t < n_types; t++) {
		char path[4096];
		json_error_t je;
		json_t *s, *props;

		snprintf(path, sizeof(path), "%s/../../docs/schema/events/%s.json", td,
			 types[t].type);
		s = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
		if (!s)
			fail_msg("%s: no schema (%s): regenerate docs/schema (docs/schema/generate.py)",
				 types[t].type, je.text);
		props = json_object_get(s, "properties");
		assert_true(json_is_object(props));
		assert_string_equal(json_string_value(json_object_get(json_object_get(props,
			"event"), "const")), types[t].type);
		for (size_t k = 0; k < types[t].n_keys; k++)
			if (!json_object_get(props, types[t].keys[k]))
				fail_msg("%s sets \"%s\", which its schema does not name: regenerate "
					 "docs/schema (docs/schema/generate.py)", types[t].type,
					 types[t].keys[k]);
		json_decref(s);
	}
}

/* ---- the real emitters that need no kernel ------------------------------------------- */

static int capture(void *ctx, struct event *e)
{
	(void)ctx;
	check_line(e);
	(*(int *)ctx)++;
	return 0;
}

static void test_real_emitters(void **state)
{
	static char cmdline[] = "pip\0install\0x==1";
	struct cn_event ev = { .pid = 42, .tgid = 42, .ppid = 1, .ptgid = 1, .euid = 0 };
	struct ptab_ent pe = { .pid = 42, .ppid = 1, .ids_known = true };
	static struct exec_info x;
	int n = 0;

	(void)state;
	snprintf(pe.sid, sizeof(pe.sid), "s1");
	x.same = x.has_exe = x.has_cwd = x.has_ids = x.argv_complete = true;
	x.cmdline = cmdline;
	x.cmdlen = sizeof(cmdline) - 1;
	snprintf(x.exe, sizeof(x.exe), "/usr/bin/pip");
	snprintf(x.cwd, sizeof(x.cwd), "/work");
	event_set_sink(capture, &n);
	assert_int_equal(procemit_exec(&ev, &pe, &x), 0);
	assert_int_equal(procemit_exit(&ev, &pe), 0);
	assert_int_equal(procemit_uid(&ev, &pe), 0);
	assert_int_equal(audit_emit_loss("fanotify", 3, "queue full"), 0);
	assert_int_equal(n, 4);
	event_set_sink(NULL, NULL);
}

/* The checker itself: duplicates, nesting, trailing bytes. */
static void test_strict_checker(void **state)
{
	static const char *const bad[] = {
		"{\"a\":1,\"a\":2}", "{\"a\":{\"b\":1,\"b\":1}}", "[{\"a\":1}]", "{\"a\":1} x",
		"{\"a\":[{\"k\":1,\"k\":2}]}", "{\"a\":1,\"\\u0061\":2}", "{", "",
	};
	char err[128];
	static const char good[] = "{\"a\":{\"a\":1},\"b\":[{\"a\":1},{\"a\":2}]}";

	(void)state;
	assert_int_equal(strict_json_object(good, strlen(good), err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_not_equal(strict_json_object(bad[i], strlen(bad[i]), err,
							sizeof(err)), 0);
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; fns && i < n_fns; i++)
		free(fns[i].ops);
	free(fns);
	fns = NULL;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strict_checker),
		cmocka_unit_test(test_every_type_unique_keys),
		cmocka_unit_test(test_schema_names_every_field),
		cmocka_unit_test(test_real_emitters),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
