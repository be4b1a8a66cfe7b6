/*
 * How busy the host's CPUs are, from /proc/stat: background work (the index, detection)
 * uses it to keep out of a burst (journal/tail.c).
 */
#ifndef SANDGATE_COMMON_CPULOAD_H
#define SANDGATE_COMMON_CPULOAD_H

#include <stddef.h>
#include <stdint.h>

/* The aggregate "cpu" line: time of all CPUs, in USER_HZ ticks. */
struct cpu_sample {
	uint64_t idle;    /* idle + iowait */
	uint64_t total;   /* user .. steal */
};

/*
 * Parses the aggregate "cpu " line at the start of /proc/stat's text (len bytes, not
 * necessarily terminated). 0, or -EINVAL when it is not there or not numbers.
 */
int cpu_sample_parse(const char *text, size_t len, struct cpu_sample *out);

/* Reads /proc/stat. 0, -EINVAL (unparsable), or -errno. */
int cpu_sample_read(struct cpu_sample *out);

/*
 * Percent of the time from a to b the CPUs were idle, own_ticks (the caller's own time
 * in that window) counted as idle: what the rest of the host left over. -1 when no time
 * passed or the counters went backwards.
 */
int cpu_idle_pct(const struct cpu_sample *a, const struct cpu_sample *b, uint64_t own_ticks);

#endif
