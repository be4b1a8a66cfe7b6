/*
 * The gateway's own nft socket in its namespace (g->nft), for the flood limits
 * (gateway/flood.c, nft/nft_flood.c). Until issue 14 it also put the addresses of
 * allowed DNS answers into kernel sets (allow4/allow6, bound4any/bound6any) so their
 * SYNs were accepted in the kernel; since every SYN must reach the worker (the first
 * flight starts at its sequence number, docs/nft-ruleset.md "Bound addresses") no rule
 * read those sets, and they are gone: an answer's addresses are bound in the worker's
 * table only (gateway/dnsbind.c). The socket's port id tells the tamper watch that the
 * gateway's commits are the daemon's own.
 */
#include <errno.h>

#include "common/log.h"
#include "gateway/gw_int.h"
#include "nft/nft.h"

void gw_kbind_open(struct gateway *g)
{
	struct nft_options o;
	int ret;

	nft_options_init(&o);
	o.netns = g->netns;
	ret = nft_open(&o, &g->nft);
	if (ret) {
		g->nft = NULL;
		log_errno(ret, "gateway: no nft socket (no flood limit in the kernel)");
	}
}

void gw_kbind_close(struct gateway *g)
{
	nft_close(g->nft);
	g->nft = NULL;
}

/*
 * After the ruleset was put back (a tamper restore replaces the table, and its objects
 * with it): the flood limits of the sessions that have one go in again.
 */
int gateway_kbind_restore(struct gateway *g, size_t *restored)
{
	*restored = 0;
	if (!g)
		return 0;
	return gw_flood_restore(g, restored);
}

uint32_t gateway_kbind_portid(struct gateway *g)
{
	uint32_t id = 0;

	if (!g)
		return 0;
	gw_flood_lock_nft(g);
	if (g->nft)
		id = nft_handle_portid(g->nft);
	gw_flood_unlock_nft(g);
	return id;
}
