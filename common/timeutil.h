/* Wall-clock formatting and kernel-clock conversion for event timestamps. */
#ifndef SANDGATE_COMMON_TIMEUTIL_H
#define SANDGATE_COMMON_TIMEUTIL_H

#include <stdint.h>
#include <time.h>

#define RFC3339_LEN 27   /* 2026-06-29T10:04:00.123456Z */

/* Formats ts as RFC 3339 UTC with microseconds into out (RFC3339_LEN + 1 bytes). */
void time_format_rfc3339(const struct timespec *ts, char out[RFC3339_LEN + 1]);

/*
 * Parses RFC 3339 ("2026-06-29T10:04:00Z", optional fraction, Z or ±hh:mm offset) or a
 * relative time before now ("-15m", "-2h", "-30s", "-7d"). Returns 0 or -EINVAL.
 */
int time_parse(const char *s, const struct timespec *now, struct timespec *out);

/*
 * Converts a CLOCK_MONOTONIC reading in nanoseconds (the proc connector's and most
 * netlink timestamps) to wall time, using an offset sampled now with the narrowest of
 * a few clock_gettime pairs. Wall-clock steps after the sample are not reflected.
 */
void time_mono_to_real(uint64_t mono_ns, struct timespec *out);
/* The same for CLOCK_BOOTTIME readings (they include time spent suspended). */
void time_boot_to_real(uint64_t boot_ns, struct timespec *out);

uint64_t time_mono_ns(void);
/* CLOCK_MONOTONIC in ms and µs, for deadlines and durations; CLOCK_REALTIME in µs. */
int64_t time_mono_ms(void);
int64_t time_mono_us(void);
int64_t time_wall_us(void);
int64_t time_ns_diff(const struct timespec *a, const struct timespec *b);   /* a - b */

#endif
