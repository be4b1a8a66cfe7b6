/* Audit record text (NETLINK_AUDIT payloads; EXECVE arguments are a process's choice):
 * the input is split at newlines into records of one event, fed to the parser and to
 * the joiner (sensors/kaudit/auditjoin.c; the type from an auditd "type=NAME" prefix,
 * else from the first byte). */
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "sensors/kaudit/auditjoin.h"
#include "sensors/kaudit/auditrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint16_t type_of(const char *s, size_t len)
{
	static const struct { const char *n; uint16_t t; } map[] = {
		{ "type=SYSCALL ", AUDITREC_SYSCALL }, { "type=EXECVE ", AUDITREC_EXECVE },
		{ "type=CWD ", AUDITREC_CWD }, { "type=EOE ", AUDITREC_EOE },
	};
	static const uint16_t any[] = { AUDITREC_SYSCALL, AUDITREC_EXECVE, AUDITREC_CWD,
					AUDITREC_EOE };

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (len >= strlen(map[i].n) && memcmp(s, map[i].n, strlen(map[i].n)) == 0)
			return map[i].t;
	return len ? any[(unsigned char)s[0] % 4] : 0;
}

static struct auditjoin *join;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct auditjoin_ev *ev;
	const char *s = (const char *)data, *nl;
	struct auditrec_execve e;
	struct auditrec_kv kv;
	uint64_t serial, ms;
	size_t body, off, len;

	if (!join && !(join = malloc(sizeof(*join))))
		return 0;
	auditjoin_init(join);
	auditrec_execve_init(&e, 4096);
	while (size > 0) {
		nl = memchr(s, '\n', size);
		len = nl ? (size_t)(nl - s) : size;
		struct auditjoin_cc cc;

		(void)auditjoin_config(s, len, &cc);
		ev = auditjoin_feed(join, type_of(s, len), s, len);
		if (ev) {
			(void)auditrec_execve_complete(&ev->args);
			auditjoin_done(ev);
		}
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
	auditjoin_free(join);
	return 0;
}
