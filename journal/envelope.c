/* The fixed-place envelope reader (journal/envelope.h). */
#include <errno.h>
#include <string.h>

#include "journal/envelope.h"

#define TS_AT 7                        /* {"ts":" */
#define SEQ_AT (TS_AT + 27 + 8)        /* ","seq": */

int line_envelope_parse(const char *line, size_t len, struct line_envelope *env)
{
	static const char prev[] = ",\"prev\":\"";
	static const char ev[] = "\",\"event\":\"";
	size_t p = SEQ_AT, digits = 0, start;

	if (len < SEQ_AT + 1 || memcmp(line, "{\"ts\":\"", TS_AT) != 0 ||
	    memcmp(line + TS_AT + 27, "\",\"seq\":", 8) != 0)
		return -EINVAL;
	env->ts = line + TS_AT;
	env->seq = 0;
	for (; p < len && line[p] >= '0' && line[p] <= '9' && digits < 19; p++, digits++)
		env->seq = env->seq * 10 + (uint64_t)(line[p] - '0');
	if (!digits || len - p < sizeof(prev) - 1 + 64 + sizeof(ev) - 1 ||
	    memcmp(line + p, prev, sizeof(prev) - 1) != 0)
		return -EINVAL;
	p += sizeof(prev) - 1 + 64;
	if (memcmp(line + p, ev, sizeof(ev) - 1) != 0)
		return -EINVAL;
	start = p + sizeof(ev) - 1;
	for (p = start; p < len && line[p] != '"' && line[p] != '\\'; p++)
		;
	if (p >= len || line[p] != '"' || p == start)
		return -EINVAL;
	env->event = line + start;
	env->event_len = p - start;
	return 0;
}
