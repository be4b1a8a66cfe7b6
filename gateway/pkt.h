/*
 * The IP and transport headers of one queued packet: addresses, protocol, ports,
 * TCP flags and sequence number, and where the payload is. Pure: no I/O, no state;
 * every length is checked against the buffer before it is read.
 */
#ifndef SANDGATE_GATEWAY_PKT_H
#define SANDGATE_GATEWAY_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PKT_TCP_FIN 0x01
#define PKT_TCP_SYN 0x02
#define PKT_TCP_RST 0x04
#define PKT_TCP_ACK 0x10
#define PKT_TCP_URG 0x20

/* Longest "[v6]:port" text, with its NUL. */
#define PKT_ADDR_STR_MAX 48

struct gw_pkt {
	int family;                 /* AF_INET or AF_INET6 */
	uint8_t proto;              /* IPPROTO_TCP, _UDP, _ICMP, _ICMPV6, or another */
	uint8_t src[16], dst[16];   /* network order; 4 bytes used for AF_INET */
	uint16_t sport, dport;      /* host order; 0 without ports */
	bool has_ports;             /* TCP or UDP with its header present */
	bool later_fragment;        /* a non-first fragment: no transport header */
	bool first_fragment;        /* offset 0 with more fragments: payload cut short */
	uint8_t tcp_flags;
	uint32_t seq;               /* TCP sequence number (host order) */
	const uint8_t *payload;     /* transport payload inside the buffer */
	size_t payload_len;
	const uint8_t *l4;          /* transport header inside the buffer (TCP, UDP) */
	size_t l4_len;              /* its length with the payload */
};

/*
 * Parses the packet p[0..n) (starting at the IP header, as NFQUEUE delivers it) into
 * *out. IPv6 extension headers are skipped. Returns 0, or -EBADMSG when a header is
 * truncated or inconsistent, -EINVAL for NULL.
 */
int gw_pkt_parse(const uint8_t *p, size_t n, struct gw_pkt *out);

/*
 * Whether the TCP checksum of packet p (parsed from buf by gw_pkt_parse) is right.
 * Callers skip packets whose checksum the kernel has yet to fill in (NFQUEUE's
 * NFQA_SKB_CSUMNOTREADY, GSO).
 */
bool gw_pkt_tcp_csum_ok(const struct gw_pkt *p);

/*
 * A copy of TCP packet p (parsed from buf[0..n)) without its payload, lengths and
 * checksums (IPv4 header, TCP) made right, into out[0..cap): a SYN's Fast Open data
 * taken off. 0 and *outlen, -ENOSPC, -EINVAL (not TCP, or an IPv6 extension header).
 */
int gw_pkt_strip_payload(const uint8_t *buf, size_t n, const struct gw_pkt *p, uint8_t *out,
			 size_t cap, size_t *outlen);

/* Writes addr (family AF_INET/AF_INET6) as text into buf (PKT_ADDR_STR_MAX). */
void gw_addr_str(int family, const uint8_t *addr, char *buf, size_t len);

/* "tcp", "udp", "icmp" (v4 and v6) or "ip" for the others. */
const char *gw_proto_name(uint8_t proto);

#endif
