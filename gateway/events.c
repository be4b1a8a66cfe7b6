/*
 * The gateway's events: net.connect at a flow's decision, net.dns per query, and
 * sensor.loss for what it knows it missed. net.flow is built in gateway/ct_flow.c.
 * Fields follow interface.md; unknown values are null, never invented.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "gateway/gw_int.h"
#include "journal/event.h"
#include "nft/nft.h"

void gw_ev_endpoint(struct event *e, const char *key, int family, const uint8_t *addr,
		    uint16_t port, bool has_port)
{
	char ip[PKT_ADDR_STR_MAX];

	gw_addr_str(family, addr, ip, sizeof(ip));
	event_object_begin(e, key);
	event_str(e, "ip", ip);
	if (has_port)
		event_uint(e, "port", port);
	else
		event_null(e, "port");
	event_object_end(e);
}

void gw_emit(struct gateway *g, struct event *e)
{
	if (!e) {
		atomic_fetch_add_explicit(&g->st.emit_failed, 1, memory_order_relaxed);
		return;
	}
	/* May block while the journal queue is full: the verdict waits with it. */
	if (event_emit(e) != 0)
		atomic_fetch_add_explicit(&g->st.emit_failed, 1, memory_order_relaxed);
}

static void str_or_null(struct event *e, const char *key, const char *s)
{
	event_str(e, key, s && s[0] ? s : NULL);
}

static void uid_field(struct event *e, int64_t uid)
{
	if (uid >= 0)
		event_int(e, "uid", uid);
	else
		event_null(e, "uid");
}

static void pid_field(struct event *e, int64_t pid)
{
	if (pid > 0)
		event_int(e, "pid", pid);
	else
		event_null(e, "pid");
}

/* geo {country, asn, org} of dst with a database, null otherwise. */
static void geo_field(struct gateway *g, struct event *e, const struct flow *f)
{
	struct geo_info gi;

	if (!g->geo || geo_lookup(g->geo, f->family, f->dst, &gi) != 0) {
		event_null(e, "geo");
		return;
	}
	event_object_begin(e, "geo");
	str_or_null(e, "country", gi.country);
	if (gi.asn >= 0)
		event_int(e, "asn", gi.asn);
	else
		event_null(e, "asn");
	str_or_null(e, "org", gi.org);
	event_object_end(e);
}

/* The names a flow's record carries, for the package tracker (gateway.h's seen). */
static void connect_seen(struct gateway *g, const struct flow *f, int64_t pid)
{
	const char *names[GW_PKG_SEEN_MAX];
	char ip[PKT_ADDR_STR_MAX];
	size_t n = 0;

	if (pid <= 0 || !f->sid[0])
		return;
	if (f->domain[0])
		names[n++] = f->domain;
	if (f->sni[0])
		names[n++] = f->sni;
	if (f->http_host[0])
		names[n++] = f->http_host;
	gw_addr_str(f->family, f->dst, ip, sizeof(ip));
	if (n < GW_PKG_SEEN_MAX && ip[0])
		names[n++] = ip;
	gw_pkg_seen(g, f->sid, pid, names, n);
}

struct event *gw_ev_connect(struct gateway *g, const struct flow *f, int64_t pid)
{
	struct event *e = event_new("net.connect", f->sid[0] ? f->sid : NULL,
				    EVENT_SRC_GATEWAY);

	if (!e)
		return NULL;
	event_set_time(e, &f->start_wall);
	event_uint(e, "flow_id", f->flow_id);
	event_str(e, "proto", gw_proto_name(f->proto));
	gw_ev_endpoint(e, "src", f->family, f->src, f->sport, f->has_ports);
	gw_ev_endpoint(e, "dst", f->family, f->dst, f->dport, f->has_ports);
	str_or_null(e, "domain", f->domain);
	str_or_null(e, "sni", f->sni);
	str_or_null(e, "http_host", f->http_host);
	str_or_null(e, "alpn", f->alpn);
	event_bool(e, "ech", f->ech);
	event_str(e, "parse", f->parse);
	event_str(e, "verdict", f->vstr ? f->vstr
			  : f->verdict == NFT_MARK_ALLOW ? "allowed" : "blocked");
	event_str(e, "reason", f->reason);
	str_or_null(e, "rule", f->rule);
	event_str(e, "mode", f->mode ? f->mode : "observe");
	event_bool(e, "late", f->late);
	if (f->range)
		event_str(e, "range", f->range);
	geo_field(g, e, f);
	pid_field(e, pid);
	uid_field(e, f->uid);
	connect_seen(g, f, pid);
	return e;
}

