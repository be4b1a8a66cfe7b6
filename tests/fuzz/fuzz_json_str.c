/* Any bytes a sandbox can put in a field must encode to one valid JSON string. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf b;
	json_t *v;

	buf_init(&b);
	buf_put_json_str(&b, (const char *)data, size);
	if (b.oom)
		abort();
	if (memchr(b.data, '\n', b.len))
		abort();
	v = json_loadb(b.data, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (!v || !json_is_string(v))
		abort();
	json_decref(v);
	buf_free(&b);
	return 0;
}
