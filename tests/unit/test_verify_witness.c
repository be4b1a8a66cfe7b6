/*
 * Verifying against a witness (verify/verify.h witness_file, `sandgate verify
 * --witness`): the witness holds the checkpoints of a journal that was later cut back and
 * went on with other lines (a fork), so the journal is consistent by itself but not with
 * what was witnessed. The verdict names the witnessed seqs that are missing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "verify/verify.h"
#include "tests/tools/fixture_writer.h"

#define LINES 450      /* events; a checkpoint every 100 lines, one segment per 200 */
#define FORK_AT 150    /* events both histories share */

struct wj {
	char root[64], a[96], b[96], c[96], wit[128];
	struct note_signer *s;
	struct note_verifier *v;
};

/* A journal of n events, the first `same` of them those of the witnessed history. */
static int write_journal(const char *dir, const struct note_signer *s, int n, int same)
{
	struct fx f;

	if (mkdir(dir, 0700) < 0 || fx_open(&f, dir, s, 200, 100) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (fx_event(&f, "process.exit", i < same ? ",\"pid\":42" : ",\"pid\":666") < 0)
			return -1;
	return fx_close(&f);
}

static int setup(void **st)
{
	struct wj *t = calloc(1, sizeof(*t));
	uint8_t seed[32] = { 7 };
	char vkey[200];

	if (!t)
		return -1;
	snprintf(t->root, sizeof(t->root), "/tmp/test_witness.XXXXXX");
	if (!mkdtemp(t->root) || note_signer_from_seed(&t->s, seed, "sandgate/h1") < 0 ||
	    note_signer_vkey(t->s, vkey, sizeof(vkey)) < 0 || note_verifier_parse(&t->v, vkey) < 0)
		return -1;
	snprintf(t->a, sizeof(t->a), "%s/a", t->root);   /* what the witness saw */
	snprintf(t->b, sizeof(t->b), "%s/b", t->root);   /* cut back at FORK_AT, went on */
	snprintf(t->c, sizeof(t->c), "%s/c", t->root);   /* cut back, nothing after */
	snprintf(t->wit, sizeof(t->wit), "%s/a/checkpoints", t->root);
	if (write_journal(t->a, t->s, LINES, LINES) < 0 ||
	    write_journal(t->b, t->s, LINES, FORK_AT) < 0 ||
	    write_journal(t->c, t->s, FORK_AT, FORK_AT) < 0)
		return -1;
	*st = t;
	return 0;
}

static int teardown(void **st)
{
	struct wj *t = *st;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
	if (system(cmd) != 0)
		return -1;
	note_signer_free(t->s);
	note_verifier_free(t->v);
	free(t);
	return 0;
}

static struct verify_result run(struct wj *t, const char *dir, const char *witness)
{
	struct verify_opts o = { .journal_dir = dir, .key = t->v, .witness_file = witness };
	struct verify_result r;

	assert_int_equal(verify_journal(&o, &r), 0);
	return r;
}

static void test_same_history_passes(void **st)
{
	struct wj *t = *st;
	struct verify_result r = run(t, t->a, t->wit);

	assert_true(r.ok);
	assert_true(r.witnessed >= 4);
	assert_int_equal(r.witnessed_max, r.last_seq);   /* the last line is a checkpoint */
}

static void test_forked_history_alone_passes(void **st)
{
	struct wj *t = *st;

	assert_true(run(t, t->b, NULL).ok);
	assert_true(run(t, t->c, NULL).ok);
}

static void test_forked_history_rolled_back(void **st)
{
	struct wj *t = *st;
	struct verify_result r = run(t, t->b, t->wit);

	assert_false(r.ok);
	assert_int_equal(r.kind, VERIFY_ROLLED_BACK);
	/* The witness agrees up to its last checkpoint before the fork (about 100 lines in);
	 * the next one signs other lines. */
	if (r.missing_first < 100 || r.missing_first > FORK_AT || r.bad_seq != r.missing_first)
		fail_msg("missing from %llu (bad seq %llu): %s",
			 (unsigned long long)r.missing_first, (unsigned long long)r.bad_seq,
			 r.message);
	assert_int_equal(r.missing_last, r.witnessed_max - 1);
	assert_true(r.witnessed_max > LINES);
	assert_non_null(strstr(r.message, "are missing"));
}

static void test_cut_history_truncated(void **st)
{
	struct wj *t = *st;
	struct verify_result r = run(t, t->c, t->wit);

	assert_false(r.ok);
	assert_int_equal(r.kind, VERIFY_TRUNCATED);
	assert_int_equal(r.missing_first, r.last_seq + 1);
	assert_int_equal(r.missing_last, r.witnessed_max - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_history_passes),
		cmocka_unit_test(test_forked_history_alone_passes),
		cmocka_unit_test(test_forked_history_rolled_back),
		cmocka_unit_test(test_cut_history_truncated),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
