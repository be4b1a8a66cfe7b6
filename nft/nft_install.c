/* The handle and every batch it commits: probe, install, uninstall, session add/del. */
#include <errno.h>
#include <stdio.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nft/nft_int.h"

int nft_open(const struct nft_options *o, struct nft_handle **out)
{
	struct nft_handle *h;
	int ret = nft_options_check(o);

	if (ret != 0)
		return ret;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->opt = *o;
	if (o->netns != NULL) {
		/* Copy: the caller's string need not outlive the handle. */
		strcpy(h->netns, o->netns);
		h->opt.netns = h->netns;
	}
	ret = nft_socket_open(h->opt.netns, &h->nl);
	if (ret != 0) {
		free(h);
		return ret;
	}
	h->portid = mnl_socket_get_portid(h->nl);
	/* Distinct from a previous run's stale ACKs, and never 0. */
	h->seq = (uint32_t)time(NULL) | 1u;
	h->impl = NFT_QIMPL_AUTO;
	*out = h;
	return 0;
}

void nft_close(struct nft_handle *h)
{
	if (h == NULL)
		return;
	if (h->nl != NULL)
		mnl_socket_close(h->nl);
	free(h);
}

enum nft_qimpl nft_installed_qimpl(const struct nft_handle *h)
{
	return h->impl;
}

static void emit_probe_chain(struct nft_batch *b)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh;

	if (c == NULL) {
		b->err = -ENOMEM;
		return;
	}
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	if (nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFT_PROBE_TABLE) < 0 ||
	    nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, "probe") < 0)
		b->err = -ENOMEM;
	nlh = nft_batch_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE);
	if (nlh != NULL) {
		nftnl_chain_nlmsg_build_payload(nlh, c);
		nft_batch_done(b, nlh);
	}
	nftnl_chain_free(c);
}

static void emit_probe_rule(struct nft_batch *b, const struct nft_options *o)
{
	struct nft_rb rb;

	nft_rb_init_in(&rb, NFT_PROBE_TABLE, "probe");
	nft_rb_queue(&rb, o, NFT_QIMPL_NATIVE);
	nft_rb_emit(&rb, b);
}

int nft_probe_queue(struct nft_handle *h, enum nft_qimpl *found)
{
	struct nft_batch b;
	int ret = nft_batch_init(&b, h->seq);

	if (ret != 0)
		return ret;
	/* Add and delete in one batch: nothing is left behind whatever the answer. */
	nft_emit_table(&b, NFT_PROBE_TABLE, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	emit_probe_chain(&b);
	emit_probe_rule(&b, &h->opt);
	nft_emit_table(&b, NFT_PROBE_TABLE, NFT_MSG_DELTABLE, 0);
	ret = nft_batch_send(h, &b);
	nft_batch_free(&b);
	if (ret == 0)
		*found = NFT_QIMPL_NATIVE;
	else if (ret == -ENOENT)   /* no "queue" expression type in this kernel */
		*found = NFT_QIMPL_COMPAT;
	return ret == -ENOENT ? 0 : ret;
}

static int resolve_impl(struct nft_handle *h, enum nft_qimpl *impl)
{
	if (h->opt.qimpl != NFT_QIMPL_AUTO) {
		*impl = h->opt.qimpl;
		return 0;
	}
	if (h->impl != NFT_QIMPL_AUTO) {   /* probed before: the kernel did not change */
		*impl = h->impl;
		return 0;
	}
	return nft_probe_queue(h, impl);
}

int nft_install(struct nft_handle *h, const struct nft_session *s, size_t n)
{
	enum nft_qimpl impl;
	struct nft_batch b;
	int ret;

	for (size_t i = 0; i < n; i++)
		if (nft_session_check(&s[i]) != 0)
			return -EINVAL;
	ret = resolve_impl(h, &impl);
	if (ret != 0)
		return ret;
	ret = nft_batch_init(&b, h->seq);
	if (ret != 0)
		return ret;
	nft_rules_build(&b, &h->opt, impl);
	for (size_t i = 0; i < n; i++)
		nft_elems_session(&b, &h->opt, &s[i], NFT_MSG_NEWSETELEM);
	ret = nft_batch_send(h, &b);
	nft_batch_free(&b);
	if (ret == 0)
		h->impl = impl;
	return ret;
}

int nft_uninstall(struct nft_handle *h)
{
	struct nft_batch b;
	struct nftnl_table *t;
	struct nlmsghdr *nlh;
	int ret = nft_batch_init(&b, h->seq);

	if (ret != 0)
		return ret;
	t = nftnl_table_alloc();
	if (t == NULL || nftnl_table_set_str(t, NFTNL_TABLE_NAME, NFT_TABLE) < 0)
		b.err = -ENOMEM;
	nlh = nft_batch_msg(&b, NFT_MSG_DELTABLE, 0);
	if (nlh != NULL && t != NULL) {
		nftnl_table_nlmsg_build_payload(nlh, t);
		nft_batch_done(&b, nlh);
	}
	if (t != NULL)
		nftnl_table_free(t);
	ret = nft_batch_send(h, &b);
	nft_batch_free(&b);
	return ret == -ENOENT ? 0 : ret;
}

static int session_batch(struct nft_handle *h, const struct nft_session *s, uint16_t type)
{
	struct nft_batch b;
	int ret = nft_session_check(s);

	if (ret != 0)
		return ret;
	ret = nft_batch_init(&b, h->seq);
	if (ret != 0)
		return ret;
	nft_elems_session(&b, &h->opt, s, type);
	/* Nothing this ruleset can hold (e.g. only a cgroup id with cgroup mode off). */
	if (b.err == 0 && b.nacks == 0)
		ret = -EINVAL;
	else
		ret = nft_batch_send(h, &b);
	nft_batch_free(&b);
	return ret;
}

int nft_session_add(struct nft_handle *h, const struct nft_session *s)
{
	return session_batch(h, s, NFT_MSG_NEWSETELEM);
}

int nft_session_del(struct nft_handle *h, const struct nft_session *s)
{
	return session_batch(h, s, NFT_MSG_DELSETELEM);
}
