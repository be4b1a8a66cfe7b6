/*
 * exec_of_downloaded_file: a file written by a process that had network activity in the
 * session (a downloader's exec — curl, wget, an interpreter fetching in its -c code — or
 * a net.connect/net.dns naming its pid), then executed: as the program (`curl -o x;
 * chmod +x x; ./x`, exe or the dynamic loader's program) or as the script an interpreter
 * or shell was given (`sh x`, `python3 x.py`). A rename carries the mark to the new path.
 * A downloaded file that is only read is not an exec: nothing. Paths longer than the
 * ring's 191 bytes are not matched.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "detect/detect_int.h"

enum { DL_NETPID = 1, DL_FILE };

static int64_t int_of(const struct eval_ctx *x, const char *k)
{
	json_t *p = json_object_get(x->ev, k);

	return json_is_integer(p) ? json_integer_value(p) : -1;
}

static const char *str_of(const struct eval_ctx *x, const char *k)
{
	return json_string_value(json_object_get(x->ev, k));
}

static struct ring_ent *find(struct det_state *st, const struct engine_view *v, int role,
			     int64_t pid, const char *path)
{
	for (size_t k = 1; k <= st->n; k++) {
		struct ring_ent *e = ring_at(st, k);

		if (e->role == role && ring_live(v, e) && (pid < 0 || e->pid == pid) &&
		    (!path || strcmp(e->out, path) == 0))
			return e;
	}
	return NULL;
}

/* An exec that fetches: a downloader, or an interpreter whose inline code names a URL
 * opener. */
static bool fetches(const struct eval_ctx *x)
{
	static const char *const dl[] = { "curl", "wget", "aria2c", "fetch", "lftp", NULL };
	static const char *const opener[] = { "urlopen", "urllib", "requests.", "http.client",
					      "urlretrieve", "LWP::", "HTTP::Tiny", "open-uri",
					      "http.get", "https.get", "fetch(", NULL };
	const char *name = str_of(x, "cmd_name");
	json_t *args = json_object_get(x->ev, "args"), *a;
	size_t i;

	if (!name)
		return false;
	for (size_t k = 0; dl[k]; k++)
		if (strcmp(name, dl[k]) == 0)
			return true;
	json_array_foreach(args, i, a) {
		const char *s = json_string_value(a);

		for (size_t k = 0; s && opener[k]; k++)
			if (strstr(s, opener[k]))
				return true;
	}
	return false;
}

/* dir + "/" + rel, without "./" in front of rel. */
static void join(char *out, size_t len, const char *dir, const char *rel)
{
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	if (rel[0] == '/' || !dir)
		snprintf(out, len, "%s", rel);
	else
		snprintf(out, len, "%s/%s", dir, rel);
}

/* Shells and interpreters: their first non-option argument is a script they run. */
static bool interpreter(const char *n)
{
	static const char *const v[] = { "sh", "bash", "dash", "zsh", "ksh", "ash", "busybox",
					 "perl", "ruby", "node", "php", NULL };

	if (!n)
		return false;
	for (size_t k = 0; v[k]; k++)
		if (strcmp(n, v[k]) == 0)
			return true;
	return strncmp(n, "python", 6) == 0;
}

/* What an exec ran from a file: program (exe, or the loader's program), and for a shell
 * or interpreter the first argument that is not an option (its script). */
static struct ring_ent *ran_downloaded(struct det_state *st, const struct engine_view *v,
				       const struct eval_ctx *x)
{
	const char *prog = str_of(x, "program"), *cwd = str_of(x, "cwd");
	json_t *args = json_object_get(x->ev, "args"), *a;
	size_t i, from = (size_t)json_integer_value(json_object_get(x->ev, "args_from"));
	struct ring_ent *f;
	char path[192];

	if (!prog)
		prog = str_of(x, "exe");
	if (prog && (f = find(st, v, DL_FILE, -1, prog)) != NULL)
		return f;
	if (!interpreter(str_of(x, "cmd_name")))
		return NULL;
	json_array_foreach(args, i, a) {
		const char *s = json_string_value(a);

		if (i < from || !s || s[0] == '-' || s[0] == '+')
			continue;
		join(path, sizeof(path), cwd, s);
		return find(st, v, DL_FILE, -1, path);
	}
	return NULL;
}

static int on_exec(const struct engine_view *v, const struct eval_ctx *x,
		   struct det_state *st, struct det_hit *hit)
{
	struct ring_ent *f = ran_downloaded(st, v, x), *e;

	if (f) {
		hit->n_refs = 0;
		hit->refs[hit->n_refs++] = f->seq;
		det_finish_refs(hit, v->seq);
		hit->extra = json_pack("{s:s,s:s}", "file", f->out, "writer", f->note);
		return hit->extra ? 1 : -ENOMEM;
	}
	if (fetches(x)) {
		e = ring_push(st, v, int_of(x, "pid"), str_of(x, "cmd_name"));
		e->role = DL_NETPID;
	}
	return 0;
}

int det_dlexec(const struct engine_view *v, const struct eval_ctx *x, struct det_hit *hit)
{
	struct det_state *st = det_state_of(v, true);
	const char *path = str_of(x, "path");
	int64_t pid = int_of(x, "pid");
	struct ring_ent *w, *e;

	if (!st)
		return -ENOMEM;
	if (strcmp(v->event, "process.exec") == 0)
		return on_exec(v, x, st, hit);
	if (strncmp(v->event, "net.", 4) == 0) {
		if (pid > 0 && !find(st, v, DL_NETPID, pid, NULL))
			ring_push(st, v, pid, "network")->role = DL_NETPID;
		return 0;
	}
	if (strcmp(v->event, "file.rename") == 0) {
		const char *to = str_of(x, "new_path");

		w = path && to ? find(st, v, DL_FILE, -1, path) : NULL;
		if (w) {
			e = ring_push(st, v, w->pid, w->note);
			e->role = DL_FILE;
			snprintf(e->out, sizeof(e->out), "%s", to);
		}
		return 0;
	}
	/* file.write, file.create by a process with network activity */
	if (!path || pid <= 0 || !(w = find(st, v, DL_NETPID, pid, NULL)) ||
	    find(st, v, DL_FILE, pid, path))
		return 0;
	e = ring_push(st, v, pid, w->note);
	e->role = DL_FILE;
	snprintf(e->out, sizeof(e->out), "%s", path);
	return 0;
}
