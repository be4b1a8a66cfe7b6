/*
 * Lines' shapes (journal/shape.h) and the handoff (journal/handoff.h): what a reader
 * takes from a shape is what it would take by parsing the line (the fuzz target's body,
 * over seeded random events), a shape that does not fit its line is refused, and the
 * handoff gives a shape only for the bytes it was put with, while it still holds them.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/fuzz/fuzz_shape.c"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* 20,000 random events, each compared both ways (the fuzz body aborts on a difference). */
static void test_random_events_agree(void **state)
{
	uint8_t in[700];

	(void)state;
	for (int i = 0; i < 20000; i++) {
		size_t n = next_rand() % sizeof(in);

		for (size_t k = 0; k < n; k++)
			in[k] = (uint8_t)next_rand();
		assert_int_equal(LLVMFuzzerTestOneInput(in, n), 0);
	}
}

/* One line by hand: hostile bytes, the envelope's keys again in the body, nesting. */
static struct event *hostile_event(void)
{
	struct event *e = event_new("file.write", "s-1", EVENT_SRC_KERNEL);

	assert_non_null(e);
	event_strn(e, "path", "/tmp/a\0b\"c\\d\n\x7f\xff\xfe\xe2\x82", 17);
	event_str(e, "event", "not.the.type");
	event_str(e, "source", NULL);
	event_int(e, "pid", INT64_MIN);
	event_uint(e, "uid", INT64_MAX);
	event_double(e, "ratio", 5.0);
	event_double(e, "share", 0.1);
	event_array_begin(e, "argv");
	event_str(e, NULL, "sh");
	event_object_begin(e, NULL);
	event_bool(e, "k", true);
	event_array_begin(e, "empty");
	event_array_end(e);
	event_object_end(e);
	event_array_end(e);
	event_str(e, "path", "last wins");
	return e;
}

struct framed {
	struct buf line;
	struct shape s;
};

static void frame_event(struct event *e, struct framed *f)
{
	struct journal j = { .host = "host" };
	struct buf b;
	uint8_t prev[MERKLE_HASH_LEN] = { 0 };
	size_t shape_len, frame_len;

	buf_init(&b);
	buf_init(&f->line);
	shape_len = line_frame(&b, &j, e, true);
	event_free(e);
	assert_true(shape_len > 0);
	frame_len = b.len - shape_len;
	line_encode_framed(&f->line, b.data, frame_len, 42, prev);
	f->line.len--;
	f->s.n = f->s.cap = shape_len / sizeof(struct shape_tok);
	f->s.tok = malloc(shape_len);
	assert_non_null(f->s.tok);
	memcpy(f->s.tok, b.data + frame_len, shape_len);
	buf_free(&b);
}

static void test_hostile_line(void **state)
{
	struct framed f;
	json_t *parsed, *built;

	(void)state;
	frame_event(hostile_event(), &f);
	assert_int_equal(line_json_load(f.line.data, f.line.len, &parsed), 0);
	assert_int_equal(shape_to_json(f.line.data, f.line.len, &f.s, &built), 0);
	assert_true(json_equal(parsed, built));
	assert_string_equal(json_string_value(json_object_get(built, "path")), "last wins");
	assert_string_equal(json_string_value(json_object_get(built, "event")), "not.the.type");
	assert_true(json_is_integer(json_object_get(built, "ratio")));   /* "5", as jansson */
	assert_true(json_is_real(json_object_get(built, "share")));
	assert_int_equal(json_array_size(json_object_get(built, "argv")), 2);
	json_decref(parsed);
	json_decref(built);
	free(f.s.tok);
	buf_free(&f.line);
}

