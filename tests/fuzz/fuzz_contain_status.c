/* /proc/PID/status and /proc/PID/stat bytes: the daemon parses both for any process a
 * session runs (its Name and comm are the process's own choice). */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "contain/contain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct contain_status st;
	char why[128];
	pid_t ppid;

	if (contain_parse_status((const char *)data, size, &st) == 0)
		contain_status_check(&st, contain_keep_default(), 40, why, sizeof(why));
	contain_stat_ppid((const char *)data, size, &ppid);
	return 0;
}
