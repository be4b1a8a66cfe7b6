/* The journal verifier (verify/verify.h) against small journals and each damage kind. */
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

#include "common/hex.h"
#include "journal/envelope.h"
#include "verify/verify.h"
#include "tests/tools/fixture_writer.h"

#define LINES 450      /* events; checkpoints every 100 lines, one segment per 200 */

struct tj {
	char dir[64];
	char seg[LINES * 2][128];   /* segment paths */
	struct note_signer *s;
	struct note_verifier *v;
	char last_note[NOTE_MAX_LEN];
};

static int setup(void **st)
{
	struct tj *t = calloc(1, sizeof(*t));
	uint8_t seed[32] = { 42 };
	char vkey[200];
	struct fx f;
	int i;

	snprintf(t->dir, sizeof(t->dir), "/tmp/test_verify.XXXXXX");
	if (!t || !mkdtemp(t->dir) || note_signer_from_seed(&t->s, seed, "sandgate/h1") < 0 ||
	    note_signer_vkey(t->s, vkey, sizeof(vkey)) < 0 || note_verifier_parse(&t->v, vkey) < 0 ||
	    fx_open(&f, t->dir, t->s, 200, 100) < 0)
		return -1;
	for (i = 0; i < LINES; i++)
		if (fx_event(&f, "process.exit", ",\"pid\":42,\"exit_code\":0") < 0)
			return -1;
	memcpy(t->last_note, f.last_note, sizeof(t->last_note));
	if (fx_close(&f) < 0)
		return -1;
	*st = t;
	return 0;
}

static int teardown(void **st)
{
	struct tj *t = *st;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	if (system(cmd) != 0)
		return -1;
	note_signer_free(t->s);
	note_verifier_free(t->v);
	free(t);
	return 0;
}

static struct verify_result run(struct tj *t, const char *ckpt)
{
	struct verify_opts o = { .journal_dir = t->dir, .key = t->v, .checkpoint_file = ckpt };
	struct verify_result r;

	assert_int_equal(verify_journal(&o, &r), 0);
	return r;
}

/* All lines of the journal, in one buffer, with their segment boundaries kept. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *d = malloc(1 << 20);

	assert_non_null(f);
	assert_non_null(d);
	*len = fread(d, 1, (1 << 20) - 1, f);
	d[*len] = '\0';
	fclose(f);
	return d;
}

static void write_file(const char *path, const char *d, size_t len)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, len, f), len);
	fclose(f);
}

/* The first segment (seqs 0..200) as lines; edits go through it. */
static char *seg0(struct tj *t, char *path, size_t *len)
{
	sprintf(path, "%s/%020d.jsonl", t->dir, 0);
	return read_file(path, len);
}

static char *line_at(char *d, int k)
{
	while (k-- > 0)
		d = strchr(d, '\n') + 1;
	return d;
}

static void expect(struct verify_result r, enum verify_kind kind, uint64_t seq)
{
	if (r.kind != kind || r.bad_seq != seq)
		fail_msg("got %s at %llu (%s), want %s at %llu", verify_kind_str(r.kind),
			 (unsigned long long)r.bad_seq, r.message, verify_kind_str(kind),
			 (unsigned long long)seq);
	assert_false(r.ok);
}

static void test_clean(void **st)
{
	struct verify_result r = run(*st, NULL);

	assert_true(r.ok);
	assert_int_equal(r.kind, VERIFY_OK);
	assert_int_equal(r.lines, r.last_seq + 1);
	assert_true(r.lines > LINES);
	assert_true(r.checkpoints >= 8);   /* in lines and in the checkpoints file */
}

/* Applies edit to a copy of segment 0, runs, restores. */
static struct verify_result with_seg0(struct tj *t, void (*edit)(char *, size_t *))
{
	char path[128];
	size_t len;
	char *orig = seg0(t, path, &len), *d = malloc(len + 1024);
	struct verify_result r;

	memcpy(d, orig, len + 1);
	edit(d, &len);
	write_file(path, d, len);
	r = run(t, NULL);
	write_file(path, orig, strlen(orig));
	free(d);
	free(orig);
	return r;
}

static void ed_flip(char *d, size_t *len)
{
	(void)len;
	line_at(d, 150)[140] ^= 1;
}

static void ed_delete(char *d, size_t *len)
{
	char *a = line_at(d, 150), *b = line_at(d, 151);

	memmove(a, b, *len - (size_t)(b - d));
	*len -= (size_t)(b - a);
}

static void ed_swap(char *d, size_t *len)
{
	char *a = line_at(d, 150), *b = line_at(d, 151), *c = line_at(d, 152);
	char tmp[1024];

	(void)len;
	memcpy(tmp, a, (size_t)(b - a));
	memmove(a, b, (size_t)(c - b));
	memcpy(a + (c - b), tmp, (size_t)(b - a));
}

