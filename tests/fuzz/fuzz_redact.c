/* Redaction of tool/model summaries: arbitrary text from the orchestrator. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attribution/attribution.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool cut;
	size_t n;
	char *out = redact_summary((const char *)data, size, REDACT_SUMMARY_MAX, &cut, &n);

	/* The output is never longer than the limit. */
	if (out && strlen(out) > REDACT_SUMMARY_MAX)
		abort();
	free(out);
	return 0;
}
