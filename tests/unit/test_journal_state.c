/* The writer's persisted state and envelope check, without threads or daemons. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal/journal_impl.h"

static void fill_pos(struct chain_pos *pos, uint64_t n)
{
	uint64_t i;

	memset(pos, 0, sizeof(*pos));
	merkle_range_init(&pos->range);
	for (i = 0; i < n; i++) {
		char line[32];
		int len = snprintf(line, sizeof(line), "line %llu", (unsigned long long)i);

		assert_int_equal(chain_append(pos, line, (size_t)len), 0);
	}
}

static void test_state_round_trip(void **state)
{
	char dir[] = "/tmp/sgstateXXXXXX";
	struct journal_state a, b;
	uint8_t ra[MERKLE_HASH_LEN], rb[MERKLE_HASH_LEN];
	char path[64];

	(void)state;
	assert_non_null(mkdtemp(dir));
	memset(&a, 0, sizeof(a));
	fill_pos(&a.pos, 1234);
	segment_name(1000, a.segment);
	a.offset = 98765;
	assert_int_equal(state_save(dir, &a), 0);
	assert_int_equal(state_load(dir, &b), 0);
	assert_int_equal(b.pos.size, 1234);
	assert_int_equal(b.offset, 98765);
	assert_string_equal(b.segment, "00000000000000001000.jsonl");
	assert_memory_equal(b.pos.leaf, a.pos.leaf, MERKLE_HASH_LEN);
	merkle_range_root(&a.pos.range, ra);
	merkle_range_root(&b.pos.range, rb);
	assert_memory_equal(ra, rb, MERKLE_HASH_LEN);
	snprintf(path, sizeof(path), "%s/state", dir);
	unlink(path);
	rmdir(dir);
}

static void test_state_rejects_garbage(void **state)
{
	char dir[] = "/tmp/sgstateXXXXXX", path[64];
	struct journal_state st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(state_load(dir, &st), -ENOENT);
	snprintf(path, sizeof(path), "%s/state", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("version 1\nsize 3\nsegment x\n", f);
	fclose(f);
	assert_int_equal(state_load(dir, &st), -EINVAL);
	unlink(path);
	rmdir(dir);
}

static void test_line_chains(void **state)
{
	struct journal j;
	struct chain_pos pos;
	struct event *e;
	struct buf b;

	(void)state;
	memset(&j, 0, sizeof(j));
	j.host = "h";
	fill_pos(&pos, 7);
	e = event_new("x.y", NULL, EVENT_SRC_SANDGATE);
	event_int(e, "n", 1);
	buf_init(&b);
	line_encode(&b, &j, e, pos.size, pos.leaf);
	assert_true(line_chains(&pos, b.data, b.len - 1));
	b.data[60] ^= 1;                       /* inside prev: no longer the leaf hash */
	assert_false(line_chains(&pos, b.data, b.len - 1));
	b.data[60] ^= 1;
	pos.size++;                            /* expecting the next seq */
	assert_false(line_chains(&pos, b.data, b.len - 1));
	pos.size--;
	assert_false(line_chains(&pos, b.data, 40));   /* cut short */
	buf_free(&b);
	event_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_round_trip),
		cmocka_unit_test(test_state_rejects_garbage),
		cmocka_unit_test(test_line_chains),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
