/* Reading a new flow's names from its first bytes (gateway/flow_names.c). */
#ifndef SANDGATE_GATEWAY_FLOW_NAMES_H
#define SANDGATE_GATEWAY_FLOW_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "gateway/flowtab.h"
#include "gateway/pkt.h"

/*
 * Feeds one queued packet of undecided flow f (f->npkts already counts it). Sets f->sni,
 * f->http_host, f->alpn, f->ech and f->parse (what was read: "tls", "http", "h2c",
 * "quic", "dns", "unknown", "*_malformed", "incomplete", ...). Returns true when f can be
 * decided now, false while more of its first bytes are needed.
 */
bool gw_names_feed(struct flow *f, const struct gw_pkt *p, bool reply);

/*
 * Whether in, a Host or SNI as read, is an address literal: "198.18.1.2", "2001:db8::2"
 * (the HTTP reader takes the brackets off) or "[2001:db8::2]", each with an optional
 * ":port" (digits). On true, *family and the address (a, zero-padded). A bracket that
 * holds no valid IPv6 literal is not one, and no valid name either. Pure.
 */
bool gw_addr_literal(const char *in, int *family, uint8_t a[16]);

#endif
