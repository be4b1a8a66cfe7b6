/* Internal to journal/: the writer's state shared by its files. Not for other parts. */
#ifndef SANDGATE_JOURNAL_IMPL_H
#define SANDGATE_JOURNAL_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "journal/journal.h"
#include "journal/merkle.h"
#include "journal/note.h"

#define SEGMENT_NAME_LEN 26   /* 20 digits + ".jsonl" */
#define JOURNAL_PATH_MAX 4096

/* The chain position: everything needed to append the next line. */
struct chain_pos {
	uint64_t size;                         /* lines so far = next seq */
	uint8_t leaf[MERKLE_HASH_LEN];         /* leaf hash of line size-1 (zeros at 0) */
	struct merkle_range range;
};

/* What `state` records: a chain position and where its next line starts. */
struct journal_state {
	struct chain_pos pos;
	char segment[SEGMENT_NAME_LEN + 1];
	uint64_t offset;
};

/* A checkpoint waiting for the syncer. */
struct pending_cp {
	char *note;
	size_t note_len;
	struct journal_state state;
	int fd;                                /* dup of the segment fd to fdatasync */
};

/* Bounded FIFO of framed lines between producers and the writer (queue.c). */
#define LQ_MIN_BYTES (4u << 20)   /* twice the largest line: one always fits when empty */
#define LQ_BYTES_PER_LINE 256     /* ring bytes per line of queue_capacity */
struct line_queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
	char *ring;
	size_t size;                  /* bytes */
	size_t rd, wr, used;          /* oldest entry, where the next goes, bytes held */
	size_t count, cap_lines, high_water;
	size_t peek_n, peek_pos, peek_used;   /* what the writer holds, until lq_release */
	bool closing;
};

/* A queued line's end as journal_submit framed it: the timestamp (RFC3339_LEN bytes),
 * then everything after the line's prev ("\",\"event\":... }\n"). */
struct lq_item {
	const char *data;
	size_t len;
	uint64_t shape_from;          /* where handoff_claim put the line's tokens */
	uint32_t shape_n;             /* how many; 0: the line has no shape held */
};

/* A line's shape as lq_push takes it: the tokens line_frame wrote after the frame (n
 * struct shape_tok, unaligned), to claim in h (journal/handoff.h). */
struct lq_shape {
	struct handoff *h;
	const void *tok;
	size_t n;
};

struct syncer {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_cond_t idle;
	struct pending_cp *items;
	struct pending_cp *batch;              /* the syncer thread's working copy */
	size_t cap, count;
	bool busy, stop;
	int error;                             /* last error, -errno */
};

struct journal {
	struct journal_settings cfg;
	char *state_dir, *host, *origin;
	char dir[JOURNAL_PATH_MAX];            /* state_dir/journal */
	struct note_signer *signer;

	struct line_queue queue;
	struct handoff *handoff;               /* NULL: lines go without their shapes */
	char *host_json;                       /* ,"host":"..." as every line has it */
	struct syncer sync;
	pthread_t writer_thread, syncer_thread;
	bool threads_started;

	/* writer-thread state */
	struct chain_pos pos;
	int seg_fd;
	char seg_name[SEGMENT_NAME_LEN + 1];
	uint64_t seg_len;                      /* bytes on disk (complete lines only) */
	uint64_t seg_opened_ms;
	struct buf out;                        /* encoded lines not yet written */
	struct buf line;                       /* scratch for one line */
	uint64_t last_cp_size;
	uint64_t lines_unpublished;            /* not yet in stats.events_written */
	uint64_t last_cp_ms, last_line_ms;
	char *last_note;                       /* the newest checkpoint note (quoted by new segments) */
	bool stalled;
	int stall_errno;
	uint64_t stall_since_ms, stall_retry_ms, stall_lost, stall_held;
	uint64_t open_recovery_cut;            /* set by recovery, reported at start */
	uint64_t open_recovery_seq, open_recovery_kept;
	char open_recovery_file[JOURNAL_PATH_MAX];

