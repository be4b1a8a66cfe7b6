/*
 * Pipe to shell: process.exec carries what fd 0 and fd 1 were at exec ("pipe:[N]").
 * A downloader (curl, wget, nc, base64 -d, python -c ...) whose stdout is pipe N and a
 * shell reading its script from stdin (no script file argument) whose stdin is pipe N,
 * in the same session, is `curl ... | sh` however it was spelled. Filters in between
 * (gunzip, tee, cat: anything with a pipe on both ends) pass the taint along. The two
 * execs may be seen in either order; every new exec looks for a completed pair.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "detect/detect_int.h"

enum { ROLE_OTHER, ROLE_DOWNLOADER, ROLE_SHELL, ROLE_RELAY, ROLE_DONE };

#define RELAY_DEPTH 4

static bool in_list(char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return true;
	return false;
}

static bool has_arg(json_t *args, const char *const *any)
{
	size_t i;
	json_t *a;

	json_array_foreach(args, i, a) {
		const char *s = json_string_value(a);

		for (size_t k = 0; s && any[k]; k++)
			if (strcmp(s, any[k]) == 0)
				return true;
	}
	return false;
}

static bool interpreter(const char *n)
{
	return strncmp(n, "python", 6) == 0 || strcmp(n, "perl") == 0 ||
	       strcmp(n, "ruby") == 0 || strcmp(n, "node") == 0 || strcmp(n, "php") == 0;
}

static bool is_downloader(const struct drule *r, const char *name, json_t *args)
{
	static const char *decode[] = { "-d", "--decode", "-D", "-r", NULL };
	static const char *inline_code[] = { "-c", "-e", "-E", "-r", NULL };

	if (!in_list(r->list_a, r->n_a, name) &&
	    !(strncmp(name, "python", 6) == 0 && in_list(r->list_a, r->n_a, "python")))
		return false;
	if (strcmp(name, "base64") == 0 || strcmp(name, "xxd") == 0 ||
	    strcmp(name, "openssl") == 0)
		return has_arg(args, decode);
	if (interpreter(name))
		return has_arg(args, inline_code);
	return true;
}

/* A -c script that runs what it reads from stdin: eval "$(cat)", source /dev/stdin... */
static bool script_runs_stdin(json_t *args, size_t i)
{
	static const char *const shapes[] = { "eval", "source ", ". /dev/stdin", "/dev/stdin",
					      "$(cat", "`cat", NULL };
	const char *s = json_string_value(json_array_get(args, i));

	for (size_t k = 0; s && shapes[k]; k++)
		if (strstr(s, shapes[k]))
			return true;
	return false;
}

/* sh-family: options only (or "-s", "-", "/dev/stdin"), no -c and no script file; or a
 * -c script that evaluates its stdin. */
static bool shell_reads_stdin(json_t *args, size_t from)
{
	size_t i;
	json_t *a;

	json_array_foreach(args, i, a) {
		const char *s = json_string_value(a);

		if (i < from || !s)
			continue;
		if (strcmp(s, "-") == 0 || strcmp(s, "/dev/stdin") == 0 || strcmp(s, "-s") == 0)
			return true;
		if (strcmp(s, "--") == 0)
			continue;
		if (s[0] == '-' || s[0] == '+') {
			if (strchr(s + 1, 'c') && s[0] == '-' && s[1] != '-')
				return script_runs_stdin(args, i + 1);   /* -c STRING */
			if (strchr(s + 1, 's') && s[1] != '-')
				return true;
			continue;
		}
		return false;           /* a script file */
	}
	return true;
}

static bool is_shell(const struct drule *r, const char *name, json_t *args, size_t from)
{
	if (!in_list(r->list_b, r->n_b, name) &&
	    !(strncmp(name, "python", 6) == 0 && in_list(r->list_b, r->n_b, "python")))
		return false;
	if (strcmp(name, "busybox") == 0) {
		const char *applet = json_string_value(json_array_get(args, from));

		return applet && (strcmp(applet, "sh") == 0 || strcmp(applet, "ash") == 0) &&
		       shell_reads_stdin(args, from + 1);
	}
	return shell_reads_stdin(args, from);
}

/* A shell given its script as -c STRING (the string already holds what ran). */
static bool shell_inline(const struct drule *r, const char *name, json_t *args, size_t from)
{
	json_t *a;
	size_t i;

	if (!in_list(r->list_b, r->n_b, name) || strncmp(name, "python", 6) == 0)
		return false;
	json_array_foreach(args, i, a) {
		const char *s = json_string_value(a);

		if (i >= from && s && s[0] == '-' && s[1] != '-' && strchr(s + 1, 'c'))
			return true;
		if (i >= from && s && s[0] != '-' && s[0] != '+')
			return false;   /* a script file first */
	}
	return false;
}

/*
 * What stdin or stdout was: a pipe ("pipe:[N]"), or a file or FIFO by path
 * ("file:/tmp/p": `curl > p & sh < p`, or `curl -o f; sh < f`), not /dev/ files.
 */
static const char *pipe_of(const struct eval_ctx *x, const char *key)
{
	const char *s = json_string_value(json_object_get(x->ev, key));

	if (s && strncmp(s, "pipe:[", 6) == 0)
		return s;
	return s && strncmp(s, "file:/", 6) == 0 && strncmp(s, "file:/dev/", 10) != 0 ? s : "";
}

