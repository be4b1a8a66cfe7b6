/*
 * The one place sessions talk to nftables: cgroup id -> mark and iface -> mark elements
 * of the gateway's maps, added at create/adopt and removed at cleanup. Without an
 * installed ruleset (gateway off) these are no-ops: the mark still identifies the
 * session in the registry and survives restarts, so the elements can be added later.
 */
#include <errno.h>
#include <stdlib.h>

#include "sessions/session_int.h"
#include "nft/nft.h"

uint32_t sess_nft_mark(uint32_t id)
{
	return nft_mark_make(id);
}

static struct nft_handle *handle(struct sessions *ss)
{
	return ss->nft;
}

static void describe(const struct session *s, struct nft_session *n)
{
	n->mark = nft_mark_make(s->mark);
	n->cgroup_id = s->cgroup_id;
	n->ifnames = (const char *const *)s->ifaces;
	n->n_ifnames = s->n_ifaces;
	n->rate_bytes = s->lim.net_rate > 0 ? (uint64_t)s->lim.net_rate : 0;
}

int sess_nft_add(struct sessions *ss, struct session *s)
{
	struct nft_session n;
	int ret;

	/* The packet path must know the mark before its first packet can carry it;
	 * conntrack entries of the mark older than the session are an earlier holder's. */
	ret = ss->hooks.bind ? ss->hooks.bind(ss->hooks.ctx, s->mark, s->id, s->cgroup,
					      s->policy, s->created_us) : 0;
	if (ret)
		return ret;
	/* Before the ruleset is installed the elements go in with it (sessions_nft_list). */
	s->nft_wanted = true;
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

int sess_nft_del(struct sessions *ss, struct session *s)
{
	struct nft_session n;
	int ret;

	s->nft_wanted = false;
	if (!handle(ss))
		return 0;
	describe(s, &n);
	ret = nft_session_del(handle(ss), &n);
	if ((ret == 0 || ret == -ENOENT) && ss->hooks.unbind)
		ss->hooks.unbind(ss->hooks.ctx, s->mark);
	return ret == -ENOENT ? 0 : ret;
}

int sessions_nft_list(struct sessions *ss, struct nft_session **out, size_t *n)
{
	struct nft_session *list;
	size_t i, count, k = 0;

	*out = NULL;
	*n = 0;
	count = ss ? sessions_count(ss->reg) : 0;
	if (count == 0)
		return 0;
	list = calloc(count, sizeof(*list));
	if (!list)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		const struct session *s = sessions_at(ss->reg, i);

		if (s->nft_wanted)
			describe(s, &list[k++]);
	}
	*out = list;
	*n = k;
	return 0;
}
