/*
 * The resource limits parsers: memory.events, cpu.stat, pids.events (v1 and v2) and
 * /dev/kmsg OOM records. A sandbox shapes them (child cgroup names, task names).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attribution/attribution.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct cg_mem_counters m;
	struct cg_cpu_counters c;
	struct kmsg_oom k;
	uint64_t v;

	cg_parse_memory_events(buf, size, &m);
	cg_parse_cpu_stat(buf, size, &c);
	cg_parse_pids_events(buf, size, &v);
	cg_parse_value(buf, size, &v);
	if (kmsg_parse_oom(buf, size, &k) == 0) {
		/* what the watcher relies on: terminated strings, a real pid */
		if (strlen(k.memcg) >= sizeof(k.memcg) || strlen(k.comm) >= sizeof(k.comm) ||
		    k.pid <= 0)
			__builtin_trap();
	}
	return 0;
}
