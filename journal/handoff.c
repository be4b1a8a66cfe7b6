/*
 * The handoff (journal/handoff.h): an arena of entries (a line's tokens, packed), each
 * written whole where the last one ended (or at the start, when it does not fit before
 * the end), and a table of slots by seq, the slot saying where in the arena's history
 * (a byte count that only grows) its entry starts. An entry is still held while an
 * arena's worth of bytes has not been claimed since it.
 *
 * Two steps, on two sides of the journal queue: the producer that queues a line claims
 * its entry and packs the tokens into it (handoff_claim, under the queue's lock, which
 * orders the claims), and the queue carries the entry's place instead of the tokens;
 * the writer, once it has chained the line, fills the slot (handoff_put). So the
 * writer, the one thread every line goes through, stores a slot a line and copies no
 * token (bench/journal: copying them there cost the append path 10-20 %).
 */
#include "journal/handoff.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*
 * Claimers serialized by the caller, one writer, any readers, no lock between them and
 * the readers: neither side waits for a reader (readers run at SCHED_IDLE and may be
 * preempted anywhere). A slot is a seqlock whose version says which line it holds:
 * 2*seq + 1 while the writer fills it, 2*seq + 2 once filled. The arena's history count
 * is advanced before the bytes it covers are written, so a reader that copied an entry
 * and then still finds the count within an arena of the entry's start knows it copied
 * no byte of a later entry. An entry's bytes reach the writer through the queue's lock
 * and the readers through the slot's version.
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
 * Read by every get: what does not change, on a line of its own; what the claimers and
 * the writer change on others. The count readers check is advanced a stretch at a time
 * (RESERVE), not at every claim: a line written at every claim and read at every get
 * would move between the producers' cores and the readers' at every line.
 */
struct handoff {
	char *arena;
	size_t size;
	struct slot *slots;
	size_t n_slots;
	size_t reserve;        /* RESERVE, or a sixteenth of a small arena */
	_Alignas(64) uint64_t reserved;   /* every byte of history written is below this */
	_Alignas(64) uint64_t written;    /* the claimers': bytes of history so far */
	uint64_t skipped;
	_Alignas(64) uint64_t put;        /* the writer's */
	_Alignas(64) uint64_t mismatched; /* the readers' */
};

#define RESERVE 65536      /* history bytes reserved at once */

#define LINE_BYTES 132     /* a slot (64) and an entry of 17 tokens (68): memory per line */

/*
 * A token as held here: 4 bytes, not the builder's 8. The arena is written at every
 * line (by the producer that queues it) and read by readers that come after other work
 * (they run at SCHED_IDLE): it is out of the caches both times, so its bytes a line are
 * what the append path pays (bench/journal: 32 MiB of 200-byte lines cost it twice
 * what 4 MiB did). len 18 bits (a value of up to 256 KiB), key_len 6, kind 3 and its
 * escape flag 1, depth 4: a line with a value beyond these is not held (its readers
 * parse it; counted as skipped).
 */
#define PK_LEN_BITS 18
#define PK_KEY_BITS 6
#define PK_DEPTH_MAX 15

static bool pack_tok(const void *src, uint32_t *out)
{
	struct shape_tok t;

	memcpy(&t, src, sizeof(t));           /* as queued: not necessarily aligned */
	if (t.len >> PK_LEN_BITS || t.key_len >> PK_KEY_BITS || t.depth > PK_DEPTH_MAX ||
	    (t.kind & 0x7f) > 7)
		return false;
	*out = t.len | (uint32_t)t.key_len << PK_LEN_BITS |
	       (uint32_t)((t.kind & 7) | (t.kind & SHAPE_ESC ? 8 : 0)) << 24 |
	       (uint32_t)t.depth << 28;
	return true;
}

static struct shape_tok unpack_tok(uint32_t p)
{
	return (struct shape_tok){
		.len = p & ((1u << PK_LEN_BITS) - 1),
		.key_len = (uint16_t)(p >> PK_LEN_BITS & ((1u << PK_KEY_BITS) - 1)),
		.kind = (uint8_t)((p >> 24 & 7) | (p >> 24 & 8 ? SHAPE_ESC : 0)),
		.depth = (uint8_t)(p >> 28),
	};
}

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
	size_t n;

	if (bytes < 65536)
		return NULL;
	h = aligned_alloc(64, sizeof(*h));   /* its lines apart (above) */
	if (!h)
		return NULL;
	memset(h, 0, sizeof(*h));
	/* As many slots as lines of LINE_BYTES fit in bytes (not a power of two: the
	 * memory asked for is what is used); the arena has the rest. */
	n = bytes / LINE_BYTES;
	h->size = (bytes - n * sizeof(struct slot)) & ~(size_t)7;
	h->n_slots = n;
	h->reserve = h->size / 16 < RESERVE ? h->size / 16 : RESERVE;
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

bool handoff_claim(struct handoff *h, const void *tokens, size_t n_tok, uint64_t *from_out)
{
	size_t need = n_tok * sizeof(uint32_t);
	uint64_t from = h->written;
	size_t at = (size_t)(from % h->size);
	uint32_t *to, packed;

	/* A shape larger than an eighth of the arena would push out too many others. */
	if (n_tok == 0 || need > h->size / 8 || n_tok > UINT32_MAX) {
		__atomic_add_fetch(&h->skipped, 1, __ATOMIC_RELAXED);
		return false;
	}
	if (h->size - at < need) {            /* not split: to the start */
		from += h->size - at;
		at = 0;
	}
	/* The claim first: a reader of what these bytes held sees they are gone. */
	STORE(&h->written, from + need);
	if (h->written > h->reserved) {
		STORE(&h->reserved, h->written + h->reserve);
		put_fence();
	}
	to = (uint32_t *)(void *)(h->arena + at);   /* at and need: multiples of 4 */
	for (size_t i = 0; i < n_tok; i++) {
		if (!pack_tok((const char *)tokens + i * sizeof(struct shape_tok), &packed)) {
			__atomic_add_fetch(&h->skipped, 1, __ATOMIC_RELAXED);
			return false;         /* what was stored is never pointed to */
		}
		STORE(&to[i], packed);
	}
	*from_out = from;
	return true;
}

void handoff_put(struct handoff *h, uint64_t seq, const uint8_t leaf[MERKLE_HASH_LEN],
		 size_t len, uint64_t from, size_t n_tok)
{
	struct slot *s = &h->slots[seq % h->n_slots];
	uint64_t w;

	put64(&s->ver, 2 * seq + 1);
	put_fence();
	if (len > UINT32_MAX || n_tok > UINT32_MAX) {
		__atomic_add_fetch(&h->skipped, 1, __ATOMIC_RELAXED);
		return;                       /* the slot stays odd: no line */
	}
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
	const struct slot *s = &h->slots[seq % h->n_slots];
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
	{
		const uint32_t *src = (const uint32_t *)(const void *)(h->arena +
								      (size_t)(from % h->size));

		for (uint32_t i = 0; i < n_tok; i++)
			out->tok[i] = unpack_tok(LOAD(&src[i]));
	}
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
