/*
 * GET /metrics over HTTP (libmicrohttpd, its own polling thread): the journal, sinks,
 * sensor losses, sessions by state and health (daemon/metrics_ops.c), the gateway's
 * queue, verdict, DNS, drop and loss counters and its decision-latency histogram (when
 * the gateway is on) and detection's counters, in the Prometheus text format.
 * GET /healthz: 200 "ok" when healthy, 503 with the reasons otherwise (daemon/health.h).
 * Every other path is 404, every other method 405.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "conf/conf.h"
#include "daemon/daemon.h"
#include "gateway/gateway.h"

struct metrics {
	struct MHD_Daemon *mhd;
};

/* The page, malloc'd: the gateway's counters plus the daemon's own line. */
static char *render(struct daemon *d, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int bad;

	if (!f)
		return NULL;
	fprintf(f, "# HELP sandgate_up The daemon answers\n# TYPE sandgate_up gauge\n"
		   "sandgate_up 1\n");
	bad = health_metrics(d, f);
	bad |= d->gateway ? gateway_metrics(d->gateway, f) : 0;
	bad |= daemon_detect_metrics(d, f);
	bad |= daemon_investigation_metrics(d, f);
	if (fclose(f) != 0 || bad) {
		free(buf);
		return NULL;
	}
	return buf;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result healthz(struct MHD_Connection *c, struct daemon *d)
{
	char why[HEALTH_REASONS_MAX], *body;
	bool ok = health_check(d, why, sizeof(why));

	if (asprintf(&body, "%s\n", ok ? "ok" : why) < 0)
		return MHD_NO;
	return reply(c, ok ? 200 : 503, body, strlen(body), MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_len, void **req)
{
	static char notfound[] = "not found\n", notallowed[] = "method not allowed\n";
	size_t len = 0;
	char *page;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)req;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(c, 405, notallowed, strlen(notallowed), MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/healthz") == 0)
		return healthz(c, cls);
	if (strcmp(url, "/metrics") != 0)
		return reply(c, 404, notfound, strlen(notfound), MHD_RESPMEM_PERSISTENT);
	page = render(cls, &len);
	if (!page)
		return MHD_NO;
	return reply(c, 200, page, len, MHD_RESPMEM_MUST_FREE);
}

static int sockaddr_of(const char *listen, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sg_addr a;
	uint16_t port = 0;

	if (cfg_parse_hostport(listen, &a, &port, true) != 0)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (a.family == AF_INET) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, a.bytes, 4);
	} else {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, a.bytes, 16);
	}
	return 0;
}

int daemon_metrics_init(struct daemon *d)
{
	struct sockaddr_storage ss;
	struct metrics *m;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	int ret;

	if (d->health.tfd < 0 && (ret = health_start(d)) != 0)
		return ret;   /* sampling for status and /healthz, with or without a listener */
	if (!d->cfg->metrics_listen || d->metrics)
		return 0;
	ret = sockaddr_of(d->cfg->metrics_listen, &ss);
	if (ret)
		return ret;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, d,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				  MHD_OPTION_CONNECTION_LIMIT, 16u,
				  MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!m->mhd) {
		ret = errno ? -errno : -EADDRINUSE;
		free(m);
		return ret;
	}
	d->metrics = m;
	return 0;
}

void daemon_metrics_fini(struct daemon *d)
{
	health_stop(d);
	if (!d->metrics)
		return;
	MHD_stop_daemon(d->metrics->mhd);
	free(d->metrics);
	d->metrics = NULL;
}
