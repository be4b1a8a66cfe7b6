/* The journal's line queue (journal/queue.c): order, wrap-around, bounds, close. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "journal/handoff.h"
#include "journal/journal_impl.h"
#include "journal/merkle.h"

#define FAR_FUTURE UINT64_MAX / 2

/* Entry i: its number, then i % 997 bytes of a pattern of it. */
static size_t make_entry(uint32_t i, char *out)
{
	size_t len = sizeof(i) + i % 997;

	memcpy(out, &i, sizeof(i));
	for (size_t k = sizeof(i); k < len; k++)
		out[k] = (char)(i * 31 + k);
	return len;
}

static void check_entry(const struct lq_item *it, uint32_t want)
{
	char expect[2048];
	size_t len = make_entry(want, expect);

	assert_int_equal(it->len, len);
	assert_memory_equal(it->data, expect, len);
}

static void test_order_and_wrap(void **state)
{
	struct line_queue q;
	struct lq_item items[64];
	char e[2048];
	uint32_t next = 0, want = 0;

	(void)state;
	assert_int_equal(lq_init(&q, 1000, LQ_MIN_BYTES), 0);
	/* Many times around the ring, the writer taking a few at a time. */
	while (want < 40000) {
		size_t n, i;

		while (next < want + 50) {
			size_t len = make_entry(next, e);

			assert_int_equal(lq_push(&q, e, len, NULL), 0);
			next++;
		}
		n = lq_peek(&q, items, 7, 0);
		assert_true(n > 0);
		for (i = 0; i < n; i++)
			check_entry(&items[i], want++);
		lq_release(&q);
	}
	assert_int_equal(lq_depth(&q, NULL), next - want);
	lq_destroy(&q);
}

static void test_bounds(void **state)
{
	struct line_queue q;
	struct lq_item it;
	size_t hw;
	char *big = calloc(1, LQ_MIN_BYTES);

	(void)state;
	assert_non_null(big);
	assert_int_equal(lq_init(&q, 3, LQ_MIN_BYTES), 0);
	/* Larger than the ring: refused, not waited for. */
	assert_int_equal(lq_push(&q, big, LQ_MIN_BYTES, NULL), -EMSGSIZE);
	/* Almost half the ring: taken and released, then two of them fit together (the
	 * second right after the first, the ring's end reached exactly). */
	assert_int_equal(lq_push(&q, big, LQ_MIN_BYTES / 2 - 64, NULL), 0);
	assert_int_equal(lq_peek(&q, &it, 1, 0), 1);
	assert_int_equal(it.len, LQ_MIN_BYTES / 2 - 64);
	lq_release(&q);
	assert_int_equal(lq_push(&q, big, LQ_MIN_BYTES / 2 - 64, NULL), 0);
	assert_int_equal(lq_push(&q, big, LQ_MIN_BYTES / 2 - 64, NULL), 0);
	assert_int_equal(lq_depth(&q, &hw), 2);
	assert_int_equal(hw, 2);
	/* Empty after the peek and release: nothing left behind, even the wrap's bytes. */
	assert_int_equal(lq_peek(&q, &it, 1, 0), 1);
	lq_release(&q);
	assert_int_equal(lq_peek(&q, &it, 1, 0), 1);
	lq_release(&q);
	assert_int_equal(lq_depth(&q, NULL), 0);
	assert_int_equal(q.used, 0);
	/* The line limit: 3 small ones, then closing frees a waiting producer. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(lq_push(&q, "x", 1, NULL), 0);
	lq_close(&q);
	assert_int_equal(lq_push(&q, "x", 1, NULL), -ESHUTDOWN);
	/* What was queued before the close is still handed out. */
	assert_int_equal(lq_peek(&q, &it, 1, 0), 1);
	lq_release(&q);
	lq_destroy(&q);
	free(big);
}

/*
 * A line's shape goes to the handoff as it is queued (claimed under the queue's lock);
 * the entry carries where, the writer puts the slot: a reader then gets the tokens.
 * Tokens the handoff cannot hold leave the entry without a shape, the frame intact.
 */
