/*
 * The one reader of journal lines (docs/journal-format.md): the envelope
 * {"ts":"<27>","seq":N,"prev":"<64 hex>","event":"TYPE",...} read at its fixed places
 * without a JSON parser, and the whole line as a JSON object for the fields.
 * The envelope read here is authoritative for seq, ts and event: a line written before
 * 2026-12 may repeat an envelope key in its body (package.install's and file.mount's
 * "source", now "registry" and "device"), and a JSON parser keeps the last one.
 *
 * Three depths, each for its readers:
 *   line_envelope_seq           the seq only (following segments, finding a seq);
 *   line_envelope_parse         ts, seq, prev and event at their places (sinks, index,
 *                               OCSF, retention, recovery of a torn tail);
 *   line_envelope_parse_strict  every byte of the envelope as the writer writes it
 *                               (the verifier, and what the index reads back).
 * All pure, no allocation; the line may be hostile.
 */
#ifndef SANDGATE_JOURNAL_ENVELOPE_H
#define SANDGATE_JOURNAL_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "journal/merkle.h"

#define LINE_TS_LEN 27      /* "2026-06-29T10:04:00.123456Z" */
#define LINE_EVENT_MAX 48   /* the strict reader's bound on an event name, NUL included */

struct line_envelope {
	const char *ts;                   /* LINE_TS_LEN bytes, inside the line */
	uint64_t seq;
	const char *prev;                 /* 64 bytes inside the line: hex digits only once
					     the strict reader has checked them */
	const char *event;                /* inside the line, not NUL-terminated */
	size_t event_len;
	uint8_t prev_hash[MERKLE_HASH_LEN];   /* prev decoded: by the strict reader only */
};

/*
 * The seq of line[0..len) ({"ts":"<27>","seq":N...: at most 19 digits, nothing checked
 * after them). Returns 0 or -EINVAL.
 */
int line_envelope_seq(const char *line, size_t len, uint64_t *seq);

/*
 * Reads the envelope of one line (len bytes, no '\n') at its fixed places: ts is not
 * checked for shape nor prev for hex, the event name ends at the first '"' (and has no
 * '\\'). Fills all but prev_hash. Returns 0 or -EINVAL.
 */
int line_envelope_parse(const char *line, size_t len, struct line_envelope *env);

/*
 * Reads the envelope as the verifier checks it: ts of the RFC 3339 shape above, seq in
 * canonical decimal (no leading zero, no overflow), prev 64 lowercase hex digits
 * (decoded into prev_hash), an event name of [a-z0-9._-] shorter than LINE_EVENT_MAX
 * followed by '"' and ',' or '}', and a line that ends with '}'. Returns 0 or -EINVAL.
 */
int line_envelope_parse_strict(const char *line, size_t len, struct line_envelope *env);

/* Parses the envelope's ts, "YYYY-MM-DDTHH:MM:SS.ffffffZ", into microseconds since the
 * epoch. 0 or -EINVAL. */
int line_ts_parse(const char *s, size_t len, int64_t *us);

/*
 * The whole line as a JSON object, as the readers of fields take it: "\u0000" allowed
 * (the journal escapes NUL bytes that way) and a repeated key accepted, the last one
 * winning (old lines, above). On 0, *out holds a new reference to an object. Returns
 * 0, -EINVAL (not JSON, or not an object) or -ENOMEM. The verifier reads checkpoint
 * lines its own stricter way (duplicates refused).
 */
int line_json_load(const char *line, size_t len, json_t **out);

#endif
