/*
 * The one place sessions talk to nftables: cgroup id -> mark and iface -> mark elements
 * of the gateway's maps, added at create/adopt and removed at cleanup. Without an
 * installed ruleset (gateway off) these are no-ops: the mark still identifies the
 * session in the registry and survives restarts, so the elements can be added later.
 */
#include <errno.h>

#include "daemon/session_int.h"
#include "nft/nft.h"

uint32_t sess_nft_mark(uint32_t id)
{
	return nft_mark_make(id);
}

static struct nft_handle *handle(struct sessions *ss)
{
	return ss->d->nft;
}

static void describe(const struct session *s, struct nft_session *n)
{
	n->mark = nft_mark_make(s->mark);
	n->cgroup_id = s->cgroup_id;
	n->ifnames = (const char *const *)s->ifaces;
	n->n_ifnames = s->n_ifaces;
}

int sess_nft_add(struct sessions *ss, const struct session *s)
{
	struct nft_session n;
	int ret;

	if (!handle(ss))
		return 0;
	describe(s, &n);
	ret = nft_session_add(handle(ss), &n);
	/* Adopting after a restart: the elements of the old run may still be there. */
	if (ret == -EEXIST) {
		nft_session_del(handle(ss), &n);
		ret = nft_session_add(handle(ss), &n);
	}
	return ret;
}

int sess_nft_del(struct sessions *ss, const struct session *s)
{
	struct nft_session n;
	int ret;

	if (!handle(ss))
		return 0;
	describe(s, &n);
	ret = nft_session_del(handle(ss), &n);
	return ret == -ENOENT ? 0 : ret;
}
