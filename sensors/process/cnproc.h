/*
 * Proc connector messages (sensors/process/cnproc.c; pure, fuzzed in
 * tests/fuzz/fuzz_cn_proc.c): netlink datagrams into events, per-CPU sequence gaps.
 */
#ifndef SANDGATE_SENSORS_PROCESS_CNPROC_H
#define SANDGATE_SENSORS_PROCESS_CNPROC_H

#include <stddef.h>
#include <stdint.h>

/* CN_ACK: the reply to our listen request; it carries no per-CPU sequence number. */
enum cn_kind { CN_OTHER, CN_ACK, CN_FORK, CN_EXEC, CN_UID, CN_EXIT };

/* One proc connector event, decoded; fields not carried by the kind are 0. */
struct cn_event {
	enum cn_kind kind;
	uint32_t seq;                /* the per-CPU sequence number (cn_msg.seq) */
	uint32_t cpu;
	uint64_t ts_ns;              /* CLOCK_MONOTONIC */
	int32_t pid, tgid;           /* fork: the child; others: the process */
	int32_t ppid, ptgid;         /* fork: the parent; exit: the parent */
	uint32_t ruid, euid;         /* uid change */
	uint32_t exit_code, exit_signal;   /* exit: raw wait status, signal sent to parent;
					    * ack: exit_code holds the request's errno */
};

/*
 * Decodes the netlink datagram buf[0..len) into at most max events (*n set). Messages
 * that are not proc connector events, or too short for their kind, are skipped and
 * counted in *bad. Returns 0, or -EINVAL when the datagram's framing is broken (events
 * decoded before the break are kept in out).
 */
int cn_decode(const void *buf, size_t len, struct cn_event *out, size_t max, size_t *n,
	      size_t *bad);

/* Per-CPU sequence tracking: events missed between two seen on the same CPU. */
struct cn_seq;
int cn_seq_new(struct cn_seq **out, uint32_t ncpu);
void cn_seq_free(struct cn_seq *s);
/* Feeds one event's (cpu, seq); returns how many sequence numbers were skipped. */
uint64_t cn_seq_feed(struct cn_seq *s, uint32_t cpu, uint32_t seq);

/* Splits a raw wait status into exit code (or -1) and signal (or 0). */
void cn_exit_decode(uint32_t status, int *code, int *sig);

#endif
