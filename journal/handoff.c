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
#include <sys/mman.h>

/*
 * One writer, any readers, no lock: the writer never waits for a reader (readers run at
 * SCHED_IDLE and may be preempted anywhere). A slot is a seqlock whose version says
 * which line it holds: 2*seq + 1 while the writer fills it, 2*seq + 2 once filled. The
 * arena's history count is advanced before the bytes it covers are written, so a reader
 * that copied an entry and then still finds the count within an arena of the entry's
 * start knows it copied no byte of a later entry.
 *
 * The writer reads nothing of a slot before it rewrites it (the version comes from the
 * seq), and the memory is mapped as lines first reach it.
 * The history claimed (reserved) is ahead of what is written by up to RESERVE (64 KiB,
 * at most a sixteenth of the arena): a reader treats an entry as gone that much early,
 * never late.
 */
struct slot {
	uint64_t ver;          /* above; 0: never filled */
	uint64_t from;         /* the entry's first byte, in the arena's history */
	uint64_t len_n;        /* the line's bytes | tokens << 32 */
	uint64_t leaf[MERKLE_HASH_LEN / 8];   /* the line's leaf hash, as the writer chained it */
	uint64_t pad;          /* a slot is one cache line */
};

/*
 * Read by every get: what does not change, on a line of its own; what the writer
 * changes on others. The count readers check is advanced a stretch at a time
 * (RESERVE), not at every put: a line written at every put and read at every get
 * would move between the writer's core and the readers' at every line.
 */
struct handoff {
	char *arena;
	size_t size;
	struct slot *slots;
	size_t n_slots, mask;
	size_t reserve;        /* RESERVE, or a sixteenth of a small arena */
	_Alignas(64) uint64_t reserved;   /* every byte of history written is below this */
	_Alignas(64) uint64_t written;    /* the writer's: bytes of history so far */
	uint64_t put, skipped;
	_Alignas(64) uint64_t mismatched; /* the readers' */
};

#define RESERVE 65536      /* history bytes the writer claims at once */

#define LINE_BYTES 200     /* a slot (64) and an entry of 17 tokens (136): memory per line */

static inline void put64(void *dst, uint64_t v)
{
	__atomic_store_n((uint64_t *)dst, v, __ATOMIC_RELAXED);
}

/* Stores before it are seen before stores after it (free on x86: a compiler barrier). */
static inline void put_fence(void)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/* Zeroed memory whose pages are mapped only when first written. */
static void *lazy_zeroed(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

struct handoff *handoff_new(size_t bytes)
{
	struct handoff *h;
	size_t n = 1;

	if (bytes < 65536)
		return NULL;
	h = aligned_alloc(64, sizeof(*h));   /* its lines apart (above) */
	if (!h)
		return NULL;
	memset(h, 0, sizeof(*h));
	/* The table's slots, a power of two, as many as lines of LINE_BYTES fit in bytes;
	 * the arena has the rest. */
	while (n * 2 <= bytes / LINE_BYTES)
		n <<= 1;
	h->size = (bytes - n * sizeof(struct slot)) & ~(size_t)7;
	h->n_slots = n;
	h->reserve = h->size / 16 < RESERVE ? h->size / 16 : RESERVE;
	h->mask = n - 1;
	h->arena = lazy_zeroed(h->size);
	h->slots = lazy_zeroed(n * sizeof(*h->slots));
	if (!h->arena || !h->slots) {
		handoff_free(h);
		return NULL;
	}
	return h;
}

void handoff_free(struct handoff *h)
{
	if (!h)
		return;
	if (h->arena)
		munmap(h->arena, h->size);
	if (h->slots)
		munmap(h->slots, h->n_slots * sizeof(*h->slots));
	free(h);
}

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

void handoff_put(struct handoff *h, uint64_t seq, const uint8_t leaf[MERKLE_HASH_LEN],
		 size_t len, const void *tokens, size_t n_tok)
{
	size_t need = n_tok * sizeof(struct shape_tok);
	struct slot *s = &h->slots[seq & h->mask];
	uint64_t from = h->written, w;
	size_t at = (size_t)(from % h->size);

	put64(&s->ver, 2 * seq + 1);
	put_fence();
	/* A shape larger than an eighth of the arena would push out too many others. */
	if (need > h->size / 8 || len > UINT32_MAX || n_tok > UINT32_MAX) {
		STORE(&h->skipped, h->skipped + 1);
		return;                       /* the slot stays odd: no line */
	}
	if (h->size - at < need) {            /* not split: to the start */
		from += h->size - at;
		at = 0;
	}
	/* The claim first: a reader of what these bytes held sees they are gone. */
	h->written = from + need;
	if (h->written > h->reserved) {
		STORE(&h->reserved, h->written + h->reserve);
		put_fence();
	}
	memcpy(h->arena + at, tokens, need);
	put64(&s->from, from);
	put64(&s->len_n, (uint64_t)len | (uint64_t)n_tok << 32);
	for (size_t i = 0; i < MERKLE_HASH_LEN / 8; i++) {
		memcpy(&w, leaf + 8 * i, sizeof(w));
		put64(&s->leaf[i], w);
	}
	put_fence();
	put64(&s->ver, 2 * seq + 2);
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
	uint64_t ver = __atomic_load_n(&s->ver, __ATOMIC_ACQUIRE), from, len_n;
	uint32_t n_tok;

	if (ver != 2 * seq + 2)
		return false;
	from = LOAD(&s->from);
	len_n = LOAD(&s->len_n);
	for (size_t i = 0; i < MERKLE_HASH_LEN / 8; i++) {
		uint64_t w = LOAD(&s->leaf[i]);

		memcpy(leaf + 8 * i, &w, sizeof(w));
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (LOAD(&s->ver) != ver || (uint32_t)len_n != len)
		return false;
	n_tok = (uint32_t)(len_n >> 32);
	if (__atomic_load_n(&h->reserved, __ATOMIC_ACQUIRE) - from > h->size || !grow(out, n_tok))
		return false;
	memcpy(out->tok, h->arena + (size_t)(from % h->size), n_tok * sizeof(*out->tok));
	out->n = n_tok;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	/* Still within an arena of the entry's start after the copy: no byte rewritten. */
	return LOAD(&h->reserved) - from <= h->size;
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
