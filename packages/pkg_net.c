/*
 * source_confirmed: the names and addresses the gateway saw an installer's process
 * tree resolve (net.dns qname) and connect to (net.connect domain, sni, http_host,
 * dst.ip; handed over typed through the gateway's hooks, pkgtrack_net_seen), compared
 * with the host of the package's source.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "packages/pkg_int.h"

void pkg_url_host(const char *url, char *out, size_t len)
{
	const char *p = strstr(url, "://"), *at, *end;
	size_t n;

	out[0] = '\0';
	if (!p || strncmp(url, "file:", 5) == 0)
		return;
	p += 3;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	if (at)
		p = at + 1;
	if (*p == '[') {
		p++;
		n = strcspn(p, "]");
	} else
		n = strcspn(p, ":/?#");
	if (p + n > end)
		n = (size_t)(end - p);
	snprintf(out, len, "%.*s", (int)n, p);
	for (char *c = out; *c; c++)
		*c = (char)tolower((unsigned char)*c);
}

int pkg_source_confirmed(const struct pkg_run *r, const char *url)
{
	char host[PKG_NET_NAME];

	pkg_url_host(url ? url : "", host, sizeof(host));
	if (!host[0] || !r->net_seen)
		return -1;
	for (size_t i = 0; i < r->n_net; i++) {
		const char *n = r->net[i];
		size_t l = strlen(n);

		if (l && n[l - 1] == '.')
			l--;   /* a qname's trailing dot */
		if (l == strlen(host) && strncasecmp(n, host, l) == 0)
			return 1;
	}
	return 0;
}
