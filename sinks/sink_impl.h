/* Internals shared by the sink's files (sinks/sink*.c). */
#ifndef SANDGATE_SINKS_SINK_IMPL_H
#define SANDGATE_SINKS_SINK_IMPL_H

#include <pthread.h>

#include "journal/follow.h"
#include "sinks/sink.h"

struct curl_slist;
struct ssl_ctx_st;
struct ssl_st;

#define SINK_PENDING_MAX 256
/* Network sinks save their durable cursor at most this often (and when idle, and at
 * stop): a save is an fsync, and one per batch held a busy sink to the disk's pace. */
#define SINK_SAVE_MS 250

/* A batch sent over TCP and not yet confirmed: the cursor after it, when it was sent. */
struct sink_pending {
	struct follow_cursor after;
	uint64_t sent_ms;
};

struct sink {
	struct sink_settings s;           /* strings below are owned copies */
	char *name, *path, *host, **events, *url, *token;
	char *ca_file, *server_name, *cert_file, *key_file;
	struct ssl_ctx_st *tls_ctx;       /* SSL_CTX *, syslog_tls: made at the first open */
	struct ssl_st *tls;               /* SSL *, while connected */
	char err_detail[256];             /* sink_last_error */
	void *curl;                       /* CURL *, HTTP kinds */
	struct curl_slist *headers;
	struct buf http;                  /* the OTLP request around a batch */
	struct sockaddr_storage addr;
	char journal_dir[4096];
	char cursor_path[4096];
	struct follow_cursor committed;   /* durable: what the receiver surely holds */
	struct follow_cursor sent;        /* in memory: what has been written out */
	struct sink_pending pending[SINK_PENDING_MAX];
	size_t n_pending;
	int fd;                           /* file or socket; -1 when closed */
	uint64_t backoff_ms;              /* the next retry delay; 0 after a success */
	bool dirty;                       /* committed moved since the last save */
	uint64_t saved_ms;                /* when the cursor file was last written */
	struct buf out;                   /* the batch being built */
	struct follow_buf rd;             /* the follower's read buffer, kept */
	struct buf ocsf;                  /* one line's OCSF rendering (format: ocsf) */
	uint64_t lines_sent, reconnects;
	/* sink_stats.c: the stall watch; st is read by other threads under st_lock. */
	pthread_mutex_t st_lock;
	struct sink_stats st;
	bool idle;                        /* the last step found nothing to send */
	uint64_t ok_ms, idle_ms;          /* last successful step, last caught up */
	uint64_t measured_ms;             /* last backlog measure */
	char stalled_path[4096];          /* STATE/sinks/NAME.stalled while stalled */
};

/* sink_cursor.c: the cursor file, "seq SEGMENT OFFSET\n", replaced atomically. */
int sink_cursor_load(const char *path, struct follow_cursor *c);
int sink_cursor_save(const char *path, const struct follow_cursor *c);

/* sink_io.c: the transport. open: 0 or -errno; write: all of buf or -errno. */
int sink_io_open(struct sink *k);
int sink_io_write(struct sink *k, const char *data, size_t len);
void sink_io_close(struct sink *k);
/* syslog: 0 while the peer looks alive, -ECONNRESET once it has closed. */
int sink_io_alive(struct sink *k);
/* syslog: bytes the peer's TCP has not acknowledged yet, or -errno. */
int sink_io_unacked(struct sink *k, int *bytes);

uint64_t sink_now_ms(void);

/* sink_stats.c: after each step (ret its result); emits sink.stalled / sink.recovered. */
void sink_track(struct sink *k, int ret, size_t progressed);
int sink_stats_init(struct sink *k, const char *state_dir);
void sink_stats_fini(struct sink *k);

/* Whether the kind is syslog (TCP or TLS): confirmed by TCP acks, not by the receiver. */
bool sink_is_syslog(const struct sink *k);
/* The receiver's address without the port, for certificate checks. 0 or -EINVAL. */
int sink_addr_str(const struct sink *k, char *out, size_t len);

/* sink_tls.c: TLS over k->fd (connected). open: 0, -EKEYREJECTED (the receiver's
 * certificate), -ECONNREFUSED, -EINVAL (CA, certificate or key files), -ENOMEM.
 * write: all or -errno. drain: 0 while alive, -ECONNRESET. close keeps the context. */
int sink_tls_open(struct sink *k);
int sink_tls_write(struct sink *k, const char *data, size_t len);
int sink_tls_drain(struct sink *k);
void sink_tls_close(struct sink *k);
void sink_tls_free(struct sink *k);

/* sink_curl.c: the HTTP transport. post: 0 on a 2xx answer, else -errno. */
int sink_curl_open(struct sink *k);
int sink_curl_post(struct sink *k, const char *data, size_t len);
void sink_curl_close(struct sink *k);

#endif
