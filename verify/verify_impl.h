/*
 * Internals of the verifier shared by verify.c (the checks) and verify_io.c (reading
 * segments and checkpoint files). Not for other parts: use verify/verify.h.
 */
#ifndef SANDGATE_VERIFY_VERIFY_IMPL_H
#define SANDGATE_VERIFY_VERIFY_IMPL_H

#include "journal/envelope.h"
#include "verify/verify.h"

/* A checkpoint from outside the segments, opened before the scan. */
struct ext_cp {
	uint64_t size;
	uint8_t root[MERKLE_HASH_LEN];
	enum note_status st;
	const char *what;     /* "checkpoints file note", "--checkpoint note" */
	bool given;           /* held elsewhere (--checkpoint, --witness): witnessed */
};

struct vstate {
	const struct verify_opts *o;
	struct verify_result *res;
	bool failed;
	struct merkle_range range;          /* size == next expected seq */
	uint8_t last_leaf[MERKLE_HASH_LEN]; /* the next line's expected prev */
	uint64_t last_good;                 /* size of the last checkpoint that matched */
	uint64_t witness_good;              /* size of the last given checkpoint that matched */
	bool witness_bad;                   /* a given checkpoint signs other lines */
	uint64_t witness_cut;               /* witness_good when the first one did */
	uint64_t witness_bad_first;         /* the size of that first one */
	uint64_t witness_bad_max;           /* the largest given size not in this journal */
	bool loading_given;                 /* vs_load_external: notes being added are given */
	uint64_t unconfirmed;               /* seq after a bridged purge no checkpoint has
					       confirmed yet; 0 when none */
	struct ext_cp *ext;                 /* sorted by size */
	size_t next, cap, next_ext;         /* used, allocated, first not yet reached */
	char **segs;                        /* segment paths in order */
	size_t nsegs;
	size_t cur_seg;                     /* segment being read */
	uint64_t cur_off;                   /* offset of the line being checked */
};

/* Records damage unless something earlier is already recorded. printf-like. */
void vs_fail(struct vstate *vs, enum verify_kind kind, uint64_t seq, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Checks one line (no '\n'). Returns 0 to go on, -1 when the verdict is known. */
int vs_line(struct vstate *vs, const char *line, size_t len);

/* Fills vs->segs. Returns 0 or -errno. */
int vs_list_segments(struct vstate *vs);
/* Opens the `checkpoints` file and opts->checkpoint_file into vs->ext. 0 or -errno. */
int vs_load_external(struct vstate *vs);
/* Feeds every line of every segment to vs_line. Returns 0 or -errno. */
int vs_read_segments(struct vstate *vs);
/* 1 when a line with this seq exists after the current line, 0 if not, or -errno. */
int vs_lookahead(struct vstate *vs, uint64_t seq);
void vs_free(struct vstate *vs);

#endif
