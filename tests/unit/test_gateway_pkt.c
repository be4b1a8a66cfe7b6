/* gateway/pkt.c: IP/TCP/UDP header walk on hand-made packets, and bad ones. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/pkt.h"

/* IPv4 + UDP 40000 -> 53 with a 4-byte payload. */
static const uint8_t udp4[] = {
	0x45, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0, 0, 198, 18, 1, 1, 198, 18, 1, 2,
	0x9c, 0x40, 0, 53, 0, 12, 0, 0, 'a', 'b', 'c', 'd',
};

/* IPv6 + hop-by-hop (8 bytes) + TCP 40000 -> 443, SYN, seq 0x01020304, 2-byte payload. */
static const uint8_t tcp6[] = {
	0x60, 0, 0, 0, 0, 30, 0, 64,
	0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
	6, 0, 1, 4, 0, 0, 0, 0,
	0x9c, 0x40, 0x01, 0xbb, 1, 2, 3, 4, 0, 0, 0, 0, 0x50, 0x02, 0, 0, 0, 0, 0, 0,
	'h', 'i',
};

static void test_udp4(void **state)
{
	struct gw_pkt p;
	char s[PKT_ADDR_STR_MAX];

	(void)state;
	assert_int_equal(gw_pkt_parse(udp4, sizeof(udp4), &p), 0);
	assert_int_equal(p.family, AF_INET);
	assert_int_equal(p.proto, IPPROTO_UDP);
	assert_true(p.has_ports);
	assert_int_equal(p.sport, 40000);
	assert_int_equal(p.dport, 53);
	assert_int_equal(p.payload_len, 4);
	assert_memory_equal(p.payload, "abcd", 4);
	gw_addr_str(p.family, p.dst, s, sizeof(s));
	assert_string_equal(s, "198.18.1.2");
	assert_string_equal(gw_proto_name(p.proto), "udp");
}

static void test_tcp6(void **state)
{
	struct gw_pkt p;
	char s[PKT_ADDR_STR_MAX];

	(void)state;
	assert_int_equal(gw_pkt_parse(tcp6, sizeof(tcp6), &p), 0);
	assert_int_equal(p.family, AF_INET6);
	assert_int_equal(p.proto, IPPROTO_TCP);
	assert_int_equal(p.dport, 443);
	assert_int_equal(p.tcp_flags, PKT_TCP_SYN);
	assert_int_equal(p.seq, 0x01020304);
	assert_int_equal(p.payload_len, 2);
	gw_addr_str(p.family, p.src, s, sizeof(s));
	assert_string_equal(s, "2001:db8:1::1");
}

static void test_bad(void **state)
{
	uint8_t b[sizeof(tcp6)];
	struct gw_pkt p;

	(void)state;
	assert_int_equal(gw_pkt_parse(NULL, 0, &p), -EINVAL);
	assert_int_equal(gw_pkt_parse(udp4, 0, &p), -EBADMSG);
	/* Every truncation of the headers is refused, never read past. */
	for (size_t n = 1; n < 28; n++)
		assert_int_equal(gw_pkt_parse(udp4, n, &p), -EBADMSG);
	for (size_t n = 1; n < sizeof(tcp6) - 2; n++)
		assert_int_equal(gw_pkt_parse(tcp6, n, &p), -EBADMSG);
	memcpy(b, tcp6, sizeof(b));
	b[40 + 1] = 200;   /* extension header longer than the packet */
	assert_int_equal(gw_pkt_parse(b, sizeof(b), &p), -EBADMSG);
	memcpy(b, udp4, sizeof(udp4));
	b[0] = 0x44;       /* IHL 16 bytes: below the minimum */
	assert_int_equal(gw_pkt_parse(b, sizeof(udp4), &p), -EBADMSG);
	b[0] = 0x75;       /* version 7 */
	assert_int_equal(gw_pkt_parse(b, sizeof(udp4), &p), -EBADMSG);
}

static void test_fragment(void **state)
{
	uint8_t b[sizeof(udp4)];
	struct gw_pkt p;

	(void)state;
	memcpy(b, udp4, sizeof(b));
	b[6] = 0x00;
	b[7] = 0x10;       /* fragment offset 16: no transport header here */
	assert_int_equal(gw_pkt_parse(b, sizeof(b), &p), 0);
	assert_true(p.later_fragment);
	assert_false(p.has_ports);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp4),
		cmocka_unit_test(test_tcp6),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_fragment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
