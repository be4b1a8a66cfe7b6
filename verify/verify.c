/*
 * The journal verifier (verify/verify.h).
 *
 * One pass over the segments with one large buffer: an ordinary line costs a prefix
 * parse, one SHA-256 and a compact-range append; only `journal.checkpoint` lines go
 * through jansson. Checkpoints from outside the journal (the `checkpoints` file and
 * --checkpoint) are opened first and compared when the tree reaches their size.
 */
#include "verify/verify.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "journal/envelope.h"
#include "verify/verify_impl.h"


void vs_fail(struct vstate *vs, enum verify_kind kind, uint64_t seq, const char *fmt, ...)
{
	va_list ap;

	/* The earliest damage is the one to report; on a tie the first found stays. */
	if (vs->failed && vs->res->bad_seq <= seq)
		return;
	vs->failed = true;
	vs->res->ok = false;
	vs->res->kind = kind;
	vs->res->bad_seq = seq;
	va_start(ap, fmt);
	vsnprintf(vs->res->message, sizeof(vs->res->message), fmt, ap);
	va_end(ap);
}

const char *verify_kind_str(enum verify_kind k)
{
	static const char *const names[] = {
		[VERIFY_OK] = "ok",
		[VERIFY_MODIFIED] = "modified",
		[VERIFY_DELETED] = "deleted",
		[VERIFY_REORDERED] = "reordered",
		[VERIFY_TRUNCATED] = "truncated",
		[VERIFY_BAD_SIGNATURE] = "bad_signature",
		[VERIFY_UNKNOWN_KEY] = "unknown_key",
		[VERIFY_REWRITTEN] = "rewritten",
		[VERIFY_ROLLED_BACK] = "rolled_back",
	};

	if ((unsigned)k >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[k];
}

/* Compares the tree at its current size with a checkpoint's root. */
static void check_root(struct vstate *vs, const uint8_t root[MERKLE_HASH_LEN],
		       const char *what)
{
	uint8_t have[MERKLE_HASH_LEN];

	merkle_range_root(&vs->range, have);
	if (memcmp(have, root, MERKLE_HASH_LEN) != 0) {
		vs_fail(vs, VERIFY_REWRITTEN, vs->last_good,
			"%s of size %llu does not match the lines; last matching checkpoint "
			"covers %llu lines", what, (unsigned long long)vs->range.size,
			(unsigned long long)vs->last_good);
		return;
	}
	if (vs->range.size > vs->last_good)
		vs->last_good = vs->range.size;
	vs->unconfirmed = 0;
	vs->res->checkpoints++;
}

/*
 * A checkpoint held elsewhere signs a tree this journal does not have at that size: the
 * journal was cut back (to at most the last witnessed match) and went on with other
 * lines. The scan goes on, so that the witnessed checkpoints of the cut history past
 * the journal's end are counted too; the verdict is given at the end (witness_verdict).
 */
static void check_witnessed(struct vstate *vs, const struct ext_cp *e)
{
	uint8_t have[MERKLE_HASH_LEN];

	merkle_range_root(&vs->range, have);
	if (memcmp(have, e->root, MERKLE_HASH_LEN) == 0) {
		if (e->size > vs->witness_good)
			vs->witness_good = e->size;
		vs->res->witnessed++;
		check_root(vs, e->root, e->what);
		return;
	}
	if (!vs->witness_bad) {
		vs->witness_bad = true;
		vs->witness_cut = vs->witness_good;
		vs->witness_bad_first = e->size;
	}
	if (e->size > vs->witness_bad_max)
		vs->witness_bad_max = e->size;
}

/* After the scan: a witnessed history this journal does not hold, and its range. */
static void witness_verdict(struct vstate *vs)
{
	struct verify_result *res = vs->res;

	for (size_t i = vs->next_ext; i < vs->next; i++)   /* past the journal's end */
		if (vs->ext[i].given && vs->ext[i].st == NOTE_OK &&
		    vs->ext[i].size > vs->witness_bad_max)
			vs->witness_bad_max = vs->ext[i].size;
	if (!vs->witness_bad)
		return;
	res->missing_first = vs->witness_cut;
	res->missing_last = vs->witness_bad_max - 1;
	vs_fail(vs, VERIFY_ROLLED_BACK, vs->witness_cut,
		"rolled back below a witnessed checkpoint: the one of size %llu signs other "
		"lines; witnessed seq %llu..%llu are missing (the witness agrees up to size %llu)",
		(unsigned long long)vs->witness_bad_first, (unsigned long long)res->missing_first,
		(unsigned long long)res->missing_last, (unsigned long long)vs->witness_cut);
}

/* External checkpoints whose size the tree has just reached. */
static void check_external(struct vstate *vs)
{
	while (vs->next_ext < vs->next && vs->ext[vs->next_ext].size <= vs->range.size) {
		struct ext_cp *e = &vs->ext[vs->next_ext++];

		if (e->st != NOTE_OK || e->size != vs->range.size)
			continue;
		if (e->given)
			check_witnessed(vs, e);
		else
			check_root(vs, e->root, e->what);
	}
}

static enum verify_kind status_kind(enum note_status st)
{
	return st == NOTE_UNKNOWN_KEY ? VERIFY_UNKNOWN_KEY : VERIFY_BAD_SIGNATURE;
}

/* Pulls size, root and note out of a checkpoint line; 0 or -EINVAL. */
static int checkpoint_fields(json_t *j, uint64_t *size, uint8_t root[MERKLE_HASH_LEN],
			     const char **note, size_t *note_len)
{
	json_t *js = json_object_get(j, "size"), *jr = json_object_get(j, "root");
	json_t *jn = json_object_get(j, "note");

	if (!json_is_integer(js) || json_integer_value(js) < 0 || !json_is_string(jr) ||
	    !json_is_string(jn))
		return -EINVAL;
	*size = (uint64_t)json_integer_value(js);
	if (note_b64_decode(json_string_value(jr), json_string_length(jr), root,
			    MERKLE_HASH_LEN) != MERKLE_HASH_LEN)
		return -EINVAL;
	*note = json_string_value(jn);
	*note_len = json_string_length(jn);
	return 0;
}

/* Line seq (== tree size) is a journal.checkpoint: its note must sign this tree. */
static void check_checkpoint_line(struct vstate *vs, const char *line, size_t len,
				  uint64_t seq)
{
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	uint8_t root[MERKLE_HASH_LEN];
	struct checkpoint cp;
	const char *note = NULL;
	size_t note_len = 0;
	uint64_t size = 0;
	enum note_status st;

	memset(&cp, 0, sizeof(cp));
	if (!j || checkpoint_fields(j, &size, root, &note, &note_len) < 0) {
		vs_fail(vs, VERIFY_MODIFIED, seq, "checkpoint line does not parse");
		goto out;
	}
	st = note_open_checkpoint(vs->o->key, note, note_len, &cp);
	if (st == NOTE_MALFORMED || size != seq || cp.size != size ||
	    memcmp(cp.root, root, MERKLE_HASH_LEN) != 0) {
		vs_fail(vs, VERIFY_MODIFIED, seq, "checkpoint line is inconsistent (%s)",
			st == NOTE_MALFORMED ? "malformed note" : "size or root");
		goto out;
	}
	if (st != NOTE_OK) {
		vs_fail(vs, status_kind(st), seq, "checkpoint line: %s", note_status_str(st));
		goto out;
	}
	check_root(vs, cp.root, "checkpoint line");
out:
	json_decref(j);
}

/* Line at position `expect` carries another seq: modified, reordered or deleted. */
static void seq_mismatch(struct vstate *vs, const struct line_envelope *env,
			 uint64_t expect)
{
	int found;

	/* It still chains to its predecessor: its own seq field was altered. */
	if (memcmp(env->prev_hash, vs->last_leaf, MERKLE_HASH_LEN) == 0) {
		vs_fail(vs, VERIFY_MODIFIED, expect, "line has seq %llu, expected %llu",
			(unsigned long long)env->seq, (unsigned long long)expect);
		return;
	}
	if (env->seq < expect) {
		vs_fail(vs, VERIFY_REORDERED, env->seq, "seq %llu appears again after %llu",
			(unsigned long long)env->seq, (unsigned long long)expect - 1);
		return;
	}
	found = vs_lookahead(vs, expect);
	if (found < 0)
		vs_fail(vs, VERIFY_MODIFIED, expect, "cannot read ahead: %s", strerror(-found));
	else if (found)
		vs_fail(vs, VERIFY_REORDERED, expect, "seq %llu is missing here (found %llu) "
			"and appears later", (unsigned long long)expect,
			(unsigned long long)env->seq);
	else
		vs_fail(vs, VERIFY_DELETED, expect, "seq %llu is missing (next is %llu)",
			(unsigned long long)expect, (unsigned long long)env->seq);
}

static const char checkpoint_event[] = "journal.checkpoint";

/*
 * The line carries seq > expect: when purged segments cover [expect, seq) exactly, the
 * tree and the chain go on from the last one's recorded state. true when bridged.
 */
static bool bridge_purged(struct vstate *vs, const struct line_envelope *env,
			  uint64_t expect)
{
	const struct verify_purged *last = NULL;
	struct verify_result *res = vs->res;
	uint64_t at = expect;

	for (size_t i = 0; i < vs->o->n_purged && at < env->seq; i++)
		if (vs->o->purged[i].first_seq == at) {
			last = &vs->o->purged[i];
			at = last->last_seq + 1;
		}
	if (!last || at != env->seq || last->tree.size != env->seq ||
	    memcmp(env->prev_hash, last->next_prev, MERKLE_HASH_LEN) != 0)
		return false;
	vs->range = last->tree;
	memcpy(vs->last_leaf, last->next_prev, MERKLE_HASH_LEN);
	vs->unconfirmed = env->seq;
	if (res->n_gaps < VERIFY_GAPS_MAX) {
		res->gaps[res->n_gaps].first = expect;
		res->gaps[res->n_gaps].last = env->seq - 1;
	}
	res->n_gaps++;
	res->purged_lines += env->seq - expect;
	return true;
}

int vs_line(struct vstate *vs, const char *line, size_t len)
{
	uint64_t expect = vs->range.size;
	struct line_envelope env;
	uint8_t leaf[MERKLE_HASH_LEN];

	if (line_envelope_parse_strict(line, len, &env) < 0) {
		vs_fail(vs, VERIFY_MODIFIED, expect, "line does not parse");
		return -1;
	}
	if (env.seq > expect && bridge_purged(vs, &env, expect))
		expect = env.seq;
	if (env.seq != expect) {
		seq_mismatch(vs, &env, expect);
		return -1;
	}
	if (vs->res->lines == 0)
		vs->res->first_seq = expect;
	if (memcmp(env.prev_hash, vs->last_leaf, MERKLE_HASH_LEN) != 0) {
		vs_fail(vs, VERIFY_MODIFIED, expect ? expect - 1 : 0,
			expect ? "the next line's prev is not this line's hash"
			       : "first line's prev is not zero");
		return -1;
	}
	if (env.event_len == sizeof(checkpoint_event) - 1 &&
	    memcmp(env.event, checkpoint_event, env.event_len) == 0)
		check_checkpoint_line(vs, line, len, expect);
	merkle_leaf_hash(line, len, leaf);
	if (merkle_range_append(&vs->range, leaf) < 0) {
		vs_fail(vs, VERIFY_MODIFIED, expect, "tree full");
		return -1;
	}
	memcpy(vs->last_leaf, leaf, MERKLE_HASH_LEN);
	vs->res->lines++;
	vs->res->last_seq = expect;
	check_external(vs);
	return vs->failed && vs->res->bad_seq <= vs->range.size ? -1 : 0;
}

/* After the last line: checkpoints that cover more lines than exist. */
static void check_tail(struct vstate *vs)
{
	size_t i;

	for (i = vs->next_ext; i < vs->next; i++)
		if (vs->ext[i].st == NOTE_OK && vs->ext[i].size > vs->range.size &&
		    vs->ext[i].given) {
			vs->res->missing_first = vs->range.size;
			vs->res->missing_last = vs->res->witnessed_max - 1;
			vs_fail(vs, VERIFY_TRUNCATED, vs->range.size,
				"%s covers %llu lines, the journal has %llu: witnessed seq "
				"%llu..%llu are missing", vs->ext[i].what,
				(unsigned long long)vs->ext[i].size,
				(unsigned long long)vs->range.size,
				(unsigned long long)vs->res->missing_first,
				(unsigned long long)vs->res->missing_last);
			return;
		}
	for (i = vs->next_ext; i < vs->next; i++)
		if (vs->ext[i].st == NOTE_OK && vs->ext[i].size > vs->range.size) {
			vs_fail(vs, VERIFY_TRUNCATED, vs->range.size,
				"%s covers %llu lines, the journal has %llu", vs->ext[i].what,
				(unsigned long long)vs->ext[i].size,
				(unsigned long long)vs->range.size);
			return;
		}
}

int verify_journal(const struct verify_opts *o, struct verify_result *res)
{
	struct vstate vs;
	int ret;

	memset(res, 0, sizeof(*res));
	memset(&vs, 0, sizeof(vs));
	vs.o = o;
	vs.res = res;
	merkle_range_init(&vs.range);
	ret = vs_list_segments(&vs);
	if (ret == 0)
		ret = vs_load_external(&vs);
	if (ret < 0)
		goto out;
	check_external(&vs);   /* a checkpoint of size 0 */
	if (vs.nsegs == 0)
		vs_fail(&vs, VERIFY_TRUNCATED, 0, "no segment in %s", o->journal_dir);
	else if (!(vs.failed && res->bad_seq == 0))
		ret = vs_read_segments(&vs);
	if (ret == 0)
		witness_verdict(&vs);
	if (ret == 0 && !vs.failed)
		check_tail(&vs);
	if (ret == 0 && !vs.failed && vs.unconfirmed)
		vs_fail(&vs, VERIFY_MODIFIED, vs.unconfirmed, "the lines after a purged range "
			"(from seq %llu) reach no checkpoint: the purge's record cannot be checked",
			(unsigned long long)vs.unconfirmed);
	res->ok = ret == 0 && !vs.failed;
	if (res->ok)
		snprintf(res->message, sizeof(res->message), "%llu lines, %llu checkpoints",
			 (unsigned long long)res->lines, (unsigned long long)res->checkpoints);
out:
	vs_free(&vs);
	return ret;
}
