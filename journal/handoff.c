/*
 * The handoff (journal/handoff.h): an arena of entries (the tokens), each written
 * whole where the last one ended (or at the start, when it does not fit before the
 * end), and a table of slots by seq, the slot saying where in the arena's history
 * (a byte count that only grows) its entry starts. An entry is still held while the
 * writer has not written an arena's worth of bytes since it.
 */
#include "journal/handoff.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * One writer, any readers, no lock: the writer never waits for a reader (readers run at
 * SCHED_IDLE and may be preempted anywhere). A slot is a seqlock (ver odd while the
 * writer rewrites it); the arena's history count is advanced before the bytes it covers
 * are written, so a reader that copied an entry and then still finds the count within
 * an arena of the entry's start knows it copied no byte of a later entry.
 */
struct slot {
	uint64_t ver;          /* even: stable */
	uint64_t seq;          /* UINT64_MAX: empty */
	uint64_t from;         /* the entry's first byte, in the arena's history */
	uint32_t len;          /* the line's bytes */
	uint32_t n_tok;
	uint8_t leaf[MERKLE_HASH_LEN];   /* the line's leaf hash, as the writer chained it */
};

struct handoff {
	char *arena;
	size_t size;
	uint64_t written;      /* bytes of history so far; the arena holds the last size */
	struct slot *slots;
	size_t mask;
	uint64_t put, skipped, mismatched;
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
	h->slots = calloc(n, sizeof(*h->slots));
	if (!h->arena || !h->slots) {
		free(h->arena);
		free(h->slots);
		free(h);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		h->slots[i].seq = UINT64_MAX;
	h->mask = n - 1;
	return h;
}

void handoff_free(struct handoff *h)
{
	if (!h)
		return;
	free(h->arena);
	free(h->slots);
	free(h);
}

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

void handoff_put(struct handoff *h, uint64_t seq, const uint8_t leaf[MERKLE_HASH_LEN],
		 size_t len, const void *tokens, size_t n_tok)
{
	size_t need = n_tok * sizeof(struct shape_tok);
	struct slot *s = &h->slots[seq & h->mask];
	uint64_t from = h->written, ver = s->ver;
	size_t at = (size_t)(from % h->size);

	STORE(&s->ver, ver + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	/* A shape larger than an eighth of the arena would push out too many others. */
	if (need > h->size / 8 || len > UINT32_MAX) {
		STORE(&h->skipped, h->skipped + 1);
		STORE(&s->seq, UINT64_MAX);
		__atomic_store_n(&s->ver, ver + 2, __ATOMIC_RELEASE);
		return;
	}
	if (h->size - at < need) {            /* not split: to the start */
		from += h->size - at;
		at = 0;
	}
	/* The count first: a reader of what these bytes held sees they are gone. */
	STORE(&h->written, from + need);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->arena + at, tokens, need);
	STORE(&s->seq, seq);
	STORE(&s->from, from);
	STORE(&s->len, (uint32_t)len);
	STORE(&s->n_tok, (uint32_t)n_tok);
	memcpy(s->leaf, leaf, MERKLE_HASH_LEN);
	__atomic_store_n(&s->ver, ver + 2, __ATOMIC_RELEASE);
	STORE(&h->put, h->put + 1);
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

/* The entry of line seq copied out, or false: not held, or rewritten while copying. */
static bool copy_entry(struct handoff *h, uint64_t seq, size_t len, struct shape *out,
		       uint8_t leaf[MERKLE_HASH_LEN])
{
	const struct slot *s = &h->slots[seq & h->mask];
	uint64_t ver = __atomic_load_n(&s->ver, __ATOMIC_ACQUIRE), from;
	uint32_t n_tok;

	if (ver & 1 || LOAD(&s->seq) != seq || LOAD(&s->len) != len)
		return false;
	from = LOAD(&s->from);
	n_tok = LOAD(&s->n_tok);
	memcpy(leaf, s->leaf, MERKLE_HASH_LEN);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (LOAD(&s->ver) != ver)
		return false;
	if (__atomic_load_n(&h->written, __ATOMIC_ACQUIRE) - from > h->size || !grow(out, n_tok))
		return false;
	memcpy(out->tok, h->arena + (size_t)(from % h->size), n_tok * sizeof(*out->tok));
	out->n = n_tok;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	/* Still within an arena of the entry's start after the copy: no byte rewritten. */
	return LOAD(&h->written) - from <= h->size;
}

bool handoff_get(struct handoff *h, uint64_t seq, const char *line, size_t len,
		 struct shape *out)
{
	uint8_t want[MERKLE_HASH_LEN], got[MERKLE_HASH_LEN];

	if (!copy_entry(h, seq, len, out, want))
		return false;
	/*
	 * The line read is the one the writer chained under this seq: its leaf hash (what
	 * the next line's prev and the Merkle tree hold) is the one the writer computed.
	 */
	merkle_leaf_hash(line, len, got);
	if (memcmp(want, got, sizeof(got)) != 0) {
		__atomic_add_fetch(&h->mismatched, 1, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

void handoff_get_stats(struct handoff *h, struct handoff_stats *st)
{
	st->put = LOAD(&h->put);
	st->skipped = LOAD(&h->skipped);
	st->mismatched = LOAD(&h->mismatched);
	st->arena_bytes = h->size;
}