static void ed_seq(char *d, size_t *len)
{
	(void)len;
	memcpy(line_at(d, 150) + 43, "9", 1);   /* "seq":150 -> 950, chain intact */
}

static void ed_rewrite(char *d, size_t *len)
{
	uint8_t leaf[MERKLE_HASH_LEN];
	char *l = line_at(d, 150), hex[65];
	int k;

	(void)len;
	*strstr(l, "\"pid\":42") = '\'';   /* still chained below, not valid JSON: fine */
	for (k = 151; k <= 200; k++) {
		char *prev = line_at(d, k - 1), *cur = line_at(d, k);

		merkle_leaf_hash(prev, (size_t)(cur - prev - 1), leaf);
		hex_encode(leaf, sizeof(leaf), hex);
		memcpy(strstr(cur, "\"prev\":\"") + 8, hex, 64);
	}
}

static void test_modified(void **st)
{
	expect(with_seg0(*st, ed_flip), VERIFY_MODIFIED, 150);
	expect(with_seg0(*st, ed_seq), VERIFY_MODIFIED, 150);
}

static void test_deleted(void **st)
{
	expect(with_seg0(*st, ed_delete), VERIFY_DELETED, 150);
}

static void test_reordered(void **st)
{
	expect(with_seg0(*st, ed_swap), VERIFY_REORDERED, 150);
}

static void test_rewritten(void **st)
{
	/* Checkpoint lines sit at seq 100 and 201: the one of size 100 still matches. */
	expect(with_seg0(*st, ed_rewrite), VERIFY_REWRITTEN, 100);
}

static void move_later(struct tj *t, const char *from, const char *to)
{
	char a[160], b[160];
	int seq;

	for (seq = 201; seq < 2 * LINES; seq += 201) {
		snprintf(a, sizeof(a), "%s/%020d%s", t->dir, seq, from);
		snprintf(b, sizeof(b), "%s/%020d%s", t->dir, seq, to);
		if (access(a, F_OK) == 0)
			assert_int_equal(rename(a, b), 0);
	}
}

static void test_truncated(void **st)
{
	struct tj *t = *st;
	char path[128], cps[128], proof[128], *d, *c;
	size_t len, clen;

	snprintf(proof, sizeof(proof), "%s/../%s.proof", t->dir, strrchr(t->dir, '/') + 1);
	write_file(proof, t->last_note, strlen(t->last_note));
	snprintf(cps, sizeof(cps), "%s/checkpoints", t->dir);
	c = read_file(cps, &clen);
	write_file(cps, "", 0);
	d = seg0(t, path, &len);
	write_file(path, d, (size_t)(line_at(d, 120) - d));
	/* Segment 1 still starts at 201: the cut shows as a gap. */
	expect(run(t, NULL), VERIFY_DELETED, 120);
	write_file(path, d, (size_t)(line_at(d, 120) - d + 30));
	expect(run(t, NULL), VERIFY_MODIFIED, 120);   /* torn, not in the last segment */
	/* Later segments gone too: only the proof shows the cut. */
	move_later(t, ".jsonl", ".gone");
	expect(run(t, proof), VERIFY_TRUNCATED, 120);   /* torn line 120 */
	write_file(path, d, (size_t)(line_at(d, 120) - d));
	assert_true(run(t, NULL).ok);
	expect(run(t, proof), VERIFY_TRUNCATED, 120);
	move_later(t, ".gone", ".jsonl");
	write_file(path, d, len);
	write_file(cps, c, clen);
	assert_true(run(t, proof).ok);
	unlink(proof);
	free(d);
	free(c);
}

static void test_signatures(void **st)
{
	struct tj *t = *st;
	struct note_verifier *saved = t->v, *other = NULL;
	struct note_signer *os = NULL;
	uint8_t seed[32] = { 43 };
	char vkey[200], cps[128], *c, *p, orig;
	size_t clen;

	assert_int_equal(note_signer_from_seed(&os, seed, "sandgate/h1"), 0);
	assert_int_equal(note_signer_vkey(os, vkey, sizeof(vkey)), 0);
	assert_int_equal(note_verifier_parse(&other, vkey), 0);
	t->v = other;
	expect(run(t, NULL), VERIFY_UNKNOWN_KEY, 100);
	t->v = saved;
	snprintf(cps, sizeof(cps), "%s/checkpoints", t->dir);
	c = read_file(cps, &clen);
	p = strstr(c, "sandgate/h1 ") + 30;   /* inside the first note's signature */
	orig = *p;
	*p = *p == 'A' ? 'B' : 'A';
	write_file(cps, c, clen);
	expect(run(t, NULL), VERIFY_BAD_SIGNATURE, 100);
	*p = orig;
	write_file(cps, c, clen);
	assert_true(run(t, NULL).ok);
	free(c);
	note_signer_free(os);
	note_verifier_free(other);
}

