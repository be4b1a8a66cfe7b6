/* Pure pieces of the sinks (sinks/sink.h): envelope, filters, RFC 5424 framing. */
#include <errno.h>
#include <string.h>

#include "journal/envelope.h"
#include "sinks/sink.h"

bool sink_filter_pass(char *const *filters, size_t n, const char *event, size_t event_len)
{
	static const char cp[] = "journal.checkpoint";

	if (n == 0 || (event_len == sizeof(cp) - 1 && memcmp(event, cp, event_len) == 0))
		return true;
	for (size_t i = 0; i < n; i++) {
		size_t fl = strlen(filters[i]);

		if (fl >= 1 && filters[i][fl - 1] == '*') {
			if (event_len >= fl - 1 && memcmp(event, filters[i], fl - 1) == 0)
				return true;
		} else if (fl == event_len && memcmp(event, filters[i], fl) == 0) {
			return true;
		}
	}
	return false;
}

/* The level of each type (1 minimal, 2 summary, 3 full); a prefix ends in '.'. */
static const struct {
	const char *event;
	int level;
} levels[] = {
	{ "alert", 1 }, { "sensor.loss", 1 }, { "session.", 1 }, { "package.install", 1 },
	{ "resource.limit", 1 }, { "control.denied", 1 }, { "daemon.", 1 },
	{ "gateway.start", 1 }, { "retention.", 1 }, { "journal.open", 1 },
	{ "journal.segment", 1 }, { "journal.recovery", 1 }, { "journal.disk_full", 1 },
	{ "sink.", 1 },   /* sink.stalled / sink.recovered: the other receivers must see it */
	{ "process.", 2 }, { "file.", 2 }, { "net.connect", 2 }, { "net.dns", 2 },
	{ "tool.invoke", 2 },
	{ "net.flow", 3 }, { "journal.heartbeat", 3 },
};

static int level_of(const char *event, size_t len)
{
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		size_t n = strlen(levels[i].event);
		bool prefix = levels[i].event[n - 1] == '.';

		if ((prefix ? len > n : len == n) && memcmp(event, levels[i].event, n) == 0)
			return levels[i].level;
	}
	return 2;
}

bool sink_verbosity_pass(enum sink_verbosity v, const char *event, size_t event_len,
			 const char *line, size_t len)
{
	static const char cp[] = "journal.checkpoint", blocked[] = "\"verdict\":\"blocked\"";
	int max = v == SINK_VERBOSITY_MINIMAL ? 1 : v == SINK_VERBOSITY_SUMMARY ? 2 : 3;

	if (max == 3 || (event_len == sizeof(cp) - 1 && memcmp(event, cp, event_len) == 0))
		return true;
	if (level_of(event, event_len) <= max)
		return true;
	/* Blocked traffic is what a SOC wants first. Inside a JSON string every '"' is
	 * escaped, so these bytes can only be the gateway's own "verdict" key. */
	return event_len > 4 && memcmp(event, "net.", 4) == 0 &&
	       memmem(line, len, blocked, sizeof(blocked) - 1) != NULL;
}

/* PRINTUSASCII (33..126) only, at most max bytes; "-" (NILVALUE) when empty. */
static void put_token(struct buf *b, const char *s, size_t n, size_t max)
{
	size_t put = 0;

	for (size_t i = 0; i < n && put < max; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 33 && c <= 126) {
			buf_putc(b, (char)c);
			put++;
		}
	}
	if (!put)
		buf_putc(b, '-');
}

static bool is_event(const struct line_envelope *e, const char *name)
{
	return e->event_len == strlen(name) && memcmp(e->event, name, e->event_len) == 0;
}

int sink_syslog_frame(struct buf *b, const char *host, const char *line, size_t len,
		      const char *msg_text, size_t msg_len)
{
	struct line_envelope env;
	struct buf msg;
	bool oom;
	int pri;

	if (line_envelope_parse(line, len, &env))
		return -EINVAL;
	/* local0 (16): warning (4) for what a SOC should look at first, info (6) else. */
	pri = 16 * 8 + (is_event(&env, "alert") || is_event(&env, "sensor.loss") ? 4 : 6);
	buf_init(&msg);
	buf_printf(&msg, "<%d>1 ", pri);
	buf_put(&msg, env.ts, 27);
	buf_putc(&msg, ' ');
	put_token(&msg, host, strlen(host), 255);
	buf_puts(&msg, " sandgate - ");
	put_token(&msg, env.event, env.event_len, 32);
	buf_puts(&msg, " - ");
	buf_put(&msg, msg_text, msg_len);
	if (!msg.oom) {
		buf_put_u64(b, msg.len);
		buf_putc(b, ' ');
		buf_put(b, msg.data, msg.len);
	}
	oom = msg.oom || b->oom;
	buf_free(&msg);
	return oom ? -ENOMEM : 0;
}
