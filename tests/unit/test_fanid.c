/* The identity table of the file sensor (sensors/file/fanid.c): put, get, delete with the
 * backward shift keeping every other key reachable, the bound, long handles. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sensors/file/fan_int.h"

static void key(uint32_t i, uint8_t h[16])
{
	memset(h, 0, 16);
	memcpy(h, &i, sizeof(i));
	h[8] = (uint8_t)(i * 7);
}

static void test_put_get_del(void **state)
{
	struct fanid t = { 0 };
	struct fanid_ent *e;
	uint8_t h[16];

	(void)state;
	assert_int_equal(fanid_init(&t, 1000), 0);
	for (uint32_t i = 0; i < 1000; i++) {
		key(i, h);
		assert_int_equal(fanid_put(&t, i % 3, h, sizeof(h), &e), 0);
		e->flags = i;
	}
	key(5000, h);
	assert_int_equal(fanid_put(&t, 0, h, sizeof(h), &e), -ENOSPC);
	/* Every other one removed: the rest still found, with their values. */
	for (uint32_t i = 0; i < 1000; i += 2) {
		key(i, h);
		e = fanid_get(&t, i % 3, h, sizeof(h));
		assert_non_null(e);
		fanid_del(&t, e);
	}
	assert_int_equal(t.n, 500);
	for (uint32_t i = 0; i < 1000; i++) {
		key(i, h);
		e = fanid_get(&t, i % 3, h, sizeof(h));
		if (i % 2 == 0) {
			assert_null(e);
		} else {
			assert_non_null(e);
			assert_int_equal(e->flags, i);
		}
	}
	/* The same handle on another filesystem is another file. */
	key(1, h);
	assert_null(fanid_get(&t, 2, h, sizeof(h)));
	fanid_fini(&t);
	fanid_fini(&t);   /* a finished table again: no harm */
}

static void test_bounds(void **state)
{
	struct fanid t = { 0 };
	struct fanid_ent *e;
	uint8_t big[FANID_HANDLE_MAX + 1] = { 1 };

	(void)state;
	assert_null(fanid_get(&t, 0, big, 8));   /* never initialised */
	assert_int_equal(fanid_init(&t, 4), 0);
	assert_int_equal(fanid_put(&t, 0, big, sizeof(big), &e), -E2BIG);
	assert_int_equal(fanid_put(&t, 0, big, 0, &e), -E2BIG);
	assert_int_equal(fanid_put(&t, 0, big, 8, &e), 0);
	e->path = strdup("/etc/shadow");
	assert_int_equal(fanid_put(&t, 0, big, 8, &e), 0);   /* found, not added */
	assert_string_equal(e->path, "/etc/shadow");
	assert_int_equal(t.n, 1);
	fanid_clear(&t);
	assert_int_equal(t.n, 0);
	assert_null(fanid_get(&t, 0, big, 8));
	fanid_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_del),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
