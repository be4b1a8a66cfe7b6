/*
 * Kernel bindings: the addresses of an allowed DNS answer go into the ruleset's sets
 * (nft/nft.h nft_bound_*), keyed by session mark, address and port (or address alone
 * for names allowed on every port), with the answer's clamped TTL as timeout, so a new
 * TCP flow's SYN to them is accepted in the kernel. Called under g->lock before the
 * answer's verdict, and synchronous (the kernel's ACK is awaited): when the client
 * reads the answer the elements are there. A failure costs nothing but latency: the
 * SYN is then queued and decided by the worker, as without the sets.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "gateway/gw_int.h"
#include "nft/nft.h"

#define KBIND_PORTS 32   /* ports of one name bound in the kernel; more: queued */

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

static void push(struct nft_bound *v, size_t *n, uint32_t mark, const struct dns_addr *a,
		 uint16_t port, uint64_t timeout_ms)
{
	struct nft_bound *e;

	if (*n >= NFT_BOUND_MAX)
		return;
	e = &v[(*n)++];
	memset(e, 0, sizeof(*e));
	e->mark = mark;
	e->family = a->family;
	memcpy(e->addr, a->addr, a->family == AF_INET ? 4 : 16);
	e->port = port;
	e->timeout_ms = timeout_ms;
}

void gw_kbind_answer(struct gateway *g, uint32_t mark, const struct dns_msg *d,
		     const char *name, const struct policy *p, const uint64_t *ttl_ms)
{
	uint16_t ports[KBIND_PORTS];
	struct nft_bound *v;
	size_t np = 0, n = 0;
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
			push(v, &n, nft_mark_make(nft_mark_id(mark)), a, 0, ttl_ms[i]);
		for (size_t k = 0; k < np; k++)
			if (addr_ok(p, a->family, a->addr, ports[k]))
				push(v, &n, nft_mark_make(nft_mark_id(mark)), a, ports[k],
				     ttl_ms[i]);
	}
	ret = n ? nft_bound_add(g->nft, v, n) : 0;
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
	ret = nft_bound_flush(g->nft, mark_id ? nft_mark_make(mark_id) : 0);
	if (ret && ret != -ENOENT) {
		atomic_fetch_add_explicit(&g->st.kbind_errors, 1, memory_order_relaxed);
		log_errno(ret, "gateway: kernel bindings of mark %u not removed", mark_id);
	}
}
