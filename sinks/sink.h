/*
 * Sinks: real-time copies of the journal for SIEMs and log shippers. Each sink follows
 * the segment files (journal/follow.h) from its own durable cursor
 * (STATE_DIR/sinks/NAME.cursor, replaced atomically), so a sink that was down catches up
 * from the journal: at-least-once, nothing lost, duplicates bounded by the lines sent
 * but not yet confirmed. Every journal.checkpoint line goes to every sink whatever its
 * filter, so the receiver holds the anchors that expose a cut-off tail.
 *
 * Kinds: file (appended, fdatasync'd before the cursor moves; for Vector or Fluent Bit
 * to tail), stdout, syslog over TCP (RFC 5424 messages, RFC 6587 octet counting) and
 * over TLS (RFC 5425: the same octet-counted messages in a TLS session), and
 * over HTTP with libcurl: Splunk HEC and OTLP/HTTP logs (JSON), where a 2xx answer to
 * the batch's POST is the receiver's acknowledgement.
 * TCP has no application acknowledgement: a batch is confirmed once the peer's TCP
 * has acknowledged every byte (SIOCOUTQ is 0) and confirm_ms has passed, so what a
 * receiver had read but not yet stored when it died is sent again.
 */
#ifndef SANDGATE_SINKS_SINK_H
#define SANDGATE_SINKS_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/buf.h"

enum sink_kind { SINK_FILE, SINK_STDOUT, SINK_SYSLOG_TCP, SINK_HEC, SINK_OTLP_HTTP,
		 SINK_SYSLOG_TLS };
enum sink_format { SINK_NATIVE, SINK_OCSF };   /* the journal's lines, or OCSF 1.8 */

/*
 * How much a sink sends (docs/investigation.md, "Verbosity"): each event type has a
 * level and a sink sends the lines at or below its own. Lines are never cut down (a
 * SIEM must be able to re-hash them), so verbosity chooses lines, not fields.
 * 0 (the zero value) is full.
 */
enum sink_verbosity {
	SINK_VERBOSITY_FULL = 0,      /* everything, with net.flow and journal.heartbeat */
	SINK_VERBOSITY_MINIMAL = 1,   /* alerts, losses, blocked traffic, lifecycle */
	SINK_VERBOSITY_SUMMARY = 2,   /* + what the sessions did: exec, files, names, tools */
};

struct sink_settings {
	const char *name;                 /* names the cursor file: [A-Za-z0-9_-]+ */
	enum sink_kind kind;
	enum sink_format format;
	const char *path;                 /* SINK_FILE */
	const struct sockaddr *addr;      /* SINK_SYSLOG_TCP, SINK_SYSLOG_TLS */
	socklen_t addr_len;
	const char *host;                 /* syslog HOSTNAME, HEC host, OTLP host.name */
	const char *url;                  /* SINK_HEC, SINK_OTLP_HTTP: where to POST */
	const char *token;                /* SINK_HEC: "Authorization: Splunk TOKEN" */
	/* TLS (syslog_tls; https URLs): the CAs the receiver's certificate must chain to
	 * (NULL: the system's), the name it must carry (NULL: the address connected to),
	 * and a client certificate and key (PEM; both or neither). */
	const char *ca_file, *server_name, *cert_file, *key_file;
	char *const *events;              /* event types, "x.*" = prefix; none: all */
	size_t n_events;
	enum sink_verbosity verbosity;    /* applies with events: a line must pass both */
	uint64_t retry_min_ms, retry_max_ms;
	uint64_t batch_lines;
	uint64_t confirm_ms;              /* syslog: hold before a sent batch is confirmed */
	/* A sink failing this long, or this many journal bytes behind, is stalled: it stops
	 * holding retention back and says so (sink.stalled); 0: that bound is off. */
	uint64_t stall_bytes, stall_ms;
};

/*
 * Whether a line of type event (event_len bytes) passes filters (n of them; "x.*"
 * matches by prefix "x."). No filters pass everything; journal.checkpoint always passes.
 */
bool sink_filter_pass(char *const *filters, size_t n, const char *event, size_t event_len);

/*
 * Whether a line of type event passes verbosity v. line (len bytes) is looked at only
 * for net.* lines, whose "verdict":"blocked" puts them at minimal. journal.checkpoint
 * always passes; a type not in the table is summary.
 */
bool sink_verbosity_pass(enum sink_verbosity v, const char *event, size_t event_len,
			 const char *line, size_t len);

/*
 * Appends one RFC 6587 octet-counted RFC 5424 message for a journal line:
 * "LEN <PRI>1 TS HOST sandgate - EVENT - MSG", TS and EVENT from the line's envelope,
 * MSG = msg (the line itself, or its OCSF rendering). host is sanitised to printable
 * ASCII. PRI is local0 with severity warning for alert and sensor.loss, info otherwise.
 * Returns 0, -EINVAL when the line has no well-formed envelope, -ENOMEM (b->oom).
 */
int sink_syslog_frame(struct buf *b, const char *host, const char *line, size_t len,
		      const char *msg, size_t msg_len);

/*
 * Appends one HEC event for a journal line: {"time":S.US,"host":H,"source":"sandgate",
 * "sourcetype":T,"event":MSG}, MSG being the line (or its OCSF rendering) as JSON.
 * Returns 0, -EINVAL (no envelope), -ENOMEM.
 */
int sink_hec_event(struct buf *b, const char *host, const char *line, size_t len,
		   const char *msg, size_t msg_len, bool ocsf);

/*
 * Appends one OTLP LogRecord (JSON encoding) for a journal line: timeUnixNano from ts,
 * severity INFO (WARN for alert and sensor.loss), body.stringValue = MSG, attributes
 * event and seq. A comma is put first unless first. Returns 0, -EINVAL, -ENOMEM.
 */
int sink_otlp_record(struct buf *b, const char *line, size_t len, const char *msg,
		     size_t msg_len, bool first);

/* The OTLP ExportLogsServiceRequest around records: prefix and suffix. */
void sink_otlp_wrap(struct buf *out, const char *host, const char *records, size_t len);

struct sink;

/* Copies s; loads the cursor (none: from the journal's start). 0, -EINVAL, -ENOMEM, -EIO. */
int sink_new(struct sink **out, const char *state_dir, const struct sink_settings *s);

/* tail_step_fn (journal/tail.h): delivers one batch; ctx is the sink. */
int sink_step(void *ctx, size_t *progressed, uint64_t *retry_ms);

const char *sink_name(const struct sink *s);

/* The detail of the last failure (OpenSSL's reason, curl's message), or "" when none. */
const char *sink_last_error(const struct sink *s);

/* What /metrics and /healthz show of a sink; a consistent snapshot. */
struct sink_stats {
	uint64_t committed_seq;           /* the next seq the receiver surely lacks */
	uint64_t lines_sent;
	uint64_t failures;                /* failed steps (each rewinds and backs off) */
	uint64_t backlog_bytes;           /* journal bytes after the durable cursor */
	uint64_t failing_ms;              /* since the last successful step; 0 when fine */
	uint64_t behind_ms;               /* since it was last caught up; 0 when caught up */
	bool stalled;                     /* past stall_bytes or stall_ms (sink.stalled) */
};

/* Thread-safe (the sink's worker updates it after each step). */
void sink_get_stats(struct sink *s, struct sink_stats *out);

/* libcurl's process-wide setup, once, before any HTTP sink starts (not thread-safe). */
int sink_curl_global_init(void);
void sink_curl_global_cleanup(void);

/* Closes the transport and frees. Accepts NULL. */
void sink_free(struct sink *s);

#endif
