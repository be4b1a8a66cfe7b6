/*
 * The investigation settings: the `index:` and `retention:` sections and the `sinks:` list
 * (sinks/sink_conf.c; docs/config.md "index" and "sinks"): the sinks part owns
 * them, daemon/config.c only places them in the whole config.
 */
#ifndef SANDGATE_SINKS_SINK_CONF_H
#define SANDGATE_SINKS_SINK_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define SG_SINKS_MAX 16
#define SG_SINK_FILTER_MAX 64

enum sg_sink_kind { SG_SINK_FILE, SG_SINK_STDOUT, SG_SINK_SYSLOG_TCP, SG_SINK_HEC,
		   SG_SINK_OTLP_HTTP, SG_SINK_SYSLOG_TLS };
enum sg_sink_format { SG_SINK_NATIVE, SG_SINK_OCSF };
enum sg_sink_verbosity { SG_SINK_FULL, SG_SINK_SUMMARY, SG_SINK_MINIMAL };

struct sg_sink_config {
	char *name;                       /* unique; names the cursor file */
	enum sg_sink_kind kind;
	enum sg_sink_format format;       /* native (default) or ocsf */
	char *path;                       /* file: the output file (appended) */
	char *address;                    /* syslog_tcp, syslog_tls: "IP:PORT" as written */
	char *url;                        /* hec, otlp_http: http:// or https:// */
	char *token;                      /* hec: the HEC token (NULL: none sent) */
	char *ca_file;                    /* syslog_tls, https: CAs (NULL: the system's) */
	char *server_name;                /* syslog_tls: name the certificate must hold */
	char *cert_file, *key_file;       /* syslog_tls, https: client certificate (PEM) */
	struct sockaddr_storage addr;     /* syslog_tcp, syslog_tls: the parsed address */
	socklen_t addr_len;
	char **events;                    /* event types sent ("net.*" = prefix); NULL: all */
	size_t n_events;
	enum sg_sink_verbosity verbosity; /* which lines: full (default), summary, minimal */
	uint64_t retry_min_ms;            /* first delay after a failure; default 200 ms */
	uint64_t retry_max_ms;            /* backoff cap; default 30 s */
	uint64_t batch_lines;             /* lines per write/cursor save; default 500 */
	uint64_t stall_bytes;             /* stalled this far behind; default 1 GiB, 0 off */
	uint64_t stall_after_ms;          /* stalled failing this long; default 1 h, 0 off */
};

struct sg_invest_config {
	bool index_enabled;               /* default true */
	uint64_t index_poll_ms;           /* fallback when inotify is silent; default 1 s */
	bool retention_enabled;           /* default true */
	uint64_t hot_ms;                  /* default 90 days */
	uint64_t cold_ms;                 /* default 730 days */
	uint64_t retention_interval_ms;   /* how often a pass runs; default 1 h */
	bool hold_all;                    /* legal hold on everything: nothing is purged */
	char **hold_sessions;             /* legal hold per session */
	size_t n_hold_sessions;
	struct sg_sink_config *sinks;
	size_t n_sinks;
};

struct cfg_ctx;
struct cy_node;

/* The readers of `index:`, `sinks:`, `retention:` into c. 0, -EINVAL, -ENOMEM. */
int cfg_index(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_invest_config *c);
int cfg_sinks(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_invest_config *c);
int cfg_retention(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_invest_config *c);
/* Defaults (index on, no sinks), and free (the struct is left empty). */
void cfg_invest_default(struct sg_invest_config *c);
void cfg_invest_free(struct sg_invest_config *c);

#endif