/* A shape that does not describe its line is refused, never read past the line. */
static void test_shape_that_does_not_fit(void **state)
{
	struct framed f;
	struct scan_val vals[N_SHAPE_KEYS];
	json_t *built;

	(void)state;
	frame_event(hostile_event(), &f);
	f.s.tok[f.s.n - 1].len += 1000;         /* past the line's end */
	assert_int_equal(shape_to_json(f.line.data, f.line.len, &f.s, &built), -EINVAL);
	assert_int_equal(index_scan_shaped(f.line.data, f.line.len, &f.s, shape_keys,
					   N_SHAPE_KEYS, vals), -EINVAL);
	f.s.tok[f.s.n - 1].len -= 1000;
	f.s.tok[4].len += 1;                    /* one byte too long: the rest is off by one */
	assert_int_equal(shape_to_json(f.line.data, f.line.len, &f.s, &built), -EINVAL);
	assert_int_equal(index_scan_shaped(f.line.data, f.line.len, &f.s, shape_keys,
					   N_SHAPE_KEYS, vals), -EINVAL);
	f.s.tok[4].len -= 1;
	f.s.tok[4].key_len += 1;                /* a key one byte longer */
	assert_int_equal(shape_to_json(f.line.data, f.line.len, &f.s, &built), -EINVAL);
	f.s.tok[4].key_len -= 1;
	f.s.n--;                                /* a token missing: argv's last element */
	assert_int_equal(shape_to_json(f.line.data, f.line.len, &f.s, &built), -EINVAL);
	assert_int_equal(shape_to_json("{\"ts\":1}", 8, &f.s, &built), -EINVAL);
	free(f.s.tok);
	buf_free(&f.line);
}

/* Events no shape can describe go without one (their readers parse, as before). */
static void test_no_shape(void **state)
{
	struct journal j = { .host = "host" };
	struct event *raw = event_new("session.create", NULL, EVENT_SRC_SANDGATE);
	struct event *big = event_new("x", NULL, EVENT_SRC_SANDGATE);
	struct buf b;

	(void)state;
	assert_non_null(raw);
	assert_non_null(big);
	event_raw(raw, "resources", "{\"cpu\":1}");
	event_uint(big, "n", UINT64_MAX);
	buf_init(&b);
	assert_int_equal(line_frame(&b, &j, raw, true), 0);
	buf_reset(&b);
	assert_int_equal(line_frame(&b, &j, big, true), 0);
	buf_reset(&b);
	assert_int_equal(line_frame(&b, &j, big, false), 0);
	event_free(raw);
	event_free(big);
	buf_free(&b);
}

/* Held while the arena has not been written over; other bytes or seqs get nothing. */
static void test_handoff_holds_recent_lines(void **state)
{
	struct handoff *h = handoff_new(1 << 16);
	struct shape got = { 0 };
	struct shape_tok t[3] = { { .len = 2, .kind = SHAPE_STRING } };
	struct shape_tok *big = calloc(2000, sizeof(*big));
	uint8_t leaf[MERKLE_HASH_LEN];
	char line[200];
	struct handoff_stats st;

	(void)state;
	assert_non_null(h);
	assert_non_null(big);
	assert_null(handoff_new(1000));
	memset(line, 'a', sizeof(line));
	for (uint64_t seq = 0; seq < 2000; seq++) {
		memcpy(line, &seq, sizeof(seq));
		merkle_leaf_hash(line, sizeof(line), leaf);
		handoff_line(h, seq, leaf, sizeof(line), t, 3);
	}
	memcpy(line, &(uint64_t){ 1999 }, sizeof(uint64_t));
	assert_true(handoff_get(h, 1999, line, sizeof(line), &got));
	assert_int_equal(got.n, 3);
	assert_int_equal(got.tok[0].len, 2);
	assert_false(handoff_get(h, 1999, line, sizeof(line) - 1, &got));   /* other length */
	line[100] ^= 1;                                                    /* other bytes */
	assert_false(handoff_get(h, 1999, line, sizeof(line), &got));
	line[100] ^= 1;
	assert_false(handoff_get(h, 1998, line, sizeof(line), &got));      /* other seq's */
	memcpy(line, &(uint64_t){ 10 }, sizeof(uint64_t));
	assert_false(handoff_get(h, 10, line, sizeof(line), &got));        /* written over */
	assert_false(handoff_get(h, 5000, line, sizeof(line), &got));      /* never put */
	handoff_line(h, 2000, leaf, sizeof(line), big, 2000);              /* > 1/8 of the arena */
	assert_false(handoff_get(h, 2000, line, sizeof(line), &got));
	/* Tokens beyond what a held token packs (journal/handoff.c): not held, never cut. */
	{
		static const struct shape_tok wide[][1] = {
			{ { .len = 1u << 18, .kind = SHAPE_STRING } },
			{ { .len = 2, .key_len = 64, .kind = SHAPE_STRING } },
			{ { .len = 2, .depth = 16, .kind = SHAPE_STRING } },
		};
		struct shape_tok edge[2] = {
			{ .len = (1u << 18) - 1, .key_len = 63, .depth = 15,
			  .kind = SHAPE_STRING | SHAPE_ESC },
			{ .len = 1, .kind = SHAPE_ARRAY },
		};

		for (uint64_t k = 0; k < 3; k++) {
			memcpy(line, &(uint64_t){ 3000 + k }, sizeof(uint64_t));
			merkle_leaf_hash(line, sizeof(line), leaf);
			handoff_line(h, 3000 + k, leaf, sizeof(line), wide[k], 1);
			assert_false(handoff_get(h, 3000 + k, line, sizeof(line), &got));
		}
		memcpy(line, &(uint64_t){ 3003 }, sizeof(uint64_t));
		merkle_leaf_hash(line, sizeof(line), leaf);
		handoff_line(h, 3003, leaf, sizeof(line), edge, 2);
		assert_true(handoff_get(h, 3003, line, sizeof(line), &got));
		assert_int_equal(got.n, 2);
		assert_memory_equal(got.tok, edge, sizeof(edge));
	}
	handoff_get_stats(h, &st);
	assert_int_equal(st.put, 2001);
	assert_int_equal(st.skipped, 4);
	assert_int_equal(st.mismatched, 2);
	shape_free(&got);
	free(big);
	handoff_free(h);
}

