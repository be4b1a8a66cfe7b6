/*
 * libFuzzer target for the gateway's packet path helpers: the input is parsed as an IP
 * packet (gateway/pkt.c), and its bytes are fed as the first flight of a new TCP flow in
 * up to three in-order segments (plus a retransmission) through the name readers
 * (gateway/names.c: TLS, HTTP/1, h2c), and once as a UDP/443 datagram (QUIC Initial).
 */
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dns/dns.h"
#include "gateway/flowtab.h"
#include "gateway/names.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gw_pkt p;
	char s[PKT_ADDR_STR_MAX];

	if (gw_pkt_parse(data, size, &p) == 0) {
		gw_addr_str(p.family, p.src, s, sizeof(s));
		if (p.payload_len > size || (p.payload_len && p.payload < data) ||
		    (p.payload_len && p.payload + p.payload_len > data + size))
			__builtin_trap();   /* the payload must lie inside the input */
	}
	stream(data, size);
	datagram(data, size);
	return 0;
}
