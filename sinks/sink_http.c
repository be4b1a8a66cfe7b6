/* The HTTP sinks' bodies (sinks/sink.h): Splunk HEC events and OTLP/HTTP JSON logs. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "journal/envelope.h"
#include "sinks/sink.h"

static bool is_warning(const struct line_envelope *e)
{
	return (e->event_len == 5 && memcmp(e->event, "alert", 5) == 0) ||
	       (e->event_len == 11 && memcmp(e->event, "sensor.loss", 11) == 0);
}

int sink_hec_event(struct buf *b, const char *host, const char *line, size_t len,
		   const char *msg, size_t msg_len, bool ocsf)
{
	struct line_envelope env;
	int64_t us;

	if (line_envelope_parse(line, len, &env) || line_ts_parse(env.ts, 27, &us))
		return -EINVAL;
	buf_printf(b, "{\"time\":%" PRId64 ".%06" PRId64 ",\"host\":", us / 1000000,
		   us % 1000000);
	buf_put_json_str(b, host, strlen(host));
	buf_printf(b, ",\"source\":\"sandgate\",\"sourcetype\":\"%s\",\"event\":",
		   ocsf ? "sandgate:ocsf" : "sandgate:journal");
	/* Both are JSON objects we produced: embedded as they are, not re-encoded. */
	buf_put(b, msg, msg_len);
	buf_putc(b, '}');
	return b->oom ? -ENOMEM : 0;
}

int sink_otlp_record(struct buf *b, const char *line, size_t len, const char *msg,
		     size_t msg_len, bool first)
{
	struct line_envelope env;
	int64_t us;
	bool warn;

	if (line_envelope_parse(line, len, &env) || line_ts_parse(env.ts, 27, &us))
		return -EINVAL;
	warn = is_warning(&env);
	if (!first)
		buf_putc(b, ',');
	buf_printf(b, "{\"timeUnixNano\":\"%" PRId64 "000\",\"severityNumber\":%d,"
		   "\"severityText\":\"%s\",\"body\":{\"stringValue\":", us, warn ? 13 : 9,
		   warn ? "WARN" : "INFO");
	buf_put_json_str(b, msg, msg_len);
	buf_puts(b, "},\"attributes\":[{\"key\":\"event\",\"value\":{\"stringValue\":");
	buf_put_json_str(b, env.event, env.event_len);
	buf_printf(b, "}},{\"key\":\"seq\",\"value\":{\"intValue\":\"%" PRIu64 "\"}}]}",
		   env.seq);
	return b->oom ? -ENOMEM : 0;
}

void sink_otlp_wrap(struct buf *out, const char *host, const char *records, size_t len)
{
	buf_puts(out, "{\"resourceLogs\":[{\"resource\":{\"attributes\":["
		      "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"sandgate\"}},"
		      "{\"key\":\"host.name\",\"value\":{\"stringValue\":");
	buf_put_json_str(out, host, strlen(host));
	buf_puts(out, "}}]},\"scopeLogs\":[{\"scope\":{\"name\":\"sandgate.journal\"},"
		      "\"logRecords\":[");
	buf_put(out, records, len);
	buf_puts(out, "]}]}]}");
}
