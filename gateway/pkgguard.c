/*
 * `unapproved: block` (docs/packages.md): while a session whose policy says so runs an
 * installer, a flow of that installer's process tree may go only to a host of one of the
 * session's approved package sources. The package tracker (audit/) knows the runs and
 * their trees; the daemon's glue fills in the gateway's hooks (gateway.h) with it. Here:
 * the hooks, held in the gateway under a read-write lock (so the glue can clear them
 * before the tracker is freed), and the comparison of a flow's names with the approved
 * hosts.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "gateway/flow_names.h"
#include "gateway/gw_int.h"

void gateway_set_pkg_guard(struct gateway *g, const struct gw_pkg_guard *gd)
{
	pthread_rwlock_wrlock(&g->pkg_lock);
	if (gd)
		g->pkg = *gd;
	else
		memset(&g->pkg, 0, sizeof(g->pkg));
	pthread_rwlock_unlock(&g->pkg_lock);
}

bool gw_pkg_active(struct gateway *g, const char *sid)
{
	bool yes;

	pthread_rwlock_rdlock(&g->pkg_lock);
	yes = g->pkg.active && g->pkg.active(g->pkg.ctx, sid);
	pthread_rwlock_unlock(&g->pkg_lock);
	return yes;
}

bool gw_pkg_hosts_of(struct gateway *g, const char *sid, int64_t pid, struct gw_pkg_hosts *out)
{
	int n = -1;

	if (pid <= 0)
		return false;
	pthread_rwlock_rdlock(&g->pkg_lock);
	if (g->pkg.hosts)
		n = g->pkg.hosts(g->pkg.ctx, sid, (pid_t)pid, out->host, GW_PKG_HOSTS_MAX);
	pthread_rwlock_unlock(&g->pkg_lock);
	out->n = n > 0 ? (size_t)n : 0;
	return n >= 0;
}

void gw_pkg_seen(struct gateway *g, const char *sid, int64_t pid, const char *const *names,
		 size_t n)
{
	if (pid <= 0 || !sid || !sid[0] || n == 0)
		return;
	pthread_rwlock_rdlock(&g->pkg_lock);
	if (g->pkg.seen)
		g->pkg.seen(g->pkg.ctx, sid, (pid_t)pid, names, n);
	pthread_rwlock_unlock(&g->pkg_lock);
}

/*
 * name (len bytes: a port, brackets and a trailing dot already taken off) against host:
 * addresses compared as addresses, names case-insensitively.
 */
static bool same_host(const char *name, size_t len, const char *host)
{
	uint8_t a[16], b[16];
	char buf[GW_PKG_HOST_MAX];
	int fam = strchr(host, ':') ? AF_INET6 : AF_INET;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (inet_pton(fam, host, b) == 1)
		return inet_pton(fam, buf, a) == 1 && !memcmp(a, b, fam == AF_INET ? 4 : 16);
	return strlen(host) == len && strncasecmp(buf, host, len) == 0;
}

/*
 * Whether a name read from the wire (SNI, Host with its port, a bound name) is a host of
 * pk. Brackets hold an IPv6 literal, in a Host only: "[pkgs.test" or an SNI with a port
 * or a bracket names no host (a server would not route it), so it approves nothing.
 */
static bool approved(const struct gw_pkg_hosts *pk, const char *name, bool sni)
{
	size_t len = strlen(name);
	const char *colon = strrchr(name, ':');
	uint8_t a[16];
	int family;

	if (sni && strpbrk(name, "[]:"))
		return false;
	if (name[0] == '[') {   /* Host: [v6]:port */
		if (!gw_addr_literal(name, &family, a))
			return false;
		name++;
		len = strcspn(name, "]");
	} else if (colon && strchr(name, ':') == colon)
		len = (size_t)(colon - name);   /* name:port (one colon: not a bare IPv6) */
	if (len && name[len - 1] == '.')
		len--;
	for (size_t i = 0; i < pk->n; i++)
		if (same_host(name, len, pk->host[i]))
			return true;
	return false;
}

static bool addr_approved(const struct gw_pkg_hosts *pk, const struct flow *f)
{
	char a[INET6_ADDRSTRLEN];

	return inet_ntop(f->family, f->dst, a, sizeof(a)) && approved(pk, a, false);
}

static bool bound_approved(const struct gw_pkg_hosts *pk, const struct policy_flow *pf)
{
	for (size_t i = 0; i < pf->n_bound; i++)
		if (approved(pk, pf->bound_names[i], false))
			return true;
	return false;
}

bool gw_pkg_refused(const struct gw_pkg_hosts *pk, const struct flow *f,
		    const struct policy_flow *pf, bool early)
{
	if (early)
		return pf->n_bound && !bound_approved(pk, pf) && !addr_approved(pk, f);
	if (f->sni[0] || f->http_host[0])
		return (f->sni[0] && !approved(pk, f->sni, true)) ||
		       (f->http_host[0] && !approved(pk, f->http_host, false));
	return !addr_approved(pk, f) && !bound_approved(pk, pf);
}
