/*
 * The handoff (journal/handoff.h): an arena of entries (the tokens), each written
 * whole where the last one ended (or at the start, when it does not fit before the
 * end), and a table of slots by seq, the slot saying where in the arena's history
 * (a byte count that only grows) its entry starts. An entry is still held while the
 * writer has not written an arena's worth of bytes since it.
 */
#include "journal/handoff.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	uint64_t seq;          /* UINT64_MAX: empty */
	uint64_t from;         /* the entry's first byte, in the arena's history */
	uint32_t len;          /* the line's bytes */
	uint32_t n_tok;
	uint8_t leaf[MERKLE_HASH_LEN];   /* the line's leaf hash, as the writer chained it */
};

struct handoff {
	pthread_mutex_t lock;
	char *arena;
	size_t size;
	uint64_t written;      /* bytes of history so far; the arena holds the last size */
	struct slot *slots;
	size_t mask;
	struct handoff_stats st;
};

#define AVG_ENTRY 192      /* arena bytes per slot of the table (16 tokens a line) */

struct handoff *handoff_new(size_t arena_bytes)
{
	struct handoff *h;
	size_t n = 1;

	if (arena_bytes < 65536)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	while (n < arena_bytes / AVG_ENTRY)
		n <<= 1;
	h->size = arena_bytes;
	h->arena = malloc(arena_bytes);
	h->slots = malloc(n * sizeof(*h->slots));
	if (!h->arena || !h->slots || pthread_mutex_init(&h->lock, NULL) != 0) {
		free(h->arena);
		free(h->slots);
		free(h);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		h->slots[i].seq = UINT64_MAX;
	h->mask = n - 1;
	h->st.arena_bytes = arena_bytes;
	return h;
}

void handoff_free(struct handoff *h)
{
	if (!h)
		return;
	pthread_mutex_destroy(&h->lock);
	free(h->arena);
	free(h->slots);
	free(h);
}

void handoff_put(struct handoff *h, uint64_t seq, const uint8_t leaf[MERKLE_HASH_LEN],
		 size_t len, const void *tokens, size_t n_tok)
{
	size_t need = n_tok * sizeof(struct shape_tok);
	struct slot *s = &h->slots[seq & h->mask];
	size_t at;

	pthread_mutex_lock(&h->lock);
	/* A shape larger than an eighth of the arena would push out too many others. */
	if (need > h->size / 8 || len > UINT32_MAX) {
		h->st.skipped++;
		s->seq = UINT64_MAX;
		pthread_mutex_unlock(&h->lock);
		return;
	}
	at = (size_t)(h->written % h->size);
	if (h->size - at < need) {            /* not split: to the start */
		h->written += h->size - at;
		at = 0;
	}
	memcpy(h->arena + at, tokens, need);
	*s = (struct slot){ .seq = seq, .from = h->written, .len = (uint32_t)len,
			    .n_tok = (uint32_t)n_tok };
	memcpy(s->leaf, leaf, MERKLE_HASH_LEN);
	h->written += need;
	h->st.put++;
	pthread_mutex_unlock(&h->lock);
}

static bool grow(struct shape *out, size_t n)
{
	size_t cap = out->cap ? out->cap : 64;
	struct shape_tok *t;

	if (out->cap >= n)
		return true;
	while (cap < n)
		cap *= 2;
	t = realloc(out->tok, cap * sizeof(*t));
	if (!t)
		return false;
	out->tok = t;
	out->cap = cap;
	return true;
}

bool handoff_get(struct handoff *h, uint64_t seq, const char *line, size_t len,
		 struct shape *out)
{
	const struct slot *s = &h->slots[seq & h->mask];
	uint8_t want[MERKLE_HASH_LEN], got[MERKLE_HASH_LEN];
	bool ok = false;

	pthread_mutex_lock(&h->lock);
	if (s->seq == seq && s->len == len && h->written - s->from <= h->size &&
	    grow(out, s->n_tok)) {
		memcpy(out->tok, h->arena + (size_t)(s->from % h->size),
		       s->n_tok * sizeof(*out->tok));
		out->n = s->n_tok;
		memcpy(want, s->leaf, sizeof(want));
		ok = true;
	}
	pthread_mutex_unlock(&h->lock);
	if (!ok)
		return false;
	/*
	 * The line read is the one the writer chained under this seq: its leaf hash (what
	 * the next line's prev and the Merkle tree hold) is the one the writer computed.
	 * Outside the lock: the writer never waits for a reader's hashing.
	 */
	merkle_leaf_hash(line, len, got);
	if (memcmp(want, got, sizeof(got)) != 0) {
		__atomic_add_fetch(&h->st.mismatched, 1, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

void handoff_get_stats(struct handoff *h, struct handoff_stats *st)
{
	pthread_mutex_lock(&h->lock);
	*st = h->st;
	pthread_mutex_unlock(&h->lock);
	st->mismatched = __atomic_load_n(&h->st.mismatched, __ATOMIC_RELAXED);
}