static void test_shape_claimed_as_queued(void **state)
{
	struct line_queue q;
	struct handoff *h = handoff_new(1 << 20);
	struct shape_tok tok[2] = { { .len = 9, .kind = SHAPE_STRING }, { .len = 1, .kind = SHAPE_NULL } };
	struct shape_tok wide = { .len = 1u << 20, .kind = SHAPE_STRING };
	struct lq_shape sh = { .h = h, .tok = tok, .n = 2 }, bad = { .h = h, .tok = &wide, .n = 1 };
	struct lq_item it[2];
	struct shape got = { 0 };
	uint8_t leaf[MERKLE_HASH_LEN];
	struct handoff_stats st;

	(void)state;
	assert_non_null(h);
	assert_int_equal(lq_init(&q, 16, LQ_MIN_BYTES), 0);
	assert_int_equal(lq_push(&q, "frame-one", 9, &sh), 0);
	assert_int_equal(lq_push(&q, "frame-two", 9, &bad), 0);
	assert_int_equal(lq_peek(&q, it, 2, 0), 2);
	assert_int_equal(it[0].len, 9);
	assert_memory_equal(it[0].data, "frame-one", 9);
	assert_int_equal(it[0].shape_n, 2);
	assert_int_equal(it[1].len, 9);
	assert_memory_equal(it[1].data, "frame-two", 9);
	assert_int_equal(it[1].shape_n, 0);
	merkle_leaf_hash("line-one", 8, leaf);
	handoff_put(h, 7, leaf, 8, it[0].shape_from, it[0].shape_n);
	lq_release(&q);
	assert_true(handoff_get(h, 7, "line-one", 8, &got));
	assert_int_equal(got.n, 2);
	assert_memory_equal(got.tok, tok, sizeof(tok));
	handoff_get_stats(h, &st);
	assert_int_equal(st.put, 1);
	assert_int_equal(st.skipped, 1);
	shape_free(&got);
	lq_destroy(&q);
	handoff_free(h);
}

/* Four producers, one consumer: each producer's entries arrive whole and in order. */
#define PRODUCERS 4
#define PER_PRODUCER 20000

struct producer {
	struct line_queue *q;
	uint32_t id;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	char e[2048];

	for (uint32_t i = 0; i < PER_PRODUCER; i++) {
		uint32_t n = i * PRODUCERS + p->id;
		size_t len = make_entry(n, e);

		if (lq_push(p->q, e, len, NULL) != 0)
			return (void *)1;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct line_queue q;
	struct producer p[PRODUCERS];
	pthread_t t[PRODUCERS];
	struct lq_item items[256];
	uint32_t seen[PRODUCERS] = { 0 };
	size_t got = 0;

	(void)state;
	/* A small ring: producers wait for room all the time. */
	assert_int_equal(lq_init(&q, 500, LQ_MIN_BYTES), 0);
	for (uint32_t i = 0; i < PRODUCERS; i++) {
		p[i] = (struct producer){ &q, i };
		assert_int_equal(pthread_create(&t[i], NULL, produce, &p[i]), 0);
	}
	while (got < (size_t)PRODUCERS * PER_PRODUCER) {
		size_t n = lq_peek(&q, items, 256, FAR_FUTURE);

		for (size_t k = 0; k < n; k++) {
			uint32_t num, id;

			assert_true(items[k].len >= sizeof(num));
			memcpy(&num, items[k].data, sizeof(num));
			id = num % PRODUCERS;
			assert_int_equal(num / PRODUCERS, seen[id]);
			check_entry(&items[k], num);
			seen[id]++;
		}
		got += n;
		lq_release(&q);
	}
	for (uint32_t i = 0; i < PRODUCERS; i++) {
		void *ret;

		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(lq_depth(&q, NULL), 0);
	lq_destroy(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_wrap),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_shape_claimed_as_queued),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
