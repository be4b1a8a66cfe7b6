/*
 * Kernel bindings: the addresses of an allowed DNS answer go into the ruleset's sets
 * (nft/nft.h nft_bound_*), keyed by session mark, address and port (or address alone
 * for names allowed on every port), with the answer's clamped TTL as timeout, so a new
 * TCP flow's SYN to them is accepted in the kernel. Called under g->lock before the
 * answer's verdict, and synchronous (the kernel's ACK is awaited): when the client
 * reads the answer the elements are there. A failure costs nothing but latency: the
 * SYN is then queued and decided by the worker, as without the sets.
 *
 * An element the gateway installed so lately that its timeout still covers 90 % of the
 * new TTL is not sent again: a busy resolver answers the same name many times a
 * second, and a netlink batch acknowledged per answer made the enforcing gateway's DNS
 * 30 % slower than the observing one. So an element is refreshed at most once per tenth
 * of its TTL; a SYN after the kernel's element expired is queued and decided by the
 * worker, whose own binding follows every answer.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/log.h"
#include "gateway/gw_int.h"
#include "nft/nft.h"

#define KBIND_PORTS 32   /* ports of one name bound in the kernel; more: queued */
#define KBIND_RECENT 4096 /* elements remembered (direct-mapped: a collision forgets) */

struct kbind_recent {
	struct nft_bound e[KBIND_RECENT];   /* timeout_ms: monotonic expiry; 0: empty */
};

static size_t recent_slot(const struct nft_bound *b)
{
	uint32_t h = fnv1a_u32(fnv1a_u32(FNV1A_INIT, b->mark), b->port);

	return fnv1a(h, b->addr, b->family == AF_INET ? 4 : 16) % KBIND_RECENT;
}

