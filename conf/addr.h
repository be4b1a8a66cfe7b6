/*
 * Addresses as a config file writes them: "IP", "IP:PORT", "[IPv6]:PORT". Pure.
 */
#ifndef SANDGATE_CONF_ADDR_H
#define SANDGATE_CONF_ADDR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>   /* AF_INET, AF_INET6 for sg_addr.family */

/* An IPv4 or IPv6 address in network byte order. */
struct sg_addr {
	int family;           /* AF_INET or AF_INET6 */
	uint8_t bytes[16];    /* the first 4 for AF_INET */
};

/* A bare IPv4 or IPv6 address. 0 or -EINVAL. */
int cfg_parse_addr(const char *s, struct sg_addr *a);

/*
 * "IP", "IP:PORT", "IPv6", "[IPv6]:PORT". *port is left alone when none is given;
 * need_port makes a missing port an error. 0 or -EINVAL.
 */
int cfg_parse_hostport(const char *s, struct sg_addr *a, uint16_t *port, bool need_port);

#endif
