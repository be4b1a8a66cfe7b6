/*
 * Addresses as a config file writes them (conf/addr.h).
 */
#include "conf/addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

int cfg_parse_addr(const char *s, struct sg_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, a->bytes) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->bytes) == 1) {
		a->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;
	size_t i = 0;

	for (; s[i] >= '0' && s[i] <= '9' && i < 6; i++)
		v = v * 10 + (unsigned long)(s[i] - '0');
	if (i == 0 || s[i] != '\0' || v < 1 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int cfg_parse_hostport(const char *s, struct sg_addr *a, uint16_t *port, bool need_port)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon = strrchr(s, ':'), *p = NULL;
	size_t hl;

	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || (end[1] != '\0' && end[1] != ':'))
			return -EINVAL;
		hl = (size_t)(end - s - 1);
		s++;
		p = end[1] == ':' ? end + 2 : NULL;
	} else if (colon && strchr(s, ':') == colon) {
		hl = (size_t)(colon - s);
		p = colon + 1;
	} else {
		hl = strlen(s);   /* no port; several colons: a bare IPv6 address */
	}
	if (hl >= sizeof(host) || (need_port && !p))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (cfg_parse_addr(host, a))
		return -EINVAL;
	if (p && parse_port(p, port))
		return -EINVAL;
	return 0;
}