static bool recent_same(const struct nft_bound *a, const struct nft_bound *b)
{
	return a->mark == b->mark && a->family == b->family && a->port == b->port &&
	       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

/* Whether b is in the kernel with more than 90 % of its new timeout left. */
static bool recent_covers(const struct gateway *g, const struct nft_bound *b, uint64_t now)
{
	const struct nft_bound *r;

	if (!g->krecent)
		return false;
	r = &g->krecent->e[recent_slot(b)];
	return r->timeout_ms && recent_same(r, b) && r->timeout_ms > now + b->timeout_ms / 10 * 9;
}

static void recent_note(struct gateway *g, const struct nft_bound *v, size_t n, uint64_t now)
{
	if (!g->krecent)
		g->krecent = calloc(1, sizeof(*g->krecent));   /* none: no shortcut */
	for (size_t i = 0; g->krecent && i < n; i++) {
		struct nft_bound *r = &g->krecent->e[recent_slot(&v[i])];

		*r = v[i];
		r->timeout_ms = now + v[i].timeout_ms;
	}
}

void gw_kbind_open(struct gateway *g)
{
	struct nft_options o;
	int ret;

	nft_options_init(&o);
	o.netns = g->netns;
	ret = nft_open(&o, &g->nft);
	if (ret) {
		g->nft = NULL;
		log_errno(ret, "gateway: no kernel bindings (SYNs of bound flows are queued)");
	}
}

void gw_kbind_close(struct gateway *g)
{
	nft_close(g->nft);
	g->nft = NULL;
	free(g->krecent);
	g->krecent = NULL;
}

/*
 * Address-level blocks (deny CIDR, DoH address, private range, ...) are decided
 * before any name: no element for those, their SYN goes to the worker and is rejected.
 */
static bool addr_ok(const struct policy *p, int family, const uint8_t *addr, uint16_t port)
{
	struct policy_decision d;

	policy_decide_addr(p, family, addr, port, IPPROTO_TCP, &d);
	return d.verdict == POLICY_ALLOW || !strcmp(d.reason, "not_allowed");
}

static void push(const struct gateway *g, struct nft_bound *v, size_t *n, uint32_t mark,
		 const struct dns_addr *a, uint16_t port, uint64_t timeout_ms, uint64_t now)
{
	struct nft_bound *e;

	if (*n >= NFT_BOUND_MAX)
		return;
	e = &v[*n];
	memset(e, 0, sizeof(*e));
	e->mark = mark;
	e->family = a->family;
	memcpy(e->addr, a->addr, a->family == AF_INET ? 4 : 16);
	e->port = port;
	e->timeout_ms = timeout_ms;
	if (!recent_covers(g, e, now))
		(*n)++;
}

void gw_kbind_answer(struct gateway *g, uint32_t mark, const struct dns_msg *d,
		     const char *name, const struct policy *p, const uint64_t *ttl_ms)
{
	uint16_t ports[KBIND_PORTS];
	struct nft_bound *v;
	size_t np = 0, n = 0;
	uint64_t now = time_mono_ms();
	int any, ret;

	if (!g->nft || !p || d->n_addrs == 0)
		return;
	any = policy_bind_ports(p, name, ports, KBIND_PORTS, &np);
	if (any < 0)
		return;
	v = malloc(NFT_BOUND_MAX * sizeof(*v));
	if (!v) {
		atomic_fetch_add_explicit(&g->st.kbind_errors, 1, memory_order_relaxed);
		return;
	}
	for (size_t i = 0; i < d->n_addrs; i++) {
		const struct dns_addr *a = &d->addrs[i];

		if (any && addr_ok(p, a->family, a->addr, 0))
			push(g, v, &n, nft_mark_make(nft_mark_id(mark)), a, 0, ttl_ms[i], now);
		for (size_t k = 0; k < np; k++)
			if (addr_ok(p, a->family, a->addr, ports[k]))
				push(g, v, &n, nft_mark_make(nft_mark_id(mark)), a, ports[k],
				     ttl_ms[i], now);
	}
	gw_flood_lock_nft(g);
	ret = n ? nft_bound_add(g->nft, v, n) : 0;
	gw_flood_unlock_nft(g);
	if (ret == 0)
		recent_note(g, v, n, now);
	free(v);
	if (ret) {
		atomic_fetch_add_explicit(&g->st.kbind_errors, 1, memory_order_relaxed);
		log_errno(ret, "gateway: kernel binding of %s not installed (its SYNs are queued)",
			  name);
		return;
	}
	atomic_fetch_add_explicit(&g->st.kbind_elements, n, memory_order_relaxed);
}

void gw_kbind_flush(struct gateway *g, uint32_t mark_id)
{
	int ret;

	if (!g->nft)
		return;
	/* Whatever was flushed is installed again at the next answer. Only that session's
	 * entries are forgotten: the others' stay known, for a tamper restore. */
	for (size_t i = 0; g->krecent && i < KBIND_RECENT; i++)
		if (!mark_id || g->krecent->e[i].mark == nft_mark_make(mark_id))
			memset(&g->krecent->e[i], 0, sizeof(g->krecent->e[i]));
	gw_flood_lock_nft(g);
	ret = nft_bound_flush(g->nft, mark_id ? nft_mark_make(mark_id) : 0);
	gw_flood_unlock_nft(g);
	if (ret && ret != -ENOENT) {
		atomic_fetch_add_explicit(&g->st.kbind_errors, 1, memory_order_relaxed);
		log_errno(ret, "gateway: kernel bindings of mark %u not removed", mark_id);
	}
}

/* The recent elements still in force, with what is left of their timeout. */
static size_t recent_live(const struct gateway *g, struct nft_bound *v, size_t from,
			  size_t *next, uint64_t now)
{
	size_t n = 0, i;

	for (i = from; i < KBIND_RECENT && n < NFT_BOUND_MAX; i++) {
		const struct nft_bound *r = &g->krecent->e[i];

		if (!r->timeout_ms || r->timeout_ms <= now + 1)
			continue;
		v[n] = *r;
		v[n++].timeout_ms = r->timeout_ms - now;
	}
	*next = i;
	return n;
}

/*
 * After the ruleset was put back (a tamper restore replaces the table, and its sets
 * with it): the elements this gateway installed that have not expired go in again with
 * the rest of their timeout. The cache is direct-mapped, so an element it forgot is
 * not restored: its next SYN is queued and decided by the worker (latency, not policy).
 */
int gateway_kbind_restore(struct gateway *g, size_t *restored)
{
	struct nft_bound *v;
	uint64_t now = time_mono_ms();
	size_t from = 0, n;
	int ret = 0;

	*restored = 0;
	if (!g)
		return 0;
	v = malloc(NFT_BOUND_MAX * sizeof(*v));
	if (!v)
		return -ENOMEM;
	pthread_mutex_lock(&g->lock);
	while (g->nft && g->krecent && from < KBIND_RECENT && ret == 0) {
		n = recent_live(g, v, from, &from, now);
		gw_flood_lock_nft(g);
		ret = n ? nft_bound_add(g->nft, v, n) : 0;
		gw_flood_unlock_nft(g);
		if (ret == 0)
			*restored += n;
	}
	pthread_mutex_unlock(&g->lock);
	free(v);
	if (ret == 0)   /* the flood limits went with the table too */
		ret = gw_flood_restore(g, restored);
	return ret;
}

uint32_t gateway_kbind_portid(struct gateway *g)
{
	uint32_t id = 0;

	if (!g)
		return 0;
	pthread_mutex_lock(&g->lock);
	if (g->nft)
		id = nft_handle_portid(g->nft);
	pthread_mutex_unlock(&g->lock);
	return id;
}
