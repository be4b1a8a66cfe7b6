/* Pure pieces of the sinks (journal/sink.h): envelope, filters, RFC 5424 framing. */
#include <errno.h>
#include <string.h>

#include "journal/envelope.h"
#include "journal/sink.h"

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
