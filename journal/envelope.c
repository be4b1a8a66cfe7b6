/* The one reader of journal lines (journal/envelope.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "common/hex.h"
#include "journal/envelope.h"

#define TS_AT 7                              /* {"ts":" */
#define SEQ_AT (TS_AT + LINE_TS_LEN + 8)     /* ","seq": */

static const char prev_lit[] = ",\"prev\":\"";
static const char event_lit[] = "\",\"event\":\"";

/* The head up to the seq's last digit: *end is the byte after it. */
static int read_head(const char *line, size_t len, uint64_t *seq, size_t *end)
{
	size_t p = SEQ_AT, digits = 0;
	uint64_t v = 0;

	if (len < SEQ_AT + 1 || memcmp(line, "{\"ts\":\"", TS_AT) != 0 ||
	    memcmp(line + TS_AT + LINE_TS_LEN, "\",\"seq\":", 8) != 0)
		return -EINVAL;
	for (; p < len && line[p] >= '0' && line[p] <= '9'; p++) {
		if (++digits > 19)
			return -EINVAL;
		v = v * 10 + (uint64_t)(line[p] - '0');
	}
	if (!digits)
		return -EINVAL;
	*seq = v;
	*end = p;
	return 0;
}

int line_envelope_seq(const char *line, size_t len, uint64_t *seq)
{
	size_t end;

	return read_head(line, len, seq, &end);
}

int line_envelope_parse(const char *line, size_t len, struct line_envelope *env)
{
	size_t p, start;

	if (read_head(line, len, &env->seq, &p) < 0)
		return -EINVAL;
	if (len - p < sizeof(prev_lit) - 1 + 64 + sizeof(event_lit) - 1 ||
	    memcmp(line + p, prev_lit, sizeof(prev_lit) - 1) != 0)
		return -EINVAL;
	env->ts = line + TS_AT;
	env->prev = line + p + sizeof(prev_lit) - 1;
	p += sizeof(prev_lit) - 1 + 64;
	if (memcmp(line + p, event_lit, sizeof(event_lit) - 1) != 0)
		return -EINVAL;
	start = p + sizeof(event_lit) - 1;
	for (p = start; p < len && line[p] != '"' && line[p] != '\\'; p++)
		;
	if (p >= len || line[p] != '"' || p == start)
		return -EINVAL;
	env->event = line + start;
	env->event_len = p - start;
	return 0;
}

/* "2026-06-29T10:04:00.123456Z": digits where the template has '0'. */
static bool ts_shape(const char *s)
{
	static const char tmpl[] = "0000-00-00T00:00:00.000000Z";
	size_t i;

	for (i = 0; i < sizeof(tmpl) - 1; i++)
		if (tmpl[i] == '0' ? (s[i] < '0' || s[i] > '9') : s[i] != tmpl[i])
			return false;
	return true;
}

/* Decimal at *p (no sign, no leading zero); advances *p. */
static int parse_seq(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9' || (*s == '0' && s + 1 < end && s[1] >= '0' &&
						  s[1] <= '9'))
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	*p = s;
	return 0;
}

static bool event_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
	       c == '-';
}

#define LIT(p, end, s) ((size_t)((end) - (p)) >= sizeof(s) - 1 && \
			memcmp((p), (s), sizeof(s) - 1) == 0 ? ((p) += sizeof(s) - 1, 1) : 0)

int line_envelope_parse_strict(const char *line, size_t len, struct line_envelope *env)
{
	const char *p = line, *end = line + len;

	if (len < 2 || line[len - 1] != '}' || !LIT(p, end, "{\"ts\":\"") ||
	    end - p < LINE_TS_LEN || !ts_shape(p))
		return -EINVAL;
	env->ts = p;
	p += LINE_TS_LEN;
	if (!LIT(p, end, "\",\"seq\":") || parse_seq(&p, end, &env->seq) < 0 ||
	    !LIT(p, end, ",\"prev\":\"") || end - p < 2 * MERKLE_HASH_LEN ||
	    hex_decode(p, 2 * MERKLE_HASH_LEN, env->prev_hash, MERKLE_HASH_LEN) < 0)
		return -EINVAL;
	env->prev = p;
	p += 2 * MERKLE_HASH_LEN;
	if (!LIT(p, end, "\",\"event\":\""))
		return -EINVAL;
	env->event = p;
	while (p < end && event_char(*p))
		p++;
	env->event_len = (size_t)(p - env->event);
	if (env->event_len == 0 || env->event_len >= LINE_EVENT_MAX || end - p < 2 ||
	    p[0] != '"' || (p[1] != ',' && p[1] != '}'))
		return -EINVAL;
	return 0;
}

static int digits(const char *s, size_t n, int *out)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int line_ts_parse(const char *s, size_t len, int64_t *us)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, se, frac;
	time_t t;

	if (len != 27 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
	    s[16] != ':' || s[19] != '.' || s[26] != 'Z')
		return -EINVAL;
	if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) ||
	    digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &se) ||
	    digits(s + 20, 6, &frac))
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	t = timegm(&tm);
	*us = (int64_t)t * 1000000 + frac;
	return 0;
}

int line_json_load(const char *line, size_t len, json_t **out)
{
	json_error_t jerr;
	json_t *o = json_loadb(line, len, JSON_ALLOW_NUL, &jerr);

	if (!o)
		return json_error_code(&jerr) == json_error_out_of_memory ? -ENOMEM : -EINVAL;
	if (!json_is_object(o)) {
		json_decref(o);
		return -EINVAL;
	}
	*out = o;
	return 0;
}
