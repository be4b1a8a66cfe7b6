/* /proc/PID/stat and /proc/PID/cgroup bytes: the pid cache parses both for any pid. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attribution/attribution.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[256], id[SESSION_ID_MAX + 1];
	uint64_t start;

	proc_stat_starttime((const char *)data, size, &start);
	if (proc_cgroup_v2((const char *)data, size, out, sizeof(out)) == 0)
		session_id_from_cgpath(out, strnlen(out, sizeof(out)), "/sandgate", id, sizeof(id));
	session_id_from_cgpath((const char *)data, size, "/sandgate", id, sizeof(id));
	return 0;
}
