/* The session registry in memory: lookup by id and watch, marks, add and remove. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attribution/attribution.h"
#include "attribution/cgmap.h"
#include "attribution/registry_int.h"

int sessions_new(struct session_reg **out, const char *dir)
{
	struct session_reg *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->dir = strdup(dir);
	if (!r->dir) {
		free(r);
		return -ENOMEM;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int ret = -errno;

		sessions_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void sessions_free(struct session_reg *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		session_free(r->v[i]);
	free(r->v);
	free(r->dir);
	free(r);
}

const char *session_state_name(enum session_state s)
{
	static const char *const names[] = { "created", "running", "paused", "terminated" };

	return (unsigned)s < 4 ? names[s] : "unknown";
}

struct session *sessions_find(struct session_reg *r, const char *id)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->v[i]->id, id) == 0)
			return r->v[i];
	return NULL;
}

struct session *sessions_find_wd(struct session_reg *r, int wd)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i]->wd == wd)
			return r->v[i];
	return NULL;
}

size_t sessions_count(const struct session_reg *r)
{
	return r->n;
}

struct session *sessions_at(struct session_reg *r, size_t i)
{
	return i < r->n ? r->v[i] : NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The lowest mark no session holds: marks are reused only after cleanup. */
static int lowest_free_mark(const struct session_reg *r, uint32_t *mark)
{
	uint32_t *used = malloc((r->n + 1) * sizeof(*used)), want = 1;
	size_t i;

	if (!used)
		return -ENOMEM;
	for (i = 0; i < r->n; i++)
		used[i] = r->v[i]->mark;
	qsort(used, r->n, sizeof(*used), cmp_u32);
	for (i = 0; i < r->n && used[i] <= want; i++)
		if (used[i] == want)
			want++;
	free(used);
	if (want > SESSION_MARK_MAX)
		return -ENOSPC;
	*mark = want;
	return 0;
}

struct session *session_alloc(void)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->wd = -1;
	s->exit_status = -1;
	s->last_exit = -1;
	return s;
}

int sessions_prepare(struct session_reg *r, const char *id, struct session **out)
{
	struct session *s;
	int ret;

	if (!session_id_valid(id))
		return -EINVAL;
	if (sessions_find(r, id))
		return -EEXIST;
	s = session_alloc();
	if (!s)
		return -ENOMEM;
	snprintf(s->id, sizeof(s->id), "%s", id);
	ret = lowest_free_mark(r, &s->mark);
	if (ret) {
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int sessions_add(struct session_reg *r, struct session *s)
{
	struct session **grown;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;

		grown = realloc(r->v, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		r->v = grown;
		r->cap = cap;
	}
	/* Attribution follows the session's cgroup (attribution/cgmap.h). */
	if (cgmap_put(s->id, s->cgroup, s->cgroup_id) == -ENOMEM)
		return -ENOMEM;
	r->v[r->n++] = s;
	return 0;
}

void sessions_remove(struct session_reg *r, struct session *s)
{
	char path[1024];
	size_t i;

	for (i = 0; i < r->n; i++) {
		if (r->v[i] == s) {
			r->v[i] = r->v[--r->n];
			break;
		}
	}
	cgmap_del(s->id);
	snprintf(path, sizeof(path), "%s/%s.json", r->dir, s->id);
	unlink(path);
	session_free(s);
}

void session_free(struct session *s)
{
	size_t i;

	if (!s)
		return;
	free(s->tenant);
	free(s->user);
	free(s->template_name);
	free(s->policy);
	free(s->workdir);
	free(s->end_reason);
	for (i = 0; i < s->n_ifaces; i++)
		free(s->ifaces[i]);
	snapshot_free(s->snap);
	free(s);
}
