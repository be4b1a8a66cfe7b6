/* Audit record text (NETLINK_AUDIT payloads; EXECVE arguments are a process's choice):
 * the input is split at newlines into records of one event. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "audit/auditrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *nl;
	struct auditrec_execve e;
	struct auditrec_kv kv;
	uint64_t serial, ms;
	size_t body, off, len;

	auditrec_execve_init(&e, 4096);
	while (size > 0) {
		nl = memchr(s, '\n', size);
		len = nl ? (size_t)(nl - s) : size;
		if (auditrec_head(s, len, &serial, &ms, &body) == 0) {
			off = body;
			while (auditrec_next(s, len, &off, &kv) > 0)
				;
			(void)auditrec_execve_feed(&e, s + body, len - body);
		}
		if (!nl)
			break;
		size -= len + 1;
		s = nl + 1;
	}
	(void)auditrec_execve_complete(&e);
	auditrec_execve_free(&e);
	return 0;
}
