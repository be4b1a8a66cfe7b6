/*
 * Reads of sensitive files, bounded: the first read of a file in a session is a full
 * file.read; later reads of it in that session are counted and reported as one
 * file.read line with repeat: true, count, first_ts and last_ts per file and interval
 * (every exec re-reads /etc/ld.so.cache: one line per interval instead of one per exec).
 * Never dropped: a table that fills up reports what it holds at once, and forgets
 * files with nothing pending, which makes their next read a full line again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sensors/file/fan_int.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "journal/event.h"

#define READS_MAX 16384
#define READS_SLOTS (READS_MAX * 2)

struct rd_ent {
	bool used;
	uint32_t hash;
	char sid[SESSION_ID_MAX + 1];
	uint64_t fsid;
	size_t hlen;
	uint8_t h[FANID_HANDLE_MAX];   /* the identity, or a hash of the path (hlen 0) */
	uint64_t count;                /* reads since the last summary */
	struct timespec first, last;
	struct ptab_ent pe;            /* the last reader */
	char *path, *canonical;
};

struct fanreads {
	struct rd_ent *v;
	size_t n;
	uint64_t interval_ns, last_flush;
};

int fanreads_new(struct fanreads **out, uint64_t interval_ns)
{
	struct fanreads *r = calloc(1, sizeof(*r));

	if (!r || !(r->v = calloc(READS_SLOTS, sizeof(*r->v)))) {
		free(r);
		return -ENOMEM;
	}
	r->interval_ns = interval_ns;
	r->last_flush = time_mono_ns();
	*out = r;
	return 0;
}

static void ent_clear(struct rd_ent *e)
{
	free(e->path);
	free(e->canonical);
	memset(e, 0, sizeof(*e));
}

static void clear_all(struct fanreads *r, bool only_idle)
{
	for (size_t i = 0; i < READS_SLOTS; i++)
		if (r->v[i].used && (!only_idle || r->v[i].count == 0))
			ent_clear(&r->v[i]);
	r->n = 0;
	for (size_t i = 0; i < READS_SLOTS; i++)
		r->n += r->v[i].used;
}

void fanreads_free(struct fanreads *r)
{
	if (!r)
		return;
	clear_all(r, false);
	free(r->v);
	free(r);
}

static void put_ts(struct event *e, const char *key, const struct timespec *ts)
{
	char s[RFC3339_LEN + 1];

	time_format_rfc3339(ts, s);
	event_str(e, key, s);
}

static void emit_summary(struct rd_ent *x)
{
	struct event *e = fanemit_begin("file.read", &x->pe, x->path, FAN_HOW_HANDLE);

	if (!e)
		return;
	event_str(e, "canonical_path", x->canonical);
	event_bool(e, "repeat", true);
	event_uint(e, "count", x->count);
	put_ts(e, "first_ts", &x->first);
	put_ts(e, "last_ts", &x->last);
	fanemit_end(e, "file.read");
	x->count = 0;
}

void fanreads_flush(struct fanreads *r, bool all)
{
	uint64_t now = time_mono_ns();

	if (!r || (!all && now - r->last_flush < r->interval_ns))
		return;
	r->last_flush = now;
	for (size_t i = 0; i < READS_SLOTS; i++)
		if (r->v[i].used && r->v[i].count)
			emit_summary(&r->v[i]);
}

static bool ent_is(const struct rd_ent *e, uint32_t h, const char *sid, uint64_t fsid,
		   const uint8_t *k, size_t klen)
{
	return e->hash == h && e->fsid == fsid && e->hlen == klen &&
	       memcmp(e->h, k, klen) == 0 && strcmp(e->sid, sid) == 0;
}

/* Finds (sid, key) or the free slot for it; NULL only when the table is full. */
static struct rd_ent *lookup(struct fanreads *r, uint32_t h, const char *sid, uint64_t fsid,
			     const uint8_t *k, size_t klen)
{
	for (size_t i = h % READS_SLOTS, n = 0; n < READS_SLOTS; i = (i + 1) % READS_SLOTS, n++)
		if (!r->v[i].used || ent_is(&r->v[i], h, sid, fsid, k, klen))
			return &r->v[i];
	return NULL;
}

bool fanreads_hit(struct fanreads *r, const struct ptab_ent *pe, const struct fan_dfid *fid,
		  const char *path, const char *canonical)
{
	uint8_t k[FANID_HANDLE_MAX];
	size_t klen;
	uint64_t fsid = fid->set ? fid->fsid : 0;
	uint32_t h;
	struct rd_ent *e;

	if (!r)
		return true;
	if (fid->set && fid->handle_len <= sizeof(k)) {
		klen = fid->handle_len;
		memcpy(k, fid->handle, klen);
	} else {
		uint32_t ph = fnv1a(FNV1A_INIT, canonical, strlen(canonical));

		klen = sizeof(ph);   /* no identity: the canonical path stands for it */
		memcpy(k, &ph, klen);
	}
	h = fnv1a(fnv1a(fnv1a(FNV1A_INIT, pe->sid, strlen(pe->sid)), &fsid, sizeof(fsid)), k, klen);
	if (r->n >= READS_MAX) {
		fanreads_flush(r, true);   /* full: report what is pending, forget idle ones */
		clear_all(r, true);
	}
	e = lookup(r, h, pe->sid, fsid, k, klen);
	if (!e)
		return true;
	if (e->used) {
		if (e->count++ == 0)
			clock_gettime(CLOCK_REALTIME, &e->first);
		clock_gettime(CLOCK_REALTIME, &e->last);
		e->pe = *pe;
		if (strcmp(e->path, path) != 0) {
			char *p = strdup(path);   /* the path of the last read */

			if (p) {
				free(e->path);
				e->path = p;
			}
		}
		return false;
	}
	e->path = strdup(path);
	e->canonical = strdup(canonical);
	if (!e->path || !e->canonical) {
		ent_clear(e);
		return true;
	}
	e->used = true;
	e->hash = h;
	snprintf(e->sid, sizeof(e->sid), "%s", pe->sid);
	e->fsid = fsid;
	e->hlen = klen;
	memcpy(e->h, k, klen);
	r->n++;
	return true;
}
