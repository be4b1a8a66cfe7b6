/* Registry files are read back at start: a damaged one must be refused, not trusted. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "attribution/attribution.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *o = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	struct session *s = NULL;

	if (o && session_from_json(o, &s) == 0) {
		json_t *back = session_to_json(s);

		json_decref(back);
		session_free(s);
	}
	json_decref(o);
	return 0;
}
