/*
 * Bound-address elements: (session mark, address, port) in allow4/allow6 and (session
 * mark, address) in bound4any/bound6any, each with the timeout of the DNS answer that
 * bound it. Added in one batch per answer; removed by the kernel's timeout, or for a
 * whole session (or everything, on a policy reload) by listing the sets and deleting
 * the elements carrying its mark.
 */
#include <errno.h>
/* libc network headers before the linux/ ones, which would redefine them. */
#include <netinet/in.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "nft/nft_int.h"

#define BOUND_KEY_MAX 24          /* mark . ipv6 . port, each padded to 4 bytes */
#define DUMP_BUF 65536
#define FLUSH_TRIES 3             /* an element may expire between list and delete */

static const char *const bound_sets[] = { NFT_SET_ALLOW4, NFT_SET_ALLOW6, NFT_SET_ANY4,
					  NFT_SET_ANY6 };

/* Which set an element goes to and its key, as the ruleset's lookups build it. */
static int bound_key(const struct nft_bound *e, uint8_t key[BOUND_KEY_MAX], uint32_t *len,
		     size_t *set)
{
	size_t al = e->family == AF_INET ? 4 : 16;
	uint16_t port = htons(e->port);

	if ((e->family != AF_INET && e->family != AF_INET6) || nft_mark_check(e->mark) != 0 ||
	    e->timeout_ms == 0)
		return -EINVAL;
	memset(key, 0, BOUND_KEY_MAX);
	memcpy(key, &e->mark, 4);              /* meta mark: host order */
	memcpy(key + 4, e->addr, al);          /* network order */
	*len = (uint32_t)(4 + al);
	if (e->port != 0) {
		memcpy(key + *len, &port, 2);  /* th dport, padded to 4 */
		*len += 4;
	}
	*set = (e->family == AF_INET ? 0 : 1) + (e->port == 0 ? 2 : 0);
	return 0;
}

static int key_add(struct nftnl_set *s, const uint8_t *key, uint32_t len, uint64_t timeout)
{
	struct nftnl_set_elem *e = nft_elem_keyed(key, len);

	if (e == NULL)
		return -ENOMEM;
	/* Expiration too: re-adding an element with an unchanged timeout updates only
	 * what is given, and the expiration is what must restart. */
	if (timeout) {
		nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT, timeout);
		nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_EXPIRATION, timeout);
	}
	nftnl_set_elem_add(s, e);
	return 0;
}

/* One NEWSETELEM or DELSETELEM message per non-empty set, all in one batch. */
static int sets_send(struct nft_handle *h, struct nftnl_set *s[4], const size_t n[4],
		     uint16_t type)
{
	/* No EXCL: adding a bound element again refreshes its timeout. */
	uint16_t flags = type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0;
	struct nft_batch b;
	int ret = nft_batch_init(&b, h->seq);

	if (ret != 0)
		return ret;
	for (size_t i = 0; i < 4; i++) {
		struct nlmsghdr *nlh;

		if (n[i] == 0 || (nlh = nft_batch_msg(&b, type, flags)) == NULL)
			continue;
		nftnl_set_elems_nlmsg_build_payload(nlh, s[i]);
		nft_batch_done(&b, nlh);
	}
	ret = b.err == 0 && b.nacks == 0 ? 0 : nft_batch_send(h, &b);
	nft_batch_free(&b);
	return ret;
}

static void sets_free(struct nftnl_set *s[4])
{
	for (size_t i = 0; i < 4; i++)
		if (s[i] != NULL)
			nftnl_set_free(s[i]);
}

static int sets_alloc(struct nftnl_set *s[4])
{
	for (size_t i = 0; i < 4; i++)
		if ((s[i] = nft_set_named(bound_sets[i])) == NULL) {
			sets_free(s);
			return -ENOMEM;
		}
	return 0;
}