static void answers(struct event *e, const struct dns_msg *d)
{
	event_array_begin(e, "answers");
	for (size_t i = 0; d && i < d->n_answers; i++) {
		event_object_begin(e, NULL);
		event_str(e, "type", d->answers[i].type_str);
		event_str(e, "data", d->answers[i].data);
		event_uint(e, "ttl", d->answers[i].ttl);
		event_object_end(e);
	}
	event_array_end(e);
}

static void resolver_field(struct event *e, const struct dnspend_key *k)
{
	char ip[PKT_ADDR_STR_MAX], s[PKT_ADDR_STR_MAX + 8];

	gw_addr_str(k->family, k->server, ip, sizeof(ip));
	snprintf(s, sizeof(s), k->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, k->sport);
	event_str(e, "resolver", s);
}

static void query_fields(struct event *e, const struct dnspend_entry *q)
{
	char t[DNS_TYPE_STR_MAX];

	if (q->qtype || q->qname[0]) {
		event_str(e, "qname", q->qname);
		event_str(e, "qtype", dns_type_str(q->qtype, t));
	} else {
		event_null(e, "qname");
		event_null(e, "qtype");
	}
	str_or_null(e, "qname_raw", q->qname_raw);
}

/* An exchange that stands for its flow: the flow's tuple and this exchange's bytes. */
static void dns_flow(struct event *e, const struct flow *f, const struct dnspend_entry *q,
		     uint32_t ans_bytes)
{
	event_object_begin(e, "flow");
	event_uint(e, "flow_id", f->flow_id);
	event_str(e, "proto", gw_proto_name(f->proto));
	gw_ev_endpoint(e, "src", f->family, f->src, f->sport, true);
	gw_ev_endpoint(e, "dst", f->family, f->dst, f->dport, true);
	event_uint(e, "bytes_out", q->q_bytes);
	event_uint(e, "bytes_in", ans_bytes);
	event_uint(e, "packets_out", 1);
	event_uint(e, "packets_in", 1);
	event_object_end(e);
}

struct event *gw_ev_dns(struct gateway *g, const struct dnspend_entry *q,
			const struct dns_msg *ans,
			const char *transport, const char *status, const char *reason,
			int64_t now_ms, const struct flow *f, uint32_t ans_bytes)
{
	struct event *e = event_new("net.dns", q->sid[0] ? q->sid : NULL, EVENT_SRC_GATEWAY);

	if (!e)
		return NULL;
	query_fields(e, q);
	event_str(e, "rcode", ans ? dns_rcode_str(ans->rcode) : q->rcode[0] ? q->rcode : NULL);
	answers(e, ans);
	resolver_field(e, &q->key);
	event_str(e, "transport", transport);
	event_str(e, "status", status);
	event_str(e, "verdict", q->verdict ? q->verdict : "allowed");
	event_str(e, "reason", q->reason ? q->reason : reason);
	str_or_null(e, "rule", q->rule);
	event_str(e, "mode", q->mode ? q->mode : "observe");
	if (ans && q->sent_ms > 0)
		event_int(e, "latency_ms", now_ms - q->sent_ms);
	else
		event_null(e, "latency_ms");
	event_uint(e, "dns_id", q->key.dns_id);
	pid_field(e, q->pid);
	uid_field(e, q->uid);
	if (f)
		dns_flow(e, f, q, ans_bytes);
	if (q->qname[0]) {
		const char *name = q->qname;

		gw_pkg_seen(g, q->sid, q->pid, &name, 1);
	}
	return e;
}

void gw_ev_loss(struct gateway *g, const char *sensor, int64_t lost, const char *why)
{
	struct event *e = event_new("sensor.loss", NULL, EVENT_SRC_SANDGATE);

	if (e) {
		event_str(e, "sensor", sensor);
		if (lost >= 0)
			event_int(e, "lost", lost);
		else
			event_null(e, "lost");
		event_str(e, "why", why);
	}
	gw_emit(g, e);
}
