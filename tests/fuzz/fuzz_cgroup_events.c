/* cgroup.events, memory.events, memory.oom_control: flat "key value" files. */
#include <stddef.h>
#include <stdint.h>

#include "attribution/attribution.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "populated", "frozen", "oom_kill", "oom", "max" };
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cg_parse_kv((const char *)data, size, keys[i], &v);
	return 0;
}
