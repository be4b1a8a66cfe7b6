/*
 * The envelope of a journal line read at its fixed places (docs/journal-format.md:
 * {"ts":"<27>","seq":N,"prev":"<64 hex>","event":"TYPE",...}) without a JSON parser.
 * Authoritative for seq, ts and event: a line written before 2026-12 may repeat an
 * envelope key in its body (package.install's and file.mount's "source", now "registry"
 * and "device"), and a JSON parser keeps the last one.
 */
#ifndef SANDGATE_JOURNAL_ENVELOPE_H
#define SANDGATE_JOURNAL_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

struct line_envelope {
	const char *ts;                   /* 27 bytes, inside the line */
	uint64_t seq;
	const char *event;                /* inside the line, not NUL-terminated */
	size_t event_len;
};

/* Reads the envelope of one line (len bytes, no '\n'). Pure. Returns 0 or -EINVAL. */
int line_envelope_parse(const char *line, size_t len, struct line_envelope *env);

#endif
