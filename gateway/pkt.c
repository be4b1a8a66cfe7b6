/* IP/TCP/UDP header walk for queued packets (gateway/pkt.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "gateway/pkt.h"

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The transport header at p[0..n): ports, flags, payload. */
static int parse_l4(const uint8_t *p, size_t n, struct gw_pkt *o)
{
	size_t hl;

	if (o->proto == IPPROTO_TCP) {
		if (n < 20 || (hl = (size_t)(p[12] >> 4) * 4) < 20 || hl > n)
			return -EBADMSG;
		o->tcp_flags = p[13];
		o->seq = rd32(p + 4);
	} else if (o->proto == IPPROTO_UDP) {
		if (n < 8)
			return -EBADMSG;
		hl = 8;
	} else {
		o->payload = p;
		o->payload_len = n;
		return 0;
	}
	o->sport = rd16(p);
	o->dport = rd16(p + 2);
	o->has_ports = true;
	o->payload = p + hl;
	o->payload_len = n - hl;
	return 0;
}

static int parse_v4(const uint8_t *p, size_t n, struct gw_pkt *o)
{
	size_t hl, tot;

	if (n < 20 || (hl = (size_t)(p[0] & 0x0f) * 4) < 20 || hl > n)
		return -EBADMSG;
	tot = rd16(p + 2);
	/* GSO packets carry 0 or a stale total length: trust the buffer then. */
	if (tot >= hl && tot < n)
		n = tot;
	o->family = AF_INET;
	o->proto = p[9];
	memcpy(o->src, p + 12, 4);
	memcpy(o->dst, p + 16, 4);
	if ((rd16(p + 6) & 0x1fff) != 0) {
		o->later_fragment = true;
		return 0;
	}
	return parse_l4(p + hl, n - hl, o);
}

static bool v6_ext(uint8_t nh)
{
	return nh == 0 || nh == 43 || nh == 60 || nh == 44 || nh == 51;
}

static int parse_v6(const uint8_t *p, size_t n, struct gw_pkt *o)
{
	size_t off = 40, el;
	uint8_t nh;
	int hops;

	if (n < 40)
		return -EBADMSG;
	o->family = AF_INET6;
	memcpy(o->src, p + 8, 16);
	memcpy(o->dst, p + 24, 16);
	nh = p[6];
	/* Bounded walk: a chain of extension headers cannot keep us here. */
	for (hops = 0; v6_ext(nh) && hops < 8; hops++) {
		if (off + 8 > n)
			return -EBADMSG;
		if (nh == 44) {
			if ((rd16(p + off + 2) & 0xfff8) != 0)
				o->later_fragment = true;
			el = 8;
		} else if (nh == 51) {
			el = ((size_t)p[off + 1] + 2) * 4;
		} else {
			el = ((size_t)p[off + 1] + 1) * 8;
		}
		nh = p[off];
		if (off + el > n)
			return -EBADMSG;
		off += el;
	}
	if (v6_ext(nh))
		return -EBADMSG;
	o->proto = nh;
	if (o->later_fragment)
		return 0;
	return parse_l4(p + off, n - off, o);
}

int gw_pkt_parse(const uint8_t *p, size_t n, struct gw_pkt *out)
{
	if (!p || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (n < 1)
		return -EBADMSG;
	switch (p[0] >> 4) {
	case 4:
		return parse_v4(p, n, out);
	case 6:
		return parse_v6(p, n, out);
	default:
		return -EBADMSG;
	}
}

void gw_addr_str(int family, const uint8_t *addr, char *buf, size_t len)
{
	if (!inet_ntop(family, addr, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

const char *gw_proto_name(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return "icmp";
	default:
		return "ip";
	}
}