/* Readers racing the writer get a line's own tokens or nothing, never another's. */
#define RACE_PUTS 300000

struct race {
	struct handoff *h;
	uint64_t next;          /* the writer's next seq */
	uint64_t hits, torn;
};

/* A token length of its own for each seq a reader may see at once (it looks 3,000 back),
 * within what the handoff holds (18 bits). */
static uint32_t race_len(uint64_t seq, size_t i)
{
	return (uint32_t)((seq * 7 + i) % 200003);
}

static void race_line(uint64_t seq, char line[64])
{
	memset(line, 'x', 64);
	memcpy(line, &seq, sizeof(seq));
}

static void *race_reader(void *arg)
{
	struct race *r = arg;
	struct shape got = { 0 };
	char line[64];

	for (;;) {
		uint64_t next = __atomic_load_n(&r->next, __ATOMIC_ACQUIRE);

		if (next >= RACE_PUTS)
			break;
		for (uint64_t seq = next > 3000 ? next - 3000 : 0; seq < next; seq += 97) {
			race_line(seq, line);
			if (!handoff_get(r->h, seq, line, sizeof(line), &got))
				continue;
			__atomic_add_fetch(&r->hits, 1, __ATOMIC_RELAXED);
			for (size_t i = 0; i < got.n; i++)
				if (got.n != 1 + seq % 7 || got.tok[i].len != race_len(seq, i))
					__atomic_add_fetch(&r->torn, 1, __ATOMIC_RELAXED);
		}
	}
	shape_free(&got);
	return NULL;
}

static void test_handoff_readers_race_the_writer(void **state)
{
	struct race r = { .h = handoff_new(1 << 16) };
	struct shape_tok t[8];
	uint8_t leaf[MERKLE_HASH_LEN];
	char line[64];
	pthread_t th[2];

	(void)state;
	assert_non_null(r.h);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, race_reader, &r), 0);
	for (uint64_t seq = 0; seq < RACE_PUTS; seq++) {
		size_t n = 1 + seq % 7;

		for (size_t i = 0; i < n; i++)
			t[i] = (struct shape_tok){ .len = race_len(seq, i) };
		race_line(seq, line);
		merkle_leaf_hash(line, sizeof(line), leaf);
		handoff_line(r.h, seq, leaf, sizeof(line), t, n);
		__atomic_store_n(&r.next, seq + 1, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_true(r.hits > 0);
	assert_int_equal(r.torn, 0);
	handoff_free(r.h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_events_agree),
		cmocka_unit_test(test_hostile_line),
		cmocka_unit_test(test_shape_that_does_not_fit),
		cmocka_unit_test(test_no_shape),
		cmocka_unit_test(test_handoff_holds_recent_lines),
		cmocka_unit_test(test_handoff_readers_race_the_writer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
