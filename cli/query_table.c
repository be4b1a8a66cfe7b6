/*
 * The timeline renderer (cli/query_table.h). Values come from sandboxes, so control
 * characters are shown as '?' rather than sent to the terminal.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/query_table.h"
#include "journal/envelope.h"

#define TABLE_MAX_PROCS 4096
#define TABLE_MAX_DEPTH 12

/* The fields shown after the event name, in this order, when present and not null. */
static const char *const shown[] = {
	"cmd", "args", "path", "new_path", "target", "qname", "answers", "domain", "sni",
	"dst", "verdict", "name", "resolved_version", "tool", "status", "limit", "reason",
	"exit_code", "signal", "rule", "severity", "summary", "uid", "euid",
};

struct proc {
	char *session;
	long long pid;
	int depth;
};

struct query_table {
	FILE *out;
	struct proc procs[TABLE_MAX_PROCS];
	size_t n_procs;       /* a ring: the newest processes win */
	size_t next;
};

struct query_table *query_table_new(FILE *out)
{
	struct query_table *t = calloc(1, sizeof(*t));

	if (t)
		t->out = out;
	return t;
}

void query_table_free(struct query_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_procs; i++)
		free(t->procs[i].session);
	free(t);
}

static int depth_of(const struct query_table *t, const char *sid, long long pid)
{
	for (size_t i = 0; i < t->n_procs; i++)
		if (t->procs[i].pid == pid && sid && strcmp(t->procs[i].session, sid) == 0)
			return t->procs[i].depth;
	return -1;
}

static int remember(struct query_table *t, const char *sid, long long pid, int depth)
{
	struct proc *p = &t->procs[t->next];
	char *s = strdup(sid);

	if (!s)
		return -ENOMEM;
	if (t->n_procs == TABLE_MAX_PROCS)
		free(p->session);
	else
		t->n_procs++;
	*p = (struct proc){ .session = s, .pid = pid, .depth = depth };
	t->next = (t->next + 1) % TABLE_MAX_PROCS;
	return 0;
}

static void put_safe(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static void put_value(FILE *f, json_t *v)
{
	char *dump;

	if (json_is_string(v)) {
		put_safe(f, json_string_value(v));
		return;
	}
	dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (dump)
		put_safe(f, dump);
	free(dump);
}

/* Depth for this row; a process.exec also records its own depth for its children. */
static int row_depth(struct query_table *t, json_t *o, const char *sid, const char *ev)
{
	json_t *pid = json_object_get(o, "pid"), *ppid = json_object_get(o, "ppid");
	int d, pd;

	if (!sid || !json_is_integer(pid))
		return 0;
	d = depth_of(t, sid, json_integer_value(pid));
	if (strcmp(ev, "process.exec") != 0)
		return d < 0 ? 0 : d;
	pd = json_is_integer(ppid) ? depth_of(t, sid, json_integer_value(ppid)) : -1;
	d = pd < 0 ? 0 : pd + 1 > TABLE_MAX_DEPTH ? TABLE_MAX_DEPTH : pd + 1;
	return remember(t, sid, json_integer_value(pid), d) ? -1 : d;
}

static void put_fields(FILE *f, json_t *o)
{
	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
		json_t *v = json_object_get(o, shown[i]);

		if (!v || json_is_null(v))
			continue;
		fprintf(f, " %s=", shown[i]);
		put_value(f, v);
	}
}

int query_table_row(struct query_table *t, const char *line, size_t len)
{
	json_t *o = NULL;
	json_t *ts, *ev;
	const char *sid;
	int depth;

	(void)line_json_load(line, len, &o);   /* o stays NULL when it is not an object */
	ts = json_object_get(o, "ts");
	ev = json_object_get(o, "event");
	sid = json_string_value(json_object_get(o, "session_id"));
	if (!json_is_string(ts) || !json_is_string(ev)) {
		fprintf(t->out, "(unreadable line)\n");
		json_decref(o);
		return 0;
	}
	depth = row_depth(t, o, sid, json_string_value(ev));
	if (depth < 0) {
		json_decref(o);
		return -ENOMEM;
	}
	fprintf(t->out, "%s  ", json_string_value(ts));
	put_safe(t->out, sid ? sid : "-");
	fprintf(t->out, "  %*s", depth * 2, "");
	put_safe(t->out, json_string_value(ev));
	put_fields(t->out, o);
	fputc('\n', t->out);
	json_decref(o);
	return 0;
}

int query_table_learn(struct query_table *t, const char *line, size_t len)
{
	json_t *o = NULL;
	const char *sid, *ev;
	int ret = 0;

	(void)line_json_load(line, len, &o);
	sid = json_string_value(json_object_get(o, "session_id"));
	ev = json_string_value(json_object_get(o, "event"));
	if (sid && ev && strcmp(ev, "process.exec") == 0 && row_depth(t, o, sid, ev) < 0)
		ret = -ENOMEM;
	json_decref(o);
	return ret;
}
