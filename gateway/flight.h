/*
 * The first flight of a TCP flow held until it is read, and cleartext HTTP/1 followed
 * request by request (gateway/flight.c, docs/gateway.md "First flight"). Pure: works on
 * the flow entry and the packet; the caller's judge decides on what was read.
 */
#ifndef SANDGATE_GATEWAY_FLIGHT_H
#define SANDGATE_GATEWAY_FLIGHT_H

#include <stdbool.h>

#include "gateway/flowtab.h"
#include "gateway/pkt.h"

/* Largest stream prefix held unread: the TLS cap (>= 16 KiB hello plus records). */
#define FLIGHT_MAX TLS_STREAM_MAX

/* What becomes of one client segment of a flow whose verdict is not in the kernel. */
enum flight_act {
	FLIGHT_PASS,    /* it may leave: nothing in it was unread or refused */
	FLIGHT_HOLD,    /* drop it: its bytes are not read (yet), or not in order */
	FLIGHT_BLOCK,   /* the flow is refused (f->verdict says deny) */
};

/*
 * The caller's decision on what was read: the first flight (f->parse, f->sni,
 * f->http_host set; f->decided false) or a later request head (f->http_host the new
 * Host). Fills f's verdict fields and returns true when the flow may go on.
 */
struct flight_judge {
	bool (*judge)(void *ctx, struct flow *f);
	void *ctx;
};

/*
 * One segment the client sent (p, original direction) of TCP flow f while its verdict
 * is not committed. Sets f->decided when the first flight was judged by this segment,
 * f->committed when the rest of the flow may stay in the kernel (the first flight went
 * out, in order, as read), f->rerecord when a later request head was judged and its
 * record differs. Never lets a payload byte out that was not read and allowed.
 */
enum flight_act gw_flight_segment(struct flow *f, const struct gw_pkt *p,
				  const struct flight_judge *j);

/* At the client's FIN/RST with the flight not complete: the parse result to decide on
 * ("incomplete" when bytes were held, "no_origin" when the SYN was not seen, else
 * "no_data"). */
const char *gw_flight_unfinished(const struct flow *f);

#endif
