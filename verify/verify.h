/*
 * The journal verifier (docs/journal-format.md, "Verification"): reads a journal
 * directory, checks every line's envelope, the seq sequence and the prev chain,
 * rebuilds the Merkle tree and checks every checkpoint it can find against a key.
 * Reports the first bad seq and the kind of damage. Needs O(log n) memory whatever the
 * journal's size; the journal may be hostile.
 */
#ifndef SANDGATE_VERIFY_VERIFY_H
#define SANDGATE_VERIFY_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal/merkle.h"
#include "journal/note.h"

enum verify_kind {
	VERIFY_OK = 0,
	VERIFY_MODIFIED,       /* a line does not parse, or does not chain */
	VERIFY_DELETED,        /* a seq is missing and does not appear later */
	VERIFY_REORDERED,      /* a seq is missing here and appears later */
	VERIFY_TRUNCATED,      /* a checkpoint covers more lines than exist */
	VERIFY_BAD_SIGNATURE,  /* a checkpoint's signature does not verify */
	VERIFY_UNKNOWN_KEY,    /* a checkpoint is not signed by the given key */
	VERIFY_REWRITTEN,      /* the chain holds but a checkpoint's root does not match */
	VERIFY_ROLLED_BACK,    /* a witnessed checkpoint's lines were replaced: the journal
				  was cut back below it and went on */
};

#define VERIFY_MSG_MAX 256
#define VERIFY_GAPS_MAX 8

/*
 * A segment retention purged (its tombstone): the seqs it held and the Merkle state
 * after it. Not trusted by itself: the lines after it must reach a checkpoint whose
 * signed root matches, which only the true state can give.
 */
struct verify_purged {
	uint64_t first_seq, last_seq;
	struct merkle_range tree;             /* after last_seq: tree.size == last_seq + 1 */
	uint8_t next_prev[MERKLE_HASH_LEN];   /* the hash of line last_seq */
};

struct verify_result {
	bool ok;                   /* nothing wrong */
	enum verify_kind kind;     /* VERIFY_OK when ok */
	uint64_t bad_seq;          /* first bad seq (when !ok) */
	uint64_t lines;            /* lines read and checked */
	uint64_t checkpoints;      /* checkpoint notes whose signature and root matched */
	uint64_t last_seq;         /* seq of the last line read (valid when lines > 0) */
	uint64_t first_seq;        /* seq of the first line read (0 unless purged) */
	uint64_t purged_lines;     /* seqs bridged over purged segments */
	size_t n_gaps;             /* purged seq ranges bridged (the first few below) */
	struct { uint64_t first, last; } gaps[VERIFY_GAPS_MAX];
	char message[VERIFY_MSG_MAX];   /* human explanation, one line */
	uint64_t witnessed;        /* witnessed checkpoints (given) that matched */
	uint64_t witnessed_max;    /* the largest size a given checkpoint signs */
	uint64_t missing_first, missing_last;   /* rolled_back/truncated against a given
						   checkpoint: witnessed seqs not in this journal */
};

struct verify_opts {
	const char *journal_dir;              /* holds the segments and `checkpoints` */
	const struct note_verifier *key;      /* the trusted key */
	const char *checkpoint_file;          /* external checkpoint note(s), or NULL */
	const char *witness_file;             /* the witness's notes file, or NULL: like
						 checkpoint_file (both are "witnessed") */
	const struct verify_purged *purged;   /* tombstones, sorted by first_seq */
	size_t n_purged;
};

/*
 * Verifies the journal. A run of missing seqs that purged segments cover exactly is
 * bridged with the last one's Merkle state (res->gaps), provided a checkpoint after it
 * then verifies; a bridge no checkpoint confirms is damage (modified). Returns 0 when the verification ran to a verdict (res->ok says
 * which), or -errno when it could not (journal_dir or a segment unreadable: -ENOENT,
 * -EACCES, -EIO; checkpoint_file unreadable; -ENOMEM). A directory with no segment
 * yields -ENOENT.
 */
int verify_journal(const struct verify_opts *o, struct verify_result *res);

/* "ok", "modified", "deleted", ... as in the format's table. */
const char *verify_kind_str(enum verify_kind k);

#endif
