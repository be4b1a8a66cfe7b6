/*
 * The journal: one append-only, hash-chained, Merkle-checkpointed stream of events in
 * STATE_DIR/journal (docs/journal-format.md). Producers never see it directly: the
 * daemon sets it as the event sink (journal/event.h) and every part calls event_emit().
 *
 * Threads: producers enqueue into a bounded queue (blocking when full, so nothing is
 * dropped silently); one writer thread encodes, chains, hashes and writes; one syncer
 * thread makes checkpoints durable (fdatasync), publishes them to the checkpoints file
 * and the sinks, and persists the writer state. fsync latency never stalls the writer.
 */
#ifndef SANDGATE_JOURNAL_JOURNAL_H
#define SANDGATE_JOURNAL_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "journal/event.h"
#include "journal/note.h"

enum journal_fsync {
	JOURNAL_FSYNC_CHECKPOINT,   /* default: the lines a checkpoint covers, before it is published */
	JOURNAL_FSYNC_ALWAYS,       /* after every write */
	JOURNAL_FSYNC_NEVER,        /* leave it to the kernel; checkpoints still published */
};

struct journal_settings {
	const char *state_dir;            /* the journal lives in state_dir/journal */
	const char *host;
	const char *origin;               /* NULL: "sandgate/<host>" */
	uint64_t segment_max_bytes;
	uint64_t segment_max_age_ms;
	enum journal_fsync fsync;
	uint64_t checkpoint_interval_ms;
	uint64_t checkpoint_events;
	uint64_t heartbeat_interval_ms;
	size_t queue_capacity;
	size_t stall_buffer_max;          /* bytes held in memory while the disk is full */
	const char *witness_dir;          /* NULL: none; else each checkpoint also goes there */
	size_t handoff_bytes;             /* recent lines' shapes for the journal's own readers
					     (journal/handoff.h); 0: none, they parse */
};

/* The defaults of docs/journal-format.md for the given state dir and host. */
void journal_settings_default(struct journal_settings *s, const char *state_dir,
			      const char *host);

struct journal_stats {
	uint64_t events_written;      /* lines, including the journal's own */
	uint64_t next_seq;
	uint64_t checkpoints;
	uint64_t checkpoints_durable;
	uint64_t queue_depth;
	uint64_t queue_high_water;
	uint64_t bytes_written;
	uint64_t write_errors;
	uint64_t lost;                /* events that could not be written (disk full) */
	uint64_t recoveries;          /* torn tails cut at open */
	int stalled;                  /* 1 while writes fail */
	uint64_t witness_errors;      /* checkpoint notes the witness could not take */
	int witness_same_fs;          /* 1: the witness dir is on the state dir's filesystem */
	int witness_rollback;         /* 1: at open the witness held more than the journal */
};

struct journal;
struct handoff;

/* The journal's recent lines and their shapes (journal/handoff.h), or NULL. */
struct handoff *journal_handoff(struct journal *j);

/*
 * Opens (or creates) the journal, recovering a torn tail left by a crash. Does not
 * start threads. On failure writes a one-line reason naming the path into err and
 * returns -errno: -EACCES/-EPERM/-EROFS for an unusable state dir, -EBADMSG when the
 * journal is shorter than its last durable checkpoint (damage, not a crash).
 * Takes ownership of signer.
 */
int journal_open(struct journal **out, const struct journal_settings *s,
		 struct note_signer *signer, char *err, size_t errlen);

/* Starts the writer and syncer threads. Returns 0 or -errno. */
int journal_start(struct journal *j);

/* event_submit_fn: enqueues e (blocks while the queue is full). ctx is the journal. */
int journal_submit(void *ctx, struct event *e);

/* Called by the syncer after each checkpoint is durable and in the checkpoints file. */
typedef void (*journal_checkpoint_fn)(void *ctx, const char *note, size_t len);
void journal_on_checkpoint(struct journal *j, journal_checkpoint_fn fn, void *ctx);

void journal_get_stats(struct journal *j, struct journal_stats *out);

/*
 * What the previous run left at the end of the journal, read at open before this run
 * wrote anything (journal/prevrun.c): exists is false for a new journal.
 */
struct journal_prev {
	bool exists;
	bool clean;                   /* its last event was daemon.stop and no tail was torn */
	uint64_t last_seq;
	char last_ts[32];             /* RFC 3339 time of its last line */
	char last_heartbeat[32];      /* of its last heartbeat/checkpoint line; "" if none seen */
};
void journal_previous_run(const struct journal *j, struct journal_prev *out);

/* The witness file's name for origin in journal.witness_dir: "<origin, / as _>.checkpoints". */
void journal_witness_name(const char *origin, char *out, size_t len);

/*
 * Drains the queue, writes a final checkpoint, makes everything durable, stops the
 * threads and frees j. Returns 0, or the first write/sync error as -errno.
 */
int journal_close(struct journal *j);

#endif
