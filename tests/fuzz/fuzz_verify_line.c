/* Fuzzes the strict journal line envelope reader (journal/envelope.h) the verifier runs
 * on every line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "journal/envelope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct line_envelope env;
	/* An exact-size copy, so ASan sees any read past the line. */
	char *line = malloc(size ? size : 1);

	if (!line)
		return 0;
	memcpy(line, data, size);
	if (line_envelope_parse_strict(line, size, &env) == 0 &&
	    (env.event < line || env.event + env.event_len > line + size ||
	     env.prev < line || env.prev + 64 > line + size))
		abort();
	free(line);
	return 0;
}