	journal_checkpoint_fn on_cp;
	void *on_cp_ctx;
	struct journal_prev prev;              /* the previous run's end (prevrun.c) */
	char *witness_dir;                     /* NULL: no witness (witness.c) */
	char witness_path[JOURNAL_PATH_MAX];
	int witness_fd;                        /* -1: none */
	bool witness_same_fs;                  /* on the state dir's filesystem: weak */
	bool witness_rollback;                 /* found at open: reported at start */
	uint64_t witness_size;                 /* the witness's last checkpoint size */
	uint64_t witness_journal_size;         /* the journal's lines when it was compared */

	pthread_mutex_t stats_lock;
	struct journal_stats stats;
};

uint64_t journal_now_ms(void);

/* queue.c */
int lq_init(struct line_queue *q, size_t cap_lines, size_t cap_bytes);
void lq_destroy(struct line_queue *q);
/* Copies len bytes in as one entry; blocks while there is no room. -ESHUTDOWN after
 * close, -EMSGSIZE for an entry larger than the ring. */
/* data: the frame (len bytes). shape, or NULL: the line's tokens, claimed in the
 * handoff under the queue's lock (which orders the claims); the entry carries where. */
int lq_push(struct line_queue *q, const char *data, size_t len, const struct lq_shape *shape);
/* Up to max entries, oldest first, pointing into the ring (waits until deadline_ms,
 * CLOCK_MONOTONIC, when empty). They stay valid and queued until lq_release. */
size_t lq_peek(struct line_queue *q, struct lq_item *out, size_t max, uint64_t deadline_ms);
void lq_release(struct line_queue *q);
void lq_close(struct line_queue *q);
size_t lq_depth(struct line_queue *q, size_t *high_water);

/* line.c: encoding one event as a journal line and chaining it. */
void line_encode(struct buf *b, const struct journal *j, const struct event *e, uint64_t seq,
		 const uint8_t prev[MERKLE_HASH_LEN]);
/* The end of e's line, as queued (struct lq_item), into b; with shape, the line's shape
 * after it (journal/shape.h), whose bytes it returns (0: none). */
size_t line_frame(struct buf *b, const struct journal *j, const struct event *e, bool shape);
/* The line of a queued frame: its start (ts, seq, prev), then the frame's end. */
void line_encode_framed(struct buf *b, const char *frame, size_t len, uint64_t seq,
			const uint8_t prev[MERKLE_HASH_LEN]);
int chain_append(struct chain_pos *pos, const char *line, size_t len);
/* Checks the fixed envelope prefix: seq and prev as expected. */
bool line_chains(const struct chain_pos *pos, const char *line, size_t len);

/* segment.c */
int segment_list(const char *dir, char (**names)[SEGMENT_NAME_LEN + 1], size_t *n);
void segment_name(uint64_t first_seq, char out[SEGMENT_NAME_LEN + 1]);
int segment_open_new(struct journal *j, uint64_t first_seq);
int journal_flush(struct journal *j);
int state_save(const char *dir, const struct journal_state *st);
int state_load(const char *dir, struct journal_state *st);
int checkpoints_read_last(const char *dir, char **note);
/* The last note of a notes file at path (NULL when none or no file). 0 or -errno. */
int notes_read_last(const char *path, char **note);

/* prevrun.c: fills j->prev from the last segment; 0 or -errno. */
int journal_prev_read(struct journal *j);

/* witness.c */
int witness_open(struct journal *j, char *err, size_t errlen);
int witness_append(struct journal *j, const struct pending_cp *items, size_t n);
int witness_report(struct journal *j);

/* recover.c */
int journal_recover(struct journal *j, char *err, size_t errlen);

/* syncer.c */
int syncer_init(struct syncer *s);
void syncer_destroy(struct syncer *s);
int syncer_submit(struct journal *j, struct pending_cp *cp);
void *syncer_main(void *arg);
void syncer_stop(struct journal *j);
void syncer_wait_idle(struct journal *j);

/* writer.c */
void *writer_main(void *arg);
void writer_publish_lines(struct journal *j);
int writer_checkpoint(struct journal *j);
int writer_emit_sandgate(struct journal *j, struct event *e);
int writer_segment_head(struct journal *j, const char *type);

#endif
