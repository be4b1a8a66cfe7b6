#include "common/timeutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every journal line is stamped, so the calendar part is formatted once per second per
 * thread and only the microseconds are written per call.
 */
void time_format_rfc3339(const struct timespec *ts, char out[RFC3339_LEN + 1])
{
	static _Thread_local time_t cached_sec = -1;
	static _Thread_local char cached[RFC3339_LEN + 1];
	long usec = (ts->tv_nsec / 1000) % 1000000;
	int i;

	if (ts->tv_sec != cached_sec) {
		char tmp[64];
		struct tm tm;
		time_t sec = ts->tv_sec;

		gmtime_r(&sec, &tm);
		snprintf(tmp, sizeof(tmp), "%04d-%02d-%02dT%02d:%02d:%02d.000000Z",
			 (tm.tm_year + 1900) % 10000, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			 tm.tm_min, tm.tm_sec);
		memcpy(cached, tmp, RFC3339_LEN);
		cached[RFC3339_LEN] = '\0';
		cached_sec = ts->tv_sec;
	}
	memcpy(out, cached, RFC3339_LEN + 1);
	for (i = 25; i >= 20; i--) {
		out[i] = (char)('0' + usec % 10);
		usec /= 10;
	}
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

int64_t time_ns_diff(const struct timespec *a, const struct timespec *b)
{
	return ts_ns(a) - ts_ns(b);
}

uint64_t time_mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)ts_ns(&t);
}

int64_t time_mono_ms(void)
{
	return (int64_t)(time_mono_ns() / 1000000);
}

int64_t time_mono_us(void)
{
	return (int64_t)(time_mono_ns() / 1000);
}

int64_t time_wall_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return ts_ns(&t) / 1000;
}

/* realtime - clk, from the tightest of several bracketing samples. */
static int64_t clock_offset(clockid_t clk)
{
	int64_t best_gap = INT64_MAX, offset = 0;
	struct timespec a, r, b;
	int i;

	for (i = 0; i < 5; i++) {
		clock_gettime(clk, &a);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(clk, &b);
		if (ts_ns(&b) - ts_ns(&a) < best_gap) {
			best_gap = ts_ns(&b) - ts_ns(&a);
			offset = ts_ns(&r) - (ts_ns(&a) + best_gap / 2);
		}
	}
	return offset;
}

static void ns_to_ts(int64_t ns, struct timespec *out)
{
	out->tv_sec = ns / 1000000000;
	out->tv_nsec = ns % 1000000000;
	if (out->tv_nsec < 0) {
		out->tv_nsec += 1000000000;
		out->tv_sec--;
	}
}

void time_mono_to_real(uint64_t mono_ns, struct timespec *out)
{
	ns_to_ts((int64_t)mono_ns + clock_offset(CLOCK_MONOTONIC), out);
}

void time_boot_to_real(uint64_t boot_ns, struct timespec *out)
{
	ns_to_ts((int64_t)boot_ns + clock_offset(CLOCK_BOOTTIME), out);
}

static int parse_digits(const char **p, int n, int *out)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return -EINVAL;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static int parse_relative(const char *s, const struct timespec *now, struct timespec *out)
{
	char *end;
	long long v;
	int64_t unit;

	errno = 0;
	v = strtoll(s + 1, &end, 10);
	if (errno || end == s + 1 || v < 0 || end[0] == '\0' || end[1] != '\0')
		return -EINVAL;
	switch (*end) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	default: return -EINVAL;
	}
	if (v > INT64_MAX / unit / 1000000000)
		return -EINVAL;
	ns_to_ts(ts_ns(now) - v * unit * 1000000000, out);
	return 0;
}

int time_parse(const char *s, const struct timespec *now, struct timespec *out)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	long nsec = 0, scale = 100000000;
	const char *p = s;
	struct tm tm;

	if (s[0] == '-')
		return parse_relative(s, now, out);
	if (parse_digits(&p, 4, &y) || expect(&p, '-') || parse_digits(&p, 2, &mo) ||
	    expect(&p, '-') || parse_digits(&p, 2, &d) || (*p != 'T' && *p != 't' && *p != ' '))
		return -EINVAL;
	p++;
	if (parse_digits(&p, 2, &h) || expect(&p, ':') || parse_digits(&p, 2, &mi) ||
	    expect(&p, ':') || parse_digits(&p, 2, &sec))
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			nsec += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '+' ? 1 : -1;
		p++;
		if (parse_digits(&p, 2, &oh) || expect(&p, ':') || parse_digits(&p, 2, &om))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 ||
	    oh > 23 || om > 59)
		return -EINVAL;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	out->tv_sec = timegm(&tm) - sign * (oh * 3600 + om * 60);
	out->tv_nsec = nsec;
	return 0;
}
