/*
 * libFuzzer target: one journal line -> index row (index/index.h), and the envelope
 * syslog framing and OCSF rendering the sinks apply to the same bytes. Lines a sandbox influenced may
 * hold anything JSON allows; none of it may crash, leak or read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>

#include "journal/envelope.h"
#include "index/index.h"
#include "sinks/ocsf.h"
#include "sinks/sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct index_row row;
	struct line_envelope env;
	struct buf b;
	uint64_t seq;

	(void)index_extract((const char *)data, size, &row);
	index_row_free(&row);
	(void)line_envelope_parse((const char *)data, size, &env);
	(void)line_envelope_seq((const char *)data, size, &seq);
	buf_init(&b);
	(void)sink_syslog_frame(&b, "host", (const char *)data, size, "m", 1);
	buf_reset(&b);
	(void)ocsf_render(&b, (const char *)data, size);
	buf_free(&b);
	return 0;
}
