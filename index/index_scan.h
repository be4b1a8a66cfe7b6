/*
 * A one-pass JSON scanner for the index (index/index_extract.c): it checks that a line is
 * one JSON object exactly as jansson's loader does with the flags the journal's readers
 * use (journal/envelope.h line_json_load: JSON_ALLOW_NUL, the last of repeated keys
 * winning, depth ≤ JSON_PARSER_MAX_DEPTH, UTF-8 checked), and reports where the values of
 * a few top-level keys are, without building a tree or allocating. The index needs about
 * a dozen fields of a line; a full parse cost it a third of its time.
 * Pure; the line may be hostile (tests/fuzz/fuzz_index_extract.c compares it with jansson).
 */
#ifndef SANDGATE_INDEX_INDEX_SCAN_H
#define SANDGATE_INDEX_INDEX_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum scan_kind { SCAN_ABSENT = 0, SCAN_STRING, SCAN_INT, SCAN_OTHER };

/* One wanted key's value (the last occurrence). A string is [at, end) of the line,
 * between its quotes, still escaped when esc is set. */
struct scan_val {
	enum scan_kind kind;
	bool esc;
	size_t at, end;
	int64_t i;
};

/*
 * Scans line[0..len) as one JSON object; for each top-level key equal to keys[k]
 * (n_keys of them, plain ASCII without escapes), vals[k] gets its value.
 * Returns 0, or -EINVAL when jansson would refuse the line or it is not an object.
 */
int index_scan(const char *line, size_t len, const char *const *keys, size_t n_keys,
	       struct scan_val *vals);

/*
 * index_scan's answer for a line from its shape (journal/shape.h), without reading the
 * JSON: the same vals for a line the shape describes. Returns 0, or -EINVAL when the
 * shape does not fit the line (the caller scans it instead).
 */
struct shape;
int index_scan_shaped(const char *line, size_t len, const struct shape *shape,
		      const char *const *keys, size_t n_keys, struct scan_val *vals);

/*
 * Writes the string value v (SCAN_STRING) of line decoded into out, up to its first NUL
 * (a "\u0000" escape), and a NUL. out must hold v->end - v->at + 1 bytes (decoding
 * never lengthens). Returns the bytes written before the NUL.
 */
size_t index_scan_decode(const char *line, const struct scan_val *v, char *out);

#endif