int nft_bound_add(struct nft_handle *h, const struct nft_bound *e, size_t n)
{
	struct nftnl_set *s[4] = { 0 };
	size_t cnt[4] = { 0 }, which;
	uint8_t key[BOUND_KEY_MAX];
	uint32_t len;
	int ret;

	if (n > NFT_BOUND_MAX)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		if (bound_key(&e[i], key, &len, &which) != 0)
			return -EINVAL;
	ret = sets_alloc(s);
	for (size_t i = 0; i < n && ret == 0; i++) {
		(void)bound_key(&e[i], key, &len, &which);
		ret = key_add(s[which], key, len, e[i].timeout_ms);
		cnt[which]++;
	}
	if (ret == 0)
		ret = sets_send(h, s, cnt, NFT_MSG_NEWSETELEM);
	sets_free(s);
	return ret;
}

/* What a listing collects: the keys of set carrying mark (0: every key). */
struct dump_ctx {
	uint32_t mark;
	struct nftnl_set *del;
	size_t n;
	int err;
};

static int dump_elem(struct nftnl_set_elem *e, void *data)
{
	struct dump_ctx *c = data;
	uint32_t len = 0;
	const void *key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);
	uint32_t mark;

	if (key == NULL || len < 4)
		return 0;
	memcpy(&mark, key, 4);
	if (c->mark != 0 && mark != c->mark)
		return 0;
	if (key_add(c->del, key, len, 0) != 0) {
		c->err = -ENOMEM;
		return -1;
	}
	c->n++;
	return 0;
}

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *c = data;
	struct nftnl_set *s = nftnl_set_alloc();

	if (s == NULL) {
		c->err = -ENOMEM;
		return MNL_CB_ERROR;
	}
	if (nftnl_set_elems_nlmsg_parse(nlh, s) < 0) {
		nftnl_set_free(s);
		c->err = -EPROTO;
		return MNL_CB_ERROR;
	}
	nftnl_set_elem_foreach(s, dump_elem, c);
	nftnl_set_free(s);
	return c->err ? MNL_CB_ERROR : MNL_CB_OK;
}

/* Lists set name into c (a GETSETELEM dump). 0 or -errno. */
static int dump_set(struct nft_handle *h, const char *name, struct dump_ctx *c, char *buf)
{
	struct nftnl_set *s = nft_set_named(name);
	uint32_t seq = h->seq++;
	struct nlmsghdr *nlh;
	ssize_t n;
	int r;

	if (s == NULL)
		return -ENOMEM;
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETSETELEM, NFPROTO_INET,
				    NLM_F_DUMP, seq);
	nftnl_set_elems_nlmsg_build_payload(nlh, s);
	nftnl_set_free(s);
	if (mnl_socket_sendto(h->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(h->nl, buf, DUMP_BUF);
		if (n < 0)
			return -errno;
		r = mnl_cb_run(buf, (size_t)n, seq, h->portid, dump_cb, c);
	} while (r > 0);
	if (r < 0)
		return c->err ? c->err : -errno;
	return c->err;
}

static int flush_once(struct nft_handle *h, uint32_t mark, char *buf)
{
	struct nftnl_set *del[4] = { 0 };
	size_t cnt[4] = { 0 };
	int ret = sets_alloc(del);

	for (size_t i = 0; i < 4 && ret == 0; i++) {
		struct dump_ctx c = { .mark = mark, .del = del[i] };

		ret = dump_set(h, bound_sets[i], &c, buf);
		cnt[i] = c.n;
	}
	if (ret == 0)
		ret = sets_send(h, del, cnt, NFT_MSG_DELSETELEM);
	sets_free(del);
	return ret;
}

int nft_bound_flush(struct nft_handle *h, uint32_t mark)
{
	char *buf;
	int ret = -ENOENT;

	if (mark != 0 && nft_mark_check(mark) != 0)
		return -EINVAL;
	buf = malloc(DUMP_BUF);
	if (buf == NULL)
		return -ENOMEM;
	/* ENOENT: an element expired between the listing and its deletion; list again. */
	for (int i = 0; i < FLUSH_TRIES && ret == -ENOENT; i++)
		ret = flush_once(h, mark, buf);
	free(buf);
	return ret;
}
