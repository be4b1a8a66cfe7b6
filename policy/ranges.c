/*
 * Private ranges: the SSRF classes (Smokescreen's, design.md "Lessons") an egress
 * policy blocks unless a CIDR allows them explicitly. From the IANA IPv4 and IPv6
 * special-purpose address registries; the IPv6 forms that embed an IPv4 address are
 * classed as the form itself, whatever the embedded address, since the gateway cannot
 * know what a translator on the path would make of it. 198.18.0.0/15 and 2001:db8::/32
 * are deliberately public: they are the lab's "internet".
 */
#include "policy/policy_int.h"

#include <string.h>
#include <sys/socket.h>

struct range {
	uint8_t net[16];
	uint8_t prefix;
	struct private_class cls;
};

#define V4(a, b, c, d) { a, b, c, d }
#define CLS(name, len) { name, len }

/* More specific first: the first range that holds the address names its class. */
static const struct range ranges4[] = {
	{ V4(255, 255, 255, 255), 32, CLS("broadcast", 32) },
	{ V4(0, 0, 0, 0), 8, CLS("unspecified", 8) },
	{ V4(10, 0, 0, 0), 8, CLS("rfc1918", 8) },
	{ V4(100, 64, 0, 0), 10, CLS("cgnat", 10) },
	{ V4(127, 0, 0, 0), 8, CLS("loopback", 8) },
	{ V4(169, 254, 0, 0), 16, CLS("link_local", 16) },
	{ V4(172, 16, 0, 0), 12, CLS("rfc1918", 12) },
	{ V4(192, 0, 0, 0), 24, CLS("reserved", 24) },      /* IETF protocol assignments */
	{ V4(192, 88, 99, 0), 24, CLS("reserved", 24) },    /* 6to4 relay anycast */
	{ V4(192, 168, 0, 0), 16, CLS("rfc1918", 16) },
	{ V4(224, 0, 0, 0), 4, CLS("multicast", 4) },
	{ V4(240, 0, 0, 0), 4, CLS("reserved", 4) },
};

static const struct range ranges6[] = {
	{ { 0 }, 128, CLS("unspecified", 128) },
	{ { [15] = 1 }, 128, CLS("loopback", 128) },
	{ { [10] = 0xff, [11] = 0xff }, 96, CLS("ipv4_mapped", 96) },
	{ { [8] = 0xff, [9] = 0xff }, 96, CLS("ipv4_translated", 96) },   /* ::ffff:0:0:0/96 */
	{ { 0 }, 96, CLS("ipv4_compat", 96) },
	{ { 0x00, 0x64, 0xff, 0x9b }, 96, CLS("nat64", 96) },
	{ { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, CLS("nat64", 48) },
	{ { 0x01, 0x00 }, 64, CLS("reserved", 64) },                     /* 100::/64 discard */
	{ { 0x20, 0x01, 0x00, 0x00 }, 32, CLS("teredo", 32) },
	{ { 0x20, 0x02 }, 16, CLS("6to4", 16) },
	{ { 0xfc }, 7, CLS("unique_local", 7) },
	{ { 0xfe, 0x80 }, 10, CLS("link_local", 10) },
	{ { 0xfe, 0xc0 }, 10, CLS("reserved", 10) },                     /* site-local */
	{ { 0xff }, 8, CLS("multicast", 8) },
};

static bool in_range(const uint8_t *a, const struct range *r)
{
	size_t full = r->prefix / 8;
	unsigned rest = r->prefix % 8;

	if (memcmp(a, r->net, full) != 0)
		return false;
	return rest == 0 || ((a[full] ^ r->net[full]) & (0xff00u >> rest)) == 0;
}

const struct private_class *private_class_of(int family, const uint8_t *addr)
{
	const struct range *v = family == AF_INET ? ranges4 : ranges6;
	size_t n = family == AF_INET ? sizeof(ranges4) / sizeof(ranges4[0])
				     : sizeof(ranges6) / sizeof(ranges6[0]);

	if (family != AF_INET && family != AF_INET6)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (in_range(addr, &v[i]))
			return &v[i].cls;
	return NULL;
}

const char *policy_private_class(int family, const uint8_t *addr)
{
	const struct private_class *c = private_class_of(family, addr);

	return c ? c->name : NULL;
}
