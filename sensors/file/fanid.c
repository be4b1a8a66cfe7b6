/*
 * Files by identity: a table keyed by (fsid, file handle), the key fanotify reports in
 * its FID records and that a rename, a hard link or an open by handle does not change.
 * Open addressing with linear probing and backward-shift deletion (no tombstones), so a
 * table that sees many deletions never degrades. Pure code (unit-tested).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/file/fan_int.h"
#include "common/hash.h"

int fanid_init(struct fanid *t, size_t cap)
{
	size_t c = 16;

	while (c < cap + cap / 3)
		c <<= 1;
	t->v = calloc(c, sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	t->cap = c;
	t->max = cap;
	t->n = 0;
	return 0;
}

static void ent_clear(struct fanid_ent *e)
{
	free(e->path);
	memset(e, 0, sizeof(*e));
}

void fanid_clear(struct fanid *t)
{
	for (size_t i = 0; t->v && i < t->cap; i++)
		if (t->v[i].hlen)
			ent_clear(&t->v[i]);
	t->n = 0;
}

void fanid_fini(struct fanid *t)
{
	fanid_clear(t);
	free(t->v);
	t->v = NULL;
	t->cap = t->max = 0;
}

static size_t home_of(const struct fanid *t, uint64_t fsid, const uint8_t *h, size_t hlen)
{
	return (size_t)fnv1a(fnv1a(FNV1A_INIT, &fsid, sizeof(fsid)), h, hlen) & (t->cap - 1);
}

static bool ent_is(const struct fanid_ent *e, uint64_t fsid, const uint8_t *h, size_t hlen)
{
	return e->hlen == hlen && e->fsid == fsid && memcmp(e->h, h, hlen) == 0;
}

struct fanid_ent *fanid_get(struct fanid *t, uint64_t fsid, const uint8_t *h, size_t hlen)
{
	size_t i;

	if (!t->v || hlen == 0 || hlen > FANID_HANDLE_MAX)
		return NULL;
	for (i = home_of(t, fsid, h, hlen); t->v[i].hlen; i = (i + 1) & (t->cap - 1))
		if (ent_is(&t->v[i], fsid, h, hlen))
			return &t->v[i];
	return NULL;
}

int fanid_put(struct fanid *t, uint64_t fsid, const uint8_t *h, size_t hlen,
	      struct fanid_ent **out)
{
	size_t i;

	if (!t->v)
		return -ENOMEM;
	if (hlen == 0 || hlen > FANID_HANDLE_MAX)
		return -E2BIG;
	for (i = home_of(t, fsid, h, hlen); t->v[i].hlen; i = (i + 1) & (t->cap - 1))
		if (ent_is(&t->v[i], fsid, h, hlen)) {
			*out = &t->v[i];
			return 0;
		}
	if (t->n >= t->max)
		return -ENOSPC;
	t->v[i].fsid = fsid;
	t->v[i].hlen = hlen;
	memcpy(t->v[i].h, h, hlen);
	t->n++;
	*out = &t->v[i];
	return 0;
}

/* Removes e; the entries of its probe run that hash before the hole move back into it. */
void fanid_del(struct fanid *t, struct fanid_ent *e)
{
	size_t hole = (size_t)(e - t->v), i = hole, home;

	ent_clear(e);
	t->n--;
	for (;;) {
		i = (i + 1) & (t->cap - 1);
		if (!t->v[i].hlen)
			return;
		home = home_of(t, t->v[i].fsid, t->v[i].h, t->v[i].hlen);
		/* Movable when its home is not in (hole, i] (cyclically). */
		if ((i > hole && (home <= hole || home > i)) ||
		    (i < hole && home <= hole && home > i)) {
			t->v[hole] = t->v[i];
			memset(&t->v[i], 0, sizeof(t->v[i]));
			hole = i;
		}
	}
}
