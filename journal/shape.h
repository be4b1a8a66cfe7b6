/*
 * A line's shape: where each value of an event's JSON line is, recorded by the builder
 * (journal/event.c) as it writes the value, so that the journal's own readers (detection,
 * the index) take the fields without parsing the text again (issue "Recording cost",
 * item 1). The JSON line stays the journal's truth and what is hashed: a shape is a
 * description of those bytes, handed beside them in memory (journal/handoff.h), and a
 * reader uses it only for a line byte for byte equal to the one the writer described.
 *
 * One token per value, in document order: an object's member carries its key's length
 * (the key is written just before the value: "key":value), an array's element 0. A
 * token holds no position: values follow one another as JSON writes them (a ',', the
 * key, the value), from the line's tail, the '"' that closes the envelope's prev (at a
 * fixed place: journal/envelope.h), so a shape built before the writer chose the
 * line's seq fits it, and a reader finds each value where the one before it ends. A
 * string's token spans its quotes; a container's spans its brackets and its members
 * follow it, one depth deeper. 8 bytes a value.
 */
#ifndef SANDGATE_JOURNAL_SHAPE_H
#define SANDGATE_JOURNAL_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

enum shape_kind {
	SHAPE_STRING = 1,
	SHAPE_NUMBER,       /* an integer or a real, as its text reads (jansson's rule) */
	SHAPE_TRUE,
	SHAPE_FALSE,
	SHAPE_NULL,
	SHAPE_OBJECT,
	SHAPE_ARRAY,
};

#define SHAPE_ESC 0x80      /* kind flag: the string's text is longer than its bytes
			       and quotes: it may hold a '\\' escape (none: copied as is) */
#define SHAPE_KIND(t) ((enum shape_kind)((t)->kind & 0x7f))
#define SHAPE_MAX_TOKENS 4096   /* a larger event goes without a shape (readers parse) */

struct shape_tok {
	uint32_t len;       /* the value's bytes, quotes and brackets included */
	uint16_t key_len;
	uint8_t kind;       /* enum shape_kind, | SHAPE_ESC */
	uint8_t depth;      /* 0: a member of the line's object */
};

/* A reader's copy of one line's tokens (journal/handoff.h fills it). Start zeroed. */
struct shape {
	struct shape_tok *tok;
	size_t n, cap;
};

void shape_free(struct shape *s);

/*
 * The whole line (len bytes, no '\n') as a JSON object, built from its shape without a
 * JSON parse: equal (json_equal, key order included) to line_json_load of the same line.
 * Returns 0 with a new reference in *out, -EINVAL when the shape does not describe the
 * line (a bound crossed, a value not as its kind says: the caller parses instead), or
 * -ENOMEM.
 */
int shape_to_json(const char *line, size_t len, const struct shape *s, json_t **out);

/* Where the line's tail starts (see above), or -EINVAL: its envelope is not in place. */
int shape_tail(const char *line, size_t len, size_t *tail);

/*
 * The decoded bytes of the string at line[at], len bytes with its quotes, into out,
 * which holds len bytes. Returns the length, or -EINVAL for an escape the journal's
 * encoder does not write (common/buf.h: \" \\ \n \r \t \b \f and \u00XX).
 */
int shape_string(const char *line, size_t at, size_t len, bool esc, char *out);

/*
 * An integer token's value as jansson reads it: false for a real (a '.', 'e' or 'E'),
 * and for an integer outside int64 (which jansson refuses with the whole line).
 */
bool shape_int(const char *p, size_t len, int64_t *v);

#endif
