/*
 * A strict check of one event line (tests only): exactly one JSON object, nothing after
 * it, and no object at any depth with a key twice (jansson compares decoded keys, so
 * "a" and "\u0061" are the same key).
 */
#ifndef SANDGATE_TESTS_STRICT_JSON_H
#define SANDGATE_TESTS_STRICT_JSON_H

#include <stdio.h>
#include <jansson.h>

/* 0 when line[0..len) is one object with unique keys; else -1 and why in err. */
static inline int strict_json_object(const char *line, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	int ret = 0;

	if (!o) {
		snprintf(err, errlen, "%s at %d", je.text, je.position);
		ret = -1;
	} else if (!json_is_object(o)) {
		snprintf(err, errlen, "not an object");
		ret = -1;
	}
	json_decref(o);
	return ret;
}

#endif
