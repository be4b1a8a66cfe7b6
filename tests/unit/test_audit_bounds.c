/* The audit sensors' bounds are reported, never silent: a sensitive file the identity
 * table cannot keep (sensors/file/fansens.c) and a session mount namespace the mount
 * watcher has no room for (sensors/file/mountwatch.c, 64) each count in sensor.loss with
 * their reason. */
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

#include "sensors/file/fan_int.h"
#include "journal/event.h"

/* The sensor.loss bodies emitted, one per line. */
static char seen[8192];

static int sink(void *ctx, struct event *e)
{
	(void)ctx;
	if (strcmp(e->type, "sensor.loss") == 0 && e->body.data)
		snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%.*s\n",
			 (int)e->body.len, e->body.data);
	event_free(e);
	return 0;
}

static void fid_of(struct fan_dfid *fid, uint8_t h[16], uint32_t i)
{
	memset(h, 0, 16);
	memcpy(h, &i, sizeof(i));
	*fid = (struct fan_dfid){ .set = true, .fsid = 7, .handle = h, .handle_len = 16 };
}

static void test_sensitive_table_full(void **state)
{
	struct fanmon *f = calloc(1, sizeof(*f));
	struct fan_dfid fid;
	uint8_t h[16];

	(void)state;
	assert_non_null(f);
	assert_int_equal(fanid_init(&f->sens, 3), 0);
	for (uint32_t i = 0; i < 5; i++) {
		fid_of(&fid, h, i);
		fansens_add(f, &fid, "/etc/x", false);
	}
	/* Re-adding one that is kept is no loss. */
	fid_of(&fid, h, 1);
	fansens_add(f, &fid, "/etc/y", false);
	assert_int_equal(f->sens.n, 3);
	assert_int_equal(f->sens_skipped, 2);
	assert_int_equal(f->loss[FL_SENS_FULL], 2);
	seen[0] = '\0';
	fanemit_losses(f);
	assert_non_null(strstr(seen, "\"sensor\":\"fanotify\",\"lost\":2,"));
	assert_non_null(strstr(seen, "not kept by identity"));
	assert_int_equal(f->loss[FL_SENS_FULL], 0);   /* reported: counted afresh */
	fanid_fini(&f->sens);
	free(f);
}

static void test_mount_namespaces_over(void **state)
{
	struct mntwatch *w;
	pid_t me = getpid();

	(void)state;
	assert_int_equal(mntwatch_new(&w), 0);
	/* 70 namespaces noted before a poll: 64 are held, 6 turned away (counted). */
	for (uint64_t ns = 1; ns <= 70; ns++)
		mntwatch_note(w, 1000000 + ns, me, "s1");
	assert_int_equal(mntwatch_take_turned_away(w), 6);
	assert_int_equal(mntwatch_take_turned_away(w), 0);
	/* The 64 move into the watched set (this process lives: they stay). Noted again,
	 * they are no loss; 3 new ones find no room at the next poll, which reports them. */
	seen[0] = '\0';
	mntwatch_poll(w);
	for (uint64_t ns = 1; ns <= 64; ns++)
		mntwatch_note(w, 1000000 + ns, me, "s1");
	assert_int_equal(mntwatch_take_turned_away(w), 0);
	for (uint64_t ns = 100; ns < 103; ns++)
		mntwatch_note(w, 1000000 + ns, me, "s1");
	mntwatch_poll(w);
	assert_non_null(strstr(seen, "\"sensor\":\"mountwatch\",\"lost\":3,"));
	assert_non_null(strstr(seen, "more than 64 session mount namespaces"));
	assert_int_equal(mntwatch_take_turned_away(w), 0);   /* reported: counted afresh */
	mntwatch_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sensitive_table_full),
		cmocka_unit_test(test_mount_namespaces_over),
	};

	event_set_sink(sink, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
