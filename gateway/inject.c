/*
 * Sending the gateway's own DNS answer to a blocked query: an IP/UDP datagram from the
 * resolver's address and port to the client's, written on a raw socket in the gateway's
 * namespace (the worker thread lives there). NFQUEUE cannot turn a queued query around
 * (a verdict may change the payload, not swap its addresses), so the query is dropped and
 * this answer takes its place. The answer is a new packet of the daemon's own: it is not
 * classified as session traffic and not queued.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gateway/gw_int.h"

#define INJ_MAX 1024

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)(p[n - 1] << 8);
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The UDP checksum over the pseudo header (addresses al bytes each), header and data. */
static uint16_t udp_csum(const uint8_t *src, const uint8_t *dst, size_t al,
			 const uint8_t *udp, size_t ulen)
{
	uint32_t s = sum16(src, al, 0);
	uint16_t c;

	s = sum16(dst, al, s);
	s += IPPROTO_UDP + (uint32_t)ulen;
	c = fold(sum16(udp, ulen, s));
	return c ? c : 0xffff;
}

/* UDP header and payload at u: from the query's destination back to its source. */
static size_t build_udp(uint8_t *u, const struct gw_pkt *q, const uint8_t *ans, size_t alen)
{
	struct udphdr h = { 0 };
	size_t ulen = sizeof(h) + alen;

	h.source = htons(q->dport);
	h.dest = htons(q->sport);
	h.len = htons((uint16_t)ulen);
	memcpy(u, &h, sizeof(h));
	memcpy(u + sizeof(h), ans, alen);
	return ulen;
}

static int open_raw(struct gw_worker *w, int family)
{
	int *fd = family == AF_INET ? &w->raw4 : &w->raw6;
	int one = 1, s;

	if (*fd >= 0)
		return *fd;
	s = socket(family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (s < 0)
		return -errno;
	if (family == AF_INET6 &&
	    setsockopt(s, IPPROTO_IPV6, IPV6_HDRINCL, &one, sizeof(one)) != 0) {
		int e = -errno;

		close(s);
		return e;
	}
	*fd = s;
	return s;
}

static size_t build4(uint8_t *b, const struct gw_pkt *q, const uint8_t *ans, size_t alen)
{
	struct iphdr ip = { 0 };
	size_t ulen = build_udp(b + sizeof(ip), q, ans, alen);
	uint16_t c = udp_csum(q->dst, q->src, 4, b + sizeof(ip), ulen);

	b[sizeof(ip) + 6] = (uint8_t)(c >> 8);
	b[sizeof(ip) + 7] = (uint8_t)c;
	ip.version = 4;
	ip.ihl = 5;
	ip.ttl = 64;
	ip.protocol = IPPROTO_UDP;
	ip.tot_len = htons((uint16_t)(sizeof(ip) + ulen));
	memcpy(&ip.saddr, q->dst, 4);
	memcpy(&ip.daddr, q->src, 4);
	memcpy(b, &ip, sizeof(ip));
	return sizeof(ip) + ulen;   /* the kernel fills the id and the header checksum */
}

static size_t build6(uint8_t *b, const struct gw_pkt *q, const uint8_t *ans, size_t alen)
{
	struct ip6_hdr ip = { 0 };
	size_t ulen = build_udp(b + sizeof(ip), q, ans, alen);
	uint16_t c = udp_csum(q->dst, q->src, 16, b + sizeof(ip), ulen);

	b[sizeof(ip) + 6] = (uint8_t)(c >> 8);
	b[sizeof(ip) + 7] = (uint8_t)c;
	ip.ip6_flow = htonl(6u << 28);
	ip.ip6_plen = htons((uint16_t)ulen);
	ip.ip6_nxt = IPPROTO_UDP;
	ip.ip6_hlim = 64;
	memcpy(&ip.ip6_src, q->dst, 16);
	memcpy(&ip.ip6_dst, q->src, 16);
	memcpy(b, &ip, sizeof(ip));
	return sizeof(ip) + ulen;
}

int gw_inject_dns(struct gw_worker *w, const struct gw_pkt *q, const uint8_t *ans,
		  size_t alen)
{
	uint8_t b[INJ_MAX];
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	size_t n;
	int fd;

	if (alen > INJ_MAX - 48 || (q->family != AF_INET && q->family != AF_INET6))
		return -EINVAL;
	fd = open_raw(w, q->family);
	if (fd < 0)
		return fd;
	if (q->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		n = build4(b, q, ans, alen);
		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, q->src, 4);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		n = build6(b, q, ans, alen);
		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, q->src, 16);
		sl = sizeof(*s6);
	}
	if (sendto(fd, b, n, MSG_DONTWAIT, (struct sockaddr *)&ss, sl) != (ssize_t)n)
		return errno ? -errno : -EIO;
	/* It comes back through the queue: not an unsolicited answer (dnssynth.c). */
	gw_synth_note(w->g, q, alen >= 2 ? (uint16_t)(ans[0] << 8 | ans[1]) : 0);
	return 0;
}
