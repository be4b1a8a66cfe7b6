/* libFuzzer target: the whole config loader on arbitrary bytes (tests/CMakeLists.txt). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "daemon/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	char line[1024];
	int ret = config_load_buffer("fuzz", (const char *)data, size, &c, &errs);

	/* A config and errors are exclusive: success means no error was recorded. */
	if ((ret == 0) != (c != NULL) || (ret == 0 && errs.n != 0))
		abort();
	if (c && !config_policy(c, NULL))
		abort();
	for (size_t i = 0; i < config_errors_count(&errs); i++)
		config_error_format(config_errors_at(&errs, i), line, sizeof(line));
	config_free(c);
	config_errors_free(&errs);
	return 0;
}