/* The most recent live writer of pipe p, or NULL. */
static struct ring_ent *writer_of(struct det_state *st, const struct engine_view *v,
				  const char *p)
{
	for (size_t k = 1; k <= st->n; k++) {
		struct ring_ent *e = ring_at(st, k);

		if (e->out[0] && strcmp(e->out, p) == 0 && ring_live(v, e))
			return e;
	}
	return NULL;
}

/* Walks back from shell sh through relays to a downloader; fills refs on success. */
static struct ring_ent *source_of(struct det_state *st, const struct engine_view *v,
				  const struct ring_ent *sh, struct det_hit *hit)
{
	const char *p = sh->in;

	hit->n_refs = 0;
	for (int depth = 0; depth < RELAY_DEPTH && p[0]; depth++) {
		struct ring_ent *w = writer_of(st, v, p);

		if (!w || w == sh)
			return NULL;
		hit->refs[hit->n_refs++] = w->seq;
		if (w->role == ROLE_DOWNLOADER)
			return w;
		if (w->role != ROLE_RELAY)
			return NULL;
		p = w->in;
	}
	return NULL;
}

static int pair(const struct engine_view *v, struct det_state *st, struct det_hit *hit)
{
	for (size_t k = 1; k <= st->n; k++) {
		struct ring_ent *sh = ring_at(st, k), *dl;

		if (sh->role != ROLE_SHELL || !sh->in[0] || !ring_live(v, sh))
			continue;
		dl = source_of(st, v, sh, hit);
		if (!dl)
			continue;
		sh->role = ROLE_DONE;   /* one alert per shell */
		det_finish_refs(hit, sh->seq);
		hit->extra = json_pack("{s:s,s:s,s:s}", "downloader", dl->note, "shell",
				       sh->note, "pipe", sh->in);
		return hit->extra ? 1 : -ENOMEM;
	}
	hit->n_refs = 0;
	return 0;
}

static int64_t int_of(const struct eval_ctx *x, const char *k)
{
	json_t *p = json_object_get(x->ev, k);

	return json_is_integer(p) ? json_integer_value(p) : -1;
}

/* Whether some exec in the ring reads what writer w wrote (its stdout is their stdin). */
static bool consumed(struct det_state *st, const struct ring_ent *w)
{
	for (size_t k = 1; k <= st->n; k++) {
		const struct ring_ent *e = ring_at(st, k);

		if (e != w && e->in[0] && strcmp(e->in, w->out) == 0)
			return true;
	}
	return false;
}

/*
 * `bash -c "$(curl …)"` and backticks: the downloader's stdout went to the shell that
 * ran it (nothing exec'd read it), and that shell (or its exec'd self) then runs a shell
 * with its script as an argument: the download became the script.
 */
static int cmd_subst(const struct engine_view *v, const struct eval_ctx *x,
		     struct det_state *st, const char *name, const char *in,
		     struct det_hit *hit)
{
	int64_t pid = int_of(x, "pid"), ppid = int_of(x, "ppid");

	for (size_t k = 1; k <= st->n; k++) {
		struct ring_ent *dl = ring_at(st, k);

		if (dl->role != ROLE_DOWNLOADER || !ring_live(v, dl) || dl->ppid <= 0 ||
		    (dl->ppid != ppid && dl->ppid != pid) || consumed(st, dl) ||
		    strcmp(dl->out, in) == 0)   /* it reads the pipe: pairing's case */
			continue;
		dl->role = ROLE_DONE;   /* one alert per download */
		hit->n_refs = 0;
		hit->refs[hit->n_refs++] = dl->seq;
		det_finish_refs(hit, v->seq);
		hit->extra = json_pack("{s:s,s:s,s:s}", "downloader", dl->note, "shell", name,
				       "pipe", "command substitution");
		return hit->extra ? 1 : -ENOMEM;
	}
	return 0;
}

int det_pipe(const struct engine_view *v, const struct eval_ctx *x, struct det_hit *hit)
{
	struct det_state *st;
	const char *name = json_string_value(json_object_get(x->ev, "cmd_name"));
	const char *in = pipe_of(x, "stdin"), *out = pipe_of(x, "stdout");
	json_t *args = json_object_get(x->ev, "args");
	size_t from = (size_t)json_integer_value(json_object_get(x->ev, "args_from"));
	struct ring_ent *e;
	int role = ROLE_OTHER, got;

	if (strcmp(v->event, "process.exec") != 0 || !name)
		return 0;
	if (shell_inline(v->r, name, args, from) && (st = det_state_of(v, false)) != NULL &&
	    (got = cmd_subst(v, x, st, name, in, hit)) != 0)
		return got;
	if (!in[0] && !out[0])
		return 0;
	if (out[0] && is_downloader(v->r, name, args))
		role = ROLE_DOWNLOADER;
	else if (in[0] && is_shell(v->r, name, args, from))
		role = ROLE_SHELL;
	else if (in[0] && out[0])
		role = ROLE_RELAY;
	if (role == ROLE_OTHER && !in[0])
		return 0;
	/* Any other reader of a pipe too: it consumed what went in (cmd_subst). */
	st = det_state_of(v, true);
	if (!st)
		return -ENOMEM;
	e = ring_push(st, v, int_of(x, "pid"), name);
	e->ppid = int_of(x, "ppid");
	snprintf(e->in, sizeof(e->in), "%s", in);
	snprintf(e->out, sizeof(e->out), "%s", out);
	e->role = role;
	return pair(v, st, hit);
}
