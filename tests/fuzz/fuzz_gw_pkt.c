/*
 * libFuzzer target for the gateway's packet path helpers: the input is parsed as an IP
 * packet (gateway/pkt.c), and its bytes are fed as the first flight of a new TCP flow in
 * up to three in-order segments (plus a retransmission) through the name readers
 * (gateway/flow_names.c: TLS, HTTP/1, h2c), and once as a UDP/443 datagram (QUIC Initial).
 * The same bytes go through the enforcing first-flight reader (gateway/flight.c) in
 * segments of sizes, overlaps and gaps the input's first bytes choose, with a judge
 * that allows every other time; a passed byte must have been read, in order. The
 * packet's checksum is checked and a payload stripped as a SYN's would be.
 */
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dns/dns.h"
#include "gateway/flight.h"
#include "gateway/flowtab.h"
#include "gateway/parse.h"
#include "gateway/flow_names.h"
#include "gateway/pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void segment(struct flow *f, const uint8_t *p, size_t n, uint32_t seq, uint8_t flags)
{
	struct gw_pkt pk = { .family = AF_INET, .proto = IPPROTO_TCP, .sport = 40000,
			     .dport = 443, .has_ports = true, .seq = seq,
			     .tcp_flags = flags, .payload = p, .payload_len = n };

	if (f->decided)
		return;
	f->npkts++;
	f->decided = gw_names_feed(f, &pk, false);
}

static void stream(const uint8_t *data, size_t size)
{
	struct flow f;
	size_t a = size / 3, b = 2 * size / 3;

	memset(&f, 0, sizeof(f));
	segment(&f, NULL, 0, 999, 0x02);                /* SYN: seq 1000 comes next */
	segment(&f, data, a, 1000, 0x10);
	segment(&f, data, a, 1000, 0x10);               /* retransmission: not fed twice */
	segment(&f, data + a, b - a, 1000 + (uint32_t)a, 0x10);
	segment(&f, data + b, size - b, 1000 + (uint32_t)b, 0x11);
	free(f.buf);
}

static void datagram(const uint8_t *data, size_t size)
{
	struct gw_pkt pk = { .family = AF_INET, .proto = IPPROTO_UDP, .sport = 40000,
			     .dport = 443, .has_ports = true, .payload = data,
			     .payload_len = size };
	struct flow f;

	memset(&f, 0, sizeof(f));
	f.npkts = 1;
	(void)gw_names_feed(&f, &pk, false);
}

static bool judge(void *ctx, struct flow *f)
{
	unsigned *n = ctx;

	f->decided = true;
	f->verdict = (++*n & 1) ? 1 : 2;
	return f->verdict == 1;
}

static void flight(const uint8_t *data, size_t size)
{
	unsigned n = 0;
	struct flight_judge j = { judge, &n };
	struct gw_pkt pk = { .family = AF_INET, .proto = IPPROTO_TCP, .sport = 40000,
			     .dport = 80, .has_ports = true, .seq = 999,
			     .tcp_flags = 0x02 };
	struct flow f;
	size_t off = 0, i = 0;

	memset(&f, 0, sizeof(f));
	(void)gw_flight_segment(&f, &pk, &j);
	while (off < size && i++ < 64 && !f.committed) {
		size_t len = (size_t)data[i % size] % 97 + 1;
		size_t back = (size_t)data[(i + 1) % size] % 5 == 0 ? len / 2 : 0;
		size_t at = off > back ? off - back : 0;

		if (at + len > size)
			len = size - at;
		pk.tcp_flags = 0x10;
		pk.seq = 1000 + (uint32_t)at;
		pk.payload = data + at;
		pk.payload_len = len;
		if (gw_flight_segment(&f, &pk, &j) == FLIGHT_BLOCK)
			break;
		if (f.pass_hi > f.buf_off + f.len + (f.hf ? 0 : FLIGHT_MAX) ||
		    f.pass_hi > size)
			__builtin_trap();   /* out before it was read */
		off = at + len;
	}
	free(f.buf);
	http_follow_free(f.hf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[128];
	size_t olen;
	struct gw_pkt p;
	char s[PKT_ADDR_STR_MAX];

	if (gw_pkt_parse(data, size, &p) == 0) {
		gw_addr_str(p.family, p.src, s, sizeof(s));
		if (p.payload_len > size || (p.payload_len && p.payload < data) ||
		    (p.payload_len && p.payload + p.payload_len > data + size))
			__builtin_trap();   /* the payload must lie inside the input */
		(void)gw_pkt_tcp_csum_ok(&p);
		if (gw_pkt_strip_payload(data, size, &p, out, sizeof(out), &olen) == 0 &&
		    (gw_pkt_parse(out, olen, &p) != 0 || p.payload_len != 0))
			__builtin_trap();   /* a stripped packet parses, without payload */
	}
	stream(data, size);
	datagram(data, size);
	flight(data, size);
	return 0;
}