static void test_envelope(void **st)
{
	struct line_envelope e;
	char line[400];
	const char *ok = "{\"ts\":\"2026-06-29T10:04:00.123456Z\",\"seq\":17,\"prev\":\""
			 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\","
			 "\"event\":\"net.dns\",\"host\":\"h\"}";

	(void)st;
	assert_int_equal(line_envelope_parse_strict(ok, strlen(ok), &e), 0);
	assert_int_equal(e.seq, 17);
	assert_int_equal(e.event_len, 7);
	assert_memory_equal(e.event, "net.dns", 7);
	assert_int_equal(e.prev_hash[31], 0xff);
	assert_int_equal(line_envelope_parse_strict(ok, strlen(ok) - 1, &e), -EINVAL);
	snprintf(line, sizeof(line), "%s", ok);
	line[44] = '0';   /* "seq":07 */
	memmove(line + 43, "07", 2);
	assert_int_equal(line_envelope_parse_strict(line, strlen(line), &e), -EINVAL);
	snprintf(line, sizeof(line), "%s", ok);
	line[60] = 'A';   /* uppercase hex */
	assert_int_equal(line_envelope_parse_strict(line, strlen(line), &e), -EINVAL);
	snprintf(line, sizeof(line), "%s", ok);
	line[11] = 'x';
	assert_int_equal(line_envelope_parse_strict(line, strlen(line), &e), -EINVAL);
	assert_int_equal(line_envelope_parse_strict("{}", 2, &e), -EINVAL);
}

/* Segment 0 purged by retention: its tombstone's Merkle state bridges the gap. */
static void test_purged(void **st)
{
	struct tj *t = *st;
	struct verify_purged p = { 0 };
	struct verify_opts o = { .journal_dir = t->dir, .key = t->v, .purged = &p, .n_purged = 1 };
	struct verify_result r;
	char path[128], saved[160];
	size_t len;
	char *d = seg0(t, path, &len), *l = d, *nl;

	merkle_range_init(&p.tree);
	for (; (nl = strchr(l, '\n')); l = nl + 1) {
		merkle_leaf_hash(l, (size_t)(nl - l), p.next_prev);
		assert_int_equal(merkle_range_append(&p.tree, p.next_prev), 0);
	}
	p.last_seq = p.tree.size - 1;
	snprintf(saved, sizeof(saved), "%s.purged", path);
	assert_int_equal(rename(path, saved), 0);
	assert_int_equal(verify_journal(&o, &r), 0);
	assert_true(r.ok);
	assert_int_equal(r.first_seq, p.tree.size);
	assert_int_equal(r.n_gaps, 1);
	assert_int_equal(r.gaps[0].first, 0);
	assert_int_equal(r.gaps[0].last, p.last_seq);
	assert_int_equal(r.purged_lines, p.tree.size);
	assert_true(r.checkpoints >= 2);
	p.tree.range[0][0] ^= 1;   /* a forged tombstone: the next checkpoint says so */
	assert_int_equal(verify_journal(&o, &r), 0);
	assert_int_equal(r.kind, VERIFY_REWRITTEN);
	p.tree.range[0][0] ^= 1;
	p.next_prev[0] ^= 1;       /* the first line left does not link to it: not bridged */
	assert_int_equal(verify_journal(&o, &r), 0);
	expect(r, VERIFY_DELETED, 0);
	o.n_purged = 0;            /* no tombstone: the range was deleted */
	assert_int_equal(verify_journal(&o, &r), 0);
	expect(r, VERIFY_DELETED, 0);
	assert_int_equal(rename(saved, path), 0);
	free(d);
}

static void test_empty_dir(void **st)
{
	char dir[] = "/tmp/test_verify_empty.XXXXXX";
	struct verify_opts o = { .journal_dir = dir, .key = ((struct tj *)*st)->v };
	struct verify_result r;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(verify_journal(&o, &r), 0);
	expect(r, VERIFY_TRUNCATED, 0);
	rmdir(dir);
	assert_int_equal(verify_journal(&o, &r), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_modified),
		cmocka_unit_test(test_deleted),
		cmocka_unit_test(test_reordered),
		cmocka_unit_test(test_rewritten),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_signatures),
		cmocka_unit_test(test_empty_dir),
		cmocka_unit_test(test_purged),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
