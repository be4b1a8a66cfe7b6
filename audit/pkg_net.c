/*
 * source_confirmed: the names and addresses the gateway saw an installer's process
 * tree resolve (net.dns qname) and connect to (net.connect domain, sni, http_host,
 * dst.ip), compared with the host of the package's source.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "audit/pkg_int.h"
#include "journal/event.h"

/* The event's own fields as a JSON object: its body is ",\"k\":v,..." (our encoder's). */
static json_t *body_json(const struct event *e)
{
	json_t *o;
	char *s;

	if (e->body.len < 2 || e->body.data[0] != ',')
		return NULL;
	s = malloc(e->body.len + 2);
	if (!s)
		return NULL;
	s[0] = '{';
	memcpy(s + 1, e->body.data + 1, e->body.len - 1);
	s[e->body.len] = '}';
	s[e->body.len + 1] = '\0';
	o = json_loadb(s, e->body.len + 1, 0, NULL);
	free(s);
	return o;
}

static void add_name(char names[][PKG_NET_NAME], size_t *n, const char *v)
{
	if (!v || !v[0] || *n == 4)
		return;
	snprintf(names[(*n)++], PKG_NET_NAME, "%s", v);
}

int pkg_net_names(const struct event *e, long *pid, char names[4][PKG_NET_NAME], size_t *n)
{
	json_t *o;

	*n = 0;
	if (strcmp(e->type, "net.connect") != 0 && strcmp(e->type, "net.dns") != 0)
		return -1;
	o = body_json(e);
	if (!o)
		return -1;
	*pid = (long)json_integer_value(json_object_get(o, "pid"));
	add_name(names, n, json_string_value(json_object_get(o, "qname")));
	add_name(names, n, json_string_value(json_object_get(o, "domain")));
	add_name(names, n, json_string_value(json_object_get(o, "sni")));
	add_name(names, n, json_string_value(json_object_get(o, "http_host")));
	add_name(names, n, json_string_value(json_object_get(json_object_get(o, "dst"), "ip")));
	json_decref(o);
	return *pid > 0 ? 0 : -1;
}

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
