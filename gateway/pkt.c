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
	o->l4 = p;
	o->l4_len = n;
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
	o->first_fragment = (rd16(p + 6) & 0x2000) != 0;
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
			else if (rd16(p + off + 2) & 1)
				o->first_fragment = true;
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

/* One's complement sum of p[0..n), folded later. */
static uint32_t sum16(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += rd16(p + i);
	if (i < n)
		s += (uint32_t)p[i] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* The pseudo-header sum of a transport segment of length len. */
static uint32_t pseudo(const struct gw_pkt *p, size_t len)
{
	size_t al = p->family == AF_INET ? 4 : 16;
	uint32_t s = sum16(sum16(0, p->src, al), p->dst, al);

	return s + p->proto + (uint32_t)(len & 0xffff) + (uint32_t)(len >> 16);
}

bool gw_pkt_tcp_csum_ok(const struct gw_pkt *p)
{
	if (p->proto != IPPROTO_TCP || !p->l4)
		return false;
	return fold(sum16(pseudo(p, p->l4_len), p->l4, p->l4_len)) == 0xffff;
}

int gw_pkt_strip_payload(const uint8_t *buf, size_t n, const struct gw_pkt *p, uint8_t *out,
			 size_t cap, size_t *outlen)
{
	size_t ipl, thl, len;
	uint16_t c;

	if (!buf || !p || !out || p->proto != IPPROTO_TCP || !p->l4 || p->l4 < buf ||
	    p->payload < p->l4 || p->l4 + p->l4_len > buf + n)
		return -EINVAL;
	ipl = (size_t)(p->l4 - buf);
	thl = (size_t)(p->payload - p->l4);
	/* IPv6 extension headers would need their own lengths kept right: refuse. */
	if (p->family == AF_INET6 && ipl != 40)
		return -EINVAL;
	len = ipl + thl;
	if (len > cap)
		return -ENOSPC;
	memcpy(out, buf, len);
	if (p->family == AF_INET) {
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		out[10] = out[11] = 0;
		c = (uint16_t)~fold(sum16(0, out, ipl));
		out[10] = (uint8_t)(c >> 8);
		out[11] = (uint8_t)c;
	} else {
		out[4] = (uint8_t)(thl >> 8);
		out[5] = (uint8_t)thl;
	}
	out[ipl + 16] = out[ipl + 17] = 0;
	c = (uint16_t)~fold(sum16(pseudo(p, thl), out + ipl, thl));
	out[ipl + 16] = (uint8_t)(c >> 8);
	out[ipl + 17] = (uint8_t)c;
	*outlen = len;
	return 0;
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
