/* Fuzzes the journal line envelope parser the verifier runs on every line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct verify_envelope env;
	/* An exact-size copy, so ASan sees any read past the line. */
	char *line = malloc(size ? size : 1);

	if (!line)
		return 0;
	memcpy(line, data, size);
	if (verify_parse_envelope(line, size, &env) == 0 &&
	    (env.event < line || env.event + env.event_len > line + size))
		abort();
	free(line);
	return 0;
}
