/*
 * The session execs the proc connector saw, held while the audit source's record of each
 * is on its way (sensors/process/execpend.c). With the audit exec source both sensors
 * see every exec: the connector always (it is the shadow), the kernel's audit records while our
 * rules and the enabled flag are in place. Each exec the connector saw is recorded
 * exactly once: by the audit source when its record comes (the held copy is dropped), by
 * the connector when it does not (the rules removed, auditing off, a record lost: the
 * held copy is emitted, args_source "proc"). Which one is decided per exec, not by a flag
 * read at some moment, so no exec falls between the two when the rules are tampered with.
 * For the process sensor, the kernel audit source and the module that makes the table.
 */
#ifndef SANDGATE_SENSORS_PROCESS_EXECPEND_H
#define SANDGATE_SENSORS_PROCESS_EXECPEND_H

#include <stdbool.h>
#include <stdint.h>

#include "sensors/process/process.h"

#define EXECPEND_SLOTS 4096              /* held execs and tombstones at once */
#define EXECPEND_HELD_MAX 1024           /* held with their /proc reads (~16 KiB each) */
#define EXECPEND_HOLD_NS 2000000000ull   /* a record later than this: the connector's */
#define EXECPEND_TOMB_NS 10000000000ull  /* a late record of an exec emitted is dropped */
#define EXECPEND_SLACK_NS 2000000ull     /* record time (ms, coarse) vs the exec's */
#define EXECPEND_FILTER 1024             /* buckets of the lock-free "pid holds" check */
#define EXECPEND_RELEASE_WAIT_NS 100000000ull /* a file event waits this long for the record */
#define EXECPEND_WAIT_BUDGET_NS 200000000ull  /* ... and all of them this long a second */

/* One exec as the connector saw it; what the caller emits when it is handed back. */
struct execpend_item {
	struct execpend_item *next;
	struct cn_event ev;
	struct ptab_ent pe;
	struct exec_info x;
};

/* What became of the execs since the table was made. */
struct execpend_stats {
	uint64_t held;               /* execs put with hold */
	uint64_t claimed;            /* ... whose record came: the audit source emitted them */
	uint64_t fallback;           /* execs handed back: the connector emits them */
	uint64_t noargs;             /* ... of those, with no arguments read from /proc */
	uint64_t dup;                /* records of execs the connector had emitted: dropped */
};

enum execpend_claim {
	EXECPEND_NONE,               /* no exec of pid held: the record is the only account */
	EXECPEND_CLAIMED,            /* held: dropped, the record is emitted instead */
	EXECPEND_DUP,                /* the connector emitted it already: drop the record */
};

struct execpend;

/* An empty, inactive table. 0 or -ENOMEM. */
int execpend_new(struct execpend **out);
/* Frees the table and every item still held. Accepts NULL. */
void execpend_free(struct execpend *p);
/* While active, puts are taken; made inactive, every held item goes to *emit. */
void execpend_activate(struct execpend *p, bool on, struct execpend_item **emit);

/*
 * Connector: the exec ev of session process pe, what /proc gave in x (its cmdline is
 * taken). hold: wait for the audit record (until now + EXECPEND_HOLD_NS); else the exec is
 * handed back at once and a tombstone left, so that a record of it coming later is
 * dropped. *emit gets what the caller emits now (this exec when not held, older ones
 * pushed out when the table is full). 0, -EAGAIN when inactive (x untouched: emit it),
 * -ENOMEM (x cleared).
 */
int execpend_put(struct execpend *p, const struct cn_event *ev, const struct ptab_ent *pe,
		 struct exec_info *x, bool hold, uint64_t now, struct execpend_item **emit);

/*
 * A chroot'ed process's exe in the kernel's record is a path under its root (`chroot
 * /jail /usr/bin/ls` is recorded as exe "/usr/bin/ls"); the connector read /proc/PID/exe
 * from the daemon's root ("/jail/usr/bin/ls"). When held ends with exe (PATH_MAX bytes)
 * after a non-empty prefix (that prefix is the process's root), exe becomes held: true.
 * False, exe unchanged, otherwise (a later exec's program read by the connector is not
 * taken for this one's).
 */
bool execpend_reroot(const char *held, char *exe);
/*
 * Audit source: the record of an exec by pid at ts_ns (monotonic, from the record's
 * coarse ms time: never later than the exec). Records of one pid come in exec order, so
 * an exec of pid held from before ts_ns - EXECPEND_SLACK_NS will never get one: handed
 * to *emit (the connector's account). Then the oldest exec of pid left decides.
 * claimed (or NULL: freed): the held item of a CLAIMED exec, the caller's to free
 * (execpend_items_free); NULL otherwise.
 */
enum execpend_claim execpend_claim(struct execpend *p, pid_t pid, uint64_t ts_ns,
				   struct execpend_item **emit, struct execpend_item **claimed);

/*
 * Another sensor is about to record what pid did (a file event): the exec line must not
 * come after the lines of what the exec's program did (a downloader's exec after the file
 * it wrote would hide the download from detection). The record is normally already on
 * its way: the kernel queues it at the exec's syscall exit, before the program runs and
 * before the closes the exec itself causes (the old program's mapped libraries, read
 * as the new one). So the caller waits up to wait_ns (0: not at all) for the audit
 * source to claim pid's held execs; what is still held then goes to *emit, with
 * tombstones (the connector's account, arguments from /proc). A wait that ends at its
 * deadline makes the next releases not wait until a record is claimed again: with the
 * records gone (rules removed, records lost) no file event waits more than once. And the
 * waits share a budget of EXECPEND_WAIT_BUDGET_NS a second: a storm of execs whose
 * records are late or lost cannot hold the file sensor's thread (and its queue) for more
 * than a fifth of its time; past the budget the connector's account is emitted at once.
 * Cheap when pid holds nothing: no lock is taken.
 */
void execpend_release_pid(struct execpend *p, pid_t pid, uint64_t wait_ns, uint64_t now,
			  struct execpend_item **emit);
/* False: pid holds nothing (true may be a neighbour's: the release finds out). */
bool execpend_may_hold(struct execpend *p, pid_t pid);

/* Held items past their time (every held item with all) to *emit; old tombstones go. */
void execpend_expire(struct execpend *p, uint64_t now, bool all,
		     struct execpend_item **emit);

void execpend_stats(struct execpend *p, struct execpend_stats *st);
/* The list handed back, oldest first (it is built newest first). */
struct execpend_item *execpend_items_order(struct execpend_item *l);
/* Frees a list of items (their cmdlines too). Accepts NULL. */
void execpend_items_free(struct execpend_item *l);

#endif
