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

/* sh-family: options only (or "-s", "-", "/dev/stdin"), no -c and no script file. */
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
				return false;   /* -c STRING: the script is an argument */
			if (strchr(s + 1, 's') && s[1] != '-')
				return true;
			continue;
		}
		return false;           /* a script file */
	}
	return true;
}

static bool is_shell(const struct drule *r, const char *name, json_t *args)
{
	if (!in_list(r->list_b, r->n_b, name) &&
	    !(strncmp(name, "python", 6) == 0 && in_list(r->list_b, r->n_b, "python")))
		return false;
	if (strcmp(name, "busybox") == 0) {
		const char *applet = json_string_value(json_array_get(args, 0));

		return applet && (strcmp(applet, "sh") == 0 || strcmp(applet, "ash") == 0) &&
		       shell_reads_stdin(args, 1);
	}
	return shell_reads_stdin(args, 0);
}

static const char *pipe_of(const struct eval_ctx *x, const char *key)
{
	const char *s = json_string_value(json_object_get(x->ev, key));

	return s && strncmp(s, "pipe:[", 6) == 0 ? s : "";
}

static bool alive(const struct engine_view *v, const struct ring_ent *e)
{
	return e->ts_us <= v->ts_us && v->ts_us - e->ts_us <= (int64_t)v->r->window_ms * 1000;
}

/* The most recent live writer of pipe p, or NULL. */
static struct ring_ent *writer_of(struct det_state *st, const struct engine_view *v,
				  const char *p)
{
	for (size_t k = 1; k <= st->n; k++) {
		struct ring_ent *e = ring_at(st, k);

		if (e->out[0] && strcmp(e->out, p) == 0 && alive(v, e))
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

		if (sh->role != ROLE_SHELL || !sh->in[0] || !alive(v, sh))
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

int det_pipe(const struct engine_view *v, const struct eval_ctx *x, struct det_hit *hit)
{
	struct det_state *st;
	const char *name = json_string_value(json_object_get(x->ev, "cmd_name"));
	const char *in = pipe_of(x, "stdin"), *out = pipe_of(x, "stdout");
	json_t *args = json_object_get(x->ev, "args");
	struct ring_ent *e;
	int role = ROLE_OTHER;

	if (strcmp(v->event, "process.exec") != 0 || !name || (!in[0] && !out[0]))
		return 0;
	if (out[0] && is_downloader(v->r, name, args))
		role = ROLE_DOWNLOADER;
	else if (in[0] && is_shell(v->r, name, args))
		role = ROLE_SHELL;
	else if (in[0] && out[0])
		role = ROLE_RELAY;
	if (role == ROLE_OTHER)
		return 0;
	st = det_state_of(v, true);
	if (!st)
		return -ENOMEM;
	e = ring_push(st, v, 0, name);
	snprintf(e->in, sizeof(e->in), "%s", in);
	snprintf(e->out, sizeof(e->out), "%s", out);
	e->role = role;
	return pair(v, st, hit);
}
