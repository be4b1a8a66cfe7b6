/*
 * gateway.resolvers left out: the host's own resolvers (issue 18.6). They come from
 * /etc/resolv.conf; when that names only systemd-resolved's stub (127.0.0.53, or
 * 127.0.0.54), the stub's upstreams come from /run/systemd/resolve/resolv.conf, since a
 * session's DNS to a loopback address in its own network namespace would not reach
 * the host's stub anyway.
 */
#include "gateway/gateway_conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_stub(const struct sg_resolver *r)
{
	static const uint8_t stub53[4] = { 127, 0, 0, 53 }, stub54[4] = { 127, 0, 0, 54 };

	return r->addr.family == AF_INET && (!memcmp(r->addr.bytes, stub53, 4) ||
					     !memcmp(r->addr.bytes, stub54, 4));
}

int config_resolv_parse(const char *text, size_t len, struct sg_resolver *out, size_t max,
			size_t *n)
{
	char line[512], addr[256];
	size_t at = 0;

	*n = 0;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - (text + at)) : len - at;

		snprintf(line, sizeof(line), "%.*s", (int)(l < sizeof(line) ? l : sizeof(line) - 1),
			 text + at);
		at += l + 1;
		/* "nameserver ADDR"; an IPv6 zone ("%eth0") cannot be a policy address. */
		if (sscanf(line, " nameserver %255s", addr) != 1 || strchr(addr, '%'))
			continue;
		if (*n < max && cfg_parse_addr(addr, &out[*n].addr) == 0) {
			out[*n].port = 53;
			(*n)++;
		}
	}
	return 0;
}

/* Reads path's nameservers into out. 0 or -errno (-ENOENT: no such file). */
static int read_resolv(const char *path, struct sg_resolver *out, size_t max, size_t *n)
{
	char buf[16384];
	FILE *f = fopen(path, "re");
	size_t len;

	*n = 0;
	if (!f)
		return -errno;
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return config_resolv_parse(buf, len, out, max, n);
}

int config_host_resolvers(struct sg_gateway_config *g, const char *resolv,
			  const char *resolved, char *from, size_t fromlen)
{
	struct sg_resolver r[CONFIG_MAX_RESOLVERS], *copy;
	size_t n = 0, stubs = 0;
	const char *src = resolv;
	int ret;

	if (g->resolvers_set)
		return 0;
	ret = read_resolv(resolv, r, CONFIG_MAX_RESOLVERS, &n);
	for (size_t i = 0; i < n; i++)
		stubs += is_stub(&r[i]);
	if (ret == 0 && n && stubs == n) {
		src = resolved;
		ret = read_resolv(resolved, r, CONFIG_MAX_RESOLVERS, &n);
	}
	snprintf(from, fromlen, "%s", src);
	if (ret == -ENOENT)
		n = 0;   /* no resolver configured: sessions get no DNS (fail closed) */
	else if (ret)
		return ret;
	copy = calloc(n ? n : 1, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, r, n * sizeof(*copy));
	free(g->resolvers);
	g->resolvers = copy;
	g->n_resolvers = n;
	return 0;
}
