/*
 * A process's start time from /proc/PID/stat: with the pid, the identity of a process
 * that outlives pid reuse. Used by the session registry (attribution/) and by
 * containment (contain/), which is below it, so it lives here.
 */
#ifndef SANDGATE_COMMON_PROC_H
#define SANDGATE_COMMON_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Start time (field 22, clock ticks since boot) from /proc/PID/stat bytes. The comm
 * field may hold spaces and parentheses: the last ')' ends it. 0 or -EINVAL.
 */
int proc_stat_starttime(const char *buf, size_t len, uint64_t *start);

/* The decimal u64 in p[0..n) (digits only, no sign, no overflow). 0 or -EINVAL. */
int proc_dec_u64(const char *p, size_t n, uint64_t *val);

/* Start time of a live pid from /proc/PID/stat. 0, -ESRCH (no such process) or -errno. */
int proc_starttime(pid_t pid, uint64_t *start);

#endif
