/* Session map elements (cgroup id → mark, interface name → mark), and the set and element
 * constructors that nft_flood.c shares. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <string.h>

#include "nft/nft_int.h"

int nft_session_check(const struct nft_session *s)
{
	if (nft_mark_check(s->mark) != 0 || s->n_ifnames > NFT_IFNAMES_MAX)
		return -EINVAL;
	if ((s->cgroup_id == 0 && s->n_ifnames == 0) || s->rate_bytes > NFT_RATE_MAX)
		return -EINVAL;
	if (s->n_ifnames > 0 && s->ifnames == NULL)
		return -EINVAL;
	for (size_t i = 0; i < s->n_ifnames; i++) {
		size_t n = s->ifnames[i] ? strlen(s->ifnames[i]) : 0;

		if (n == 0 || n >= IFNAMSIZ)
			return -EINVAL;
	}
	return 0;
}

struct nftnl_set *nft_set_named(const char *name)
{
	struct nftnl_set *s = nftnl_set_alloc();

	if (s == NULL)
		return NULL;
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	if (nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE) < 0 ||
	    nftnl_set_set_str(s, NFTNL_SET_NAME, name) < 0) {
		nftnl_set_free(s);
		return NULL;
	}
	return s;
}

struct nftnl_set_elem *nft_elem_keyed(const void *key, uint32_t len)
{
	struct nftnl_set_elem *e = nftnl_set_elem_alloc();

	if (e == NULL)
		return NULL;
	if (nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, len) < 0) {
		nftnl_set_elem_free(e);
		return NULL;
	}
	return e;
}

/* Adds key → mark to s (the mark only matters for NEWSETELEM). */
static int elem_add(struct nftnl_set *s, const void *key, uint32_t len, uint32_t mark)
{
	struct nftnl_set_elem *e = nft_elem_keyed(key, len);

	if (e == NULL)
		return -ENOMEM;
	if (nftnl_set_elem_set(e, NFTNL_SET_ELEM_DATA, &mark, sizeof(mark)) < 0) {
		nftnl_set_elem_free(e);
		return -ENOMEM;
	}
	nftnl_set_elem_add(s, e);
	return 0;
}

static void emit_elems(struct nft_batch *b, struct nftnl_set *s, uint16_t type)
{
	/* EXCL: a key already mapped (maybe to another session) is an error, not an
	 * overwrite; two sessions never share a cgroup or an interface. */
	uint16_t flags = type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE | NLM_F_EXCL : 0;
	struct nlmsghdr *nlh = nft_batch_msg(b, type, flags);

	if (nlh == NULL)
		return;
	nftnl_set_elems_nlmsg_build_payload(nlh, s);
	nft_batch_done(b, nlh);
}

static void elems_cgroup(struct nft_batch *b, const struct nft_session *ss, uint16_t type)
{
	struct nftnl_set *s = nft_set_named(NFT_SET_CGROUP);

	if (s == NULL || elem_add(s, &ss->cgroup_id, sizeof(ss->cgroup_id), ss->mark) != 0)
		b->err = -ENOMEM;
	else
		emit_elems(b, s, type);
	if (s != NULL)
		nftnl_set_free(s);
}

static void elems_iface(struct nft_batch *b, const struct nft_session *ss, uint16_t type)
{
	struct nftnl_set *s = nft_set_named(NFT_SET_IFACE);

	if (s == NULL) {
		b->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < ss->n_ifnames && b->err == 0; i++) {
		char key[IFNAMSIZ] = { 0 };   /* meta iifname loads 16 zero-padded bytes */

		memcpy(key, ss->ifnames[i], strlen(ss->ifnames[i]));
		if (elem_add(s, key, sizeof(key), ss->mark) != 0)
			b->err = -ENOMEM;
	}
	if (b->err == 0)
		emit_elems(b, s, type);
	nftnl_set_free(s);
}

/* Appends s's elements to b as NEWSETELEM or DELSETELEM; skips maps o does not use. */
void nft_elems_session(struct nft_batch *b, const struct nft_options *o,
		       const struct nft_session *s, uint16_t type)
{
	if (s->cgroup_id != 0 && o->cgroup_mode)
		elems_cgroup(b, s, type);
	if (s->n_ifnames > 0 && o->iface_mode)
		elems_iface(b, s, type);
	nft_rate_elems(b, s, type);
}
