/*
 * The pid -> session table of the audit threads: written by the proc connector thread
 * (fork tree, exec, exit), read by the fanotify thread, so one mutex guards it; every
 * call holds it for one short probe. Open addressing with backward-shift deletion.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/shared/proctab.h"

struct ptab {
	pthread_mutex_t mu;
	struct ptab_ent *v;
	size_t n;
};

int ptab_new(struct ptab **out)
{
	struct ptab *t = calloc(1, sizeof(*t));
	pthread_mutexattr_t at;
	int ret = -1;

	/* The connector thread runs real-time: a holder of lower priority inherits it. */
	if (pthread_mutexattr_init(&at) == 0) {
		(void)pthread_mutexattr_setprotocol(&at, PTHREAD_PRIO_INHERIT);
		if (t)
			ret = pthread_mutex_init(&t->mu, &at);
		pthread_mutexattr_destroy(&at);
	}
	if (t)
		t->v = calloc(PTAB_CAP, sizeof(*t->v));
	if (!t || !t->v || ret != 0) {
		if (t)
			free(t->v);
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void ptab_free(struct ptab *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->mu);
	free(t->v);
	free(t);
}

static size_t slot_of(const struct ptab *t, pid_t pid)
{
	size_t i = ((size_t)(uint32_t)pid * 2654435761u) & (PTAB_CAP - 1);

	while (t->v[i].pid != 0 && t->v[i].pid != pid)
		i = (i + 1) & (PTAB_CAP - 1);
	return i;
}

static int put_locked(struct ptab *t, const struct ptab_ent *e)
{
	size_t i = slot_of(t, e->pid);

	if (t->v[i].pid == 0) {
		/* Keep the table at most 3/4 full so probes stay short and terminate. */
		if (t->n * 4 >= PTAB_CAP * 3)
			return -ENOSPC;
		t->n++;
	}
	t->v[i] = *e;
	return 0;
}

static void del_locked(struct ptab *t, pid_t pid)
{
	size_t i = slot_of(t, pid), j;

	if (t->v[i].pid != pid)
		return;
	t->v[i].pid = 0;
	t->n--;
	/* Re-insert the rest of the probe run so lookups keep finding them. */
	for (j = (i + 1) & (PTAB_CAP - 1); t->v[j].pid != 0; j = (j + 1) & (PTAB_CAP - 1)) {
		struct ptab_ent e = t->v[j];

		t->v[j].pid = 0;
		t->n--;
		(void)put_locked(t, &e);   /* cannot fail: n just went down */
	}
}

int ptab_put(struct ptab *t, const struct ptab_ent *e)
{
	int ret;

	pthread_mutex_lock(&t->mu);
	ret = put_locked(t, e);
	pthread_mutex_unlock(&t->mu);
	return ret;
}

bool ptab_get(struct ptab *t, pid_t pid, bool dead_ok, struct ptab_ent *out)
{
	bool found;
	size_t i;

	pthread_mutex_lock(&t->mu);
	i = slot_of(t, pid);
	found = t->v[i].pid == pid && pid != 0 && (dead_ok || t->v[i].dead_ns == 0);
	if (found)
		*out = t->v[i];
	pthread_mutex_unlock(&t->mu);
	return found;
}

void ptab_exit(struct ptab *t, pid_t pid, uint64_t now_ns)
{
	size_t i;

	pthread_mutex_lock(&t->mu);
	i = slot_of(t, pid);
	if (t->v[i].pid == pid)
		t->v[i].dead_ns = now_ns ? now_ns : 1;
	pthread_mutex_unlock(&t->mu);
}

void ptab_set_uids(struct ptab *t, pid_t pid, uint32_t ruid, uint32_t euid)
{
	size_t i;

	pthread_mutex_lock(&t->mu);
	i = slot_of(t, pid);
	if (t->v[i].pid == pid) {
		t->v[i].uid = ruid;
		t->v[i].euid = euid;
		t->v[i].ids_known = true;
	}
	pthread_mutex_unlock(&t->mu);
}

void ptab_del(struct ptab *t, pid_t pid)
{
	pthread_mutex_lock(&t->mu);
	del_locked(t, pid);
	pthread_mutex_unlock(&t->mu);
}

void ptab_sweep(struct ptab *t, uint64_t now_ns)
{
	size_t i = 0;

	pthread_mutex_lock(&t->mu);
	/* A deletion shifts later entries back into i: look at i again before moving on. */
	while (i < PTAB_CAP) {
		const struct ptab_ent *e = &t->v[i];

		if (e->pid != 0 && e->dead_ns != 0 && now_ns - e->dead_ns > PTAB_DEAD_KEEP_NS) {
			del_locked(t, e->pid);
			continue;
		}
		i++;
	}
	pthread_mutex_unlock(&t->mu);
}

size_t ptab_live(struct ptab *t, struct ptab_ent *out, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&t->mu);
	for (size_t i = 0; i < PTAB_CAP && n < max; i++)
		if (t->v[i].pid != 0 && t->v[i].dead_ns == 0)
			out[n++] = t->v[i];
	pthread_mutex_unlock(&t->mu);
	return n;
}

bool ptab_set_sid(struct ptab *t, pid_t pid, uint64_t start_ns, const char *sid)
{
	bool done;
	size_t i;

	pthread_mutex_lock(&t->mu);
	i = slot_of(t, pid);
	done = pid != 0 && t->v[i].pid == pid && t->v[i].start_ns == start_ns &&
	       t->v[i].dead_ns == 0;
	if (done)
		snprintf(t->v[i].sid, sizeof(t->v[i].sid), "%s", sid);
	pthread_mutex_unlock(&t->mu);
	return done;
}
