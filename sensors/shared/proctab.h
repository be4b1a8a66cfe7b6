/*
 * The pid -> session table (sensors/shared/proctab.c), under its own mutex: the process
 * sensor keeps it by the fork tree; the file and kernel audit sensors, the package
 * tracker and the escape check look pids up in it.
 */
#ifndef SANDGATE_SENSORS_SHARED_PROCTAB_H
#define SANDGATE_SENSORS_SHARED_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attribution/attribution.h"

#define PTAB_CAP (1u << 15)            /* session processes alive at once (+ recent dead) */
#define PTAB_DEAD_KEEP_NS 3000000000ull  /* exited entries kept for late file events */

struct ptab_ent {
	pid_t pid;                   /* 0: empty slot */
	pid_t ppid;
	uint64_t start_ns;           /* CLOCK_MONOTONIC: fork event, or /proc start time */
	uint64_t dead_ns;            /* CLOCK_MONOTONIC of the exit; 0: alive */
	uint32_t uid, euid;
	bool ids_known;              /* uid/euid read or reported; else they are null */
	char sid[SESSION_ID_MAX + 1];
};

struct ptab;

/* A table of PTAB_CAP slots. 0 or -ENOMEM. */
int ptab_new(struct ptab **out);
void ptab_free(struct ptab *t);
/* Inserts or replaces e (by pid). 0 or -ENOSPC when the table is full. */
int ptab_put(struct ptab *t, const struct ptab_ent *e);
/* Copies pid's entry into out; dead entries only with dead_ok. True when found. */
bool ptab_get(struct ptab *t, pid_t pid, bool dead_ok, struct ptab_ent *out);
/* Marks pid exited at now_ns (kept PTAB_DEAD_KEEP_NS for late file events). */
void ptab_exit(struct ptab *t, pid_t pid, uint64_t now_ns);
/* Sets pid's uids (uid change event); no-op when pid is unknown. */
void ptab_set_uids(struct ptab *t, pid_t pid, uint32_t ruid, uint32_t euid);
/* Drops pid (a dead entry whose pid the kernel reused for a host process). */
void ptab_del(struct ptab *t, pid_t pid);
/* Drops dead entries older than PTAB_DEAD_KEEP_NS. */
void ptab_sweep(struct ptab *t, uint64_t now_ns);
/* Copies up to max live entries into out (audit/escape.c); how many. */
size_t ptab_live(struct ptab *t, struct ptab_ent *out, size_t max);
/* Sets the sid of pid's live entry if it is still the one started at start_ns. */
bool ptab_set_sid(struct ptab *t, pid_t pid, uint64_t start_ns, const char *sid);

#endif
