/*
 * Watching table inet sandgate for changes someone else made: a netfilter netlink
 * socket in the gateway's namespace joins NFNLGRP_NFTABLES and receives every commit's
 * notifications, one message per object (table, chain, rule, set, elements, object)
 * and then NFT_MSG_NEWGEN, which closes the commit and names the committing task
 * (NFTA_GEN_PROC_PID: the kernel's task_pid_nr, i.e. the thread id in the initial pid
 * namespace; NFTA_GEN_PROC_NAME: its comm). The messages of one commit are gathered
 * until its NEWGEN; a commit that touched our table and was not made by this process
 * (none of its threads, and not from a port id the daemon registered) is reported.
 *
 * Notifications lost to a full socket buffer (ENOBUFS) are reported too, as a change
 * nobody can name: the caller restores either way.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nft/nft_int.h"

#define WATCH_RECV_BUF 65536
#define WATCH_PORTIDS 8

struct nft_watch {
	struct mnl_socket *nl;
	uint32_t own_portid[WATCH_PORTIDS];
	size_t n_own;
	bool check_threads;        /* false in the fuzzer: no /proc lookups */
	struct nft_tamper cur;     /* the commit being gathered */
	bool touched;              /* cur holds a change of our table */
	bool own_portid_seen;      /* a message of this commit came from a registered port */
	char *buf;
};

/* The table attribute, and the one naming what changed, per message type. */
struct msg_kind {
	const char *op, *object;
	uint16_t name_attr;        /* 0: the table itself */
};

static const struct msg_kind *kind_of(uint16_t type)
{
	static const struct msg_kind kinds[] = {
		[NFT_MSG_NEWTABLE] = { "add", "table", 0 },
		[NFT_MSG_DELTABLE] = { "delete", "table", 0 },
		[NFT_MSG_NEWCHAIN] = { "add", "chain", NFTA_CHAIN_NAME },
		[NFT_MSG_DELCHAIN] = { "delete", "chain", NFTA_CHAIN_NAME },
		[NFT_MSG_NEWRULE] = { "add", "rule", NFTA_RULE_CHAIN },
		[NFT_MSG_DELRULE] = { "delete", "rule", NFTA_RULE_CHAIN },
		[NFT_MSG_NEWSET] = { "add", "set", NFTA_SET_NAME },
		[NFT_MSG_DELSET] = { "delete", "set", NFTA_SET_NAME },
		[NFT_MSG_NEWSETELEM] = { "add", "element", NFTA_SET_ELEM_LIST_SET },
		[NFT_MSG_DELSETELEM] = { "delete", "element", NFTA_SET_ELEM_LIST_SET },
		[NFT_MSG_NEWOBJ] = { "add", "object", NFTA_OBJ_NAME },
		[NFT_MSG_DELOBJ] = { "delete", "object", NFTA_OBJ_NAME },
		[NFT_MSG_NEWFLOWTABLE] = { "add", "flowtable", NFTA_FLOWTABLE_NAME },
		[NFT_MSG_DELFLOWTABLE] = { "delete", "flowtable", NFTA_FLOWTABLE_NAME },
	};

	if (type >= sizeof(kinds) / sizeof(kinds[0]) || kinds[type].op == NULL)
		return NULL;
	return &kinds[type];
}

int nft_watch_new(struct nft_watch **out)
{
	struct nft_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->buf = malloc(WATCH_RECV_BUF);
	if (!w->buf) {
		free(w);
		return -ENOMEM;
	}
	w->cur.pid = -1;
	*out = w;
	return 0;
}

int nft_watch_open(const char *netns, struct nft_watch **out)
{
	struct nft_watch *w = NULL;
	int grp = NFNLGRP_NFTABLES, ret;

	ret = nft_watch_new(&w);
	if (ret == 0)
		ret = nft_socket_open(netns, &w->nl);
	if (ret == 0 && mnl_socket_setsockopt(w->nl, NETLINK_ADD_MEMBERSHIP, &grp,
					      sizeof(grp)) < 0)
		ret = -errno;
	if (ret) {
		nft_watch_free(w);
		return ret;
	}
	w->check_threads = true;
	*out = w;
	return 0;
}

void nft_watch_free(struct nft_watch *w)
{
	if (!w)
		return;
	if (w->nl)
		mnl_socket_close(w->nl);
	free(w->buf);
	free(w);
}

int nft_watch_fd(const struct nft_watch *w)
{
	return w->nl ? mnl_socket_get_fd(w->nl) : -1;
}

int nft_watch_own_portid(struct nft_watch *w, uint32_t portid)
{
	if (w->n_own == WATCH_PORTIDS)
		return -ENOSPC;
	w->own_portid[w->n_own++] = portid;
	return 0;
}

uint32_t nft_handle_portid(const struct nft_handle *h)
{
	return h->portid;
}

static bool own_port(const struct nft_watch *w, uint32_t portid)
{
	for (size_t i = 0; i < w->n_own; i++)
		if (w->own_portid[i] == portid)
			return true;
	return false;
}

/* The committing thread is one of ours: its tid is under /proc/self/task. */
static bool own_thread(const struct nft_watch *w, int32_t tid)
{
	char path[64];

	if (!w->check_threads || tid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	return access(path, F_OK) == 0;
}

/* Counts one change into cur, merging it with an earlier one of the same kind. */
static void note_change(struct nft_tamper *t, const struct msg_kind *k, const char *name,
			size_t nlen)
{
	struct nft_change *c;

	t->total++;
	if (nlen >= sizeof(c->name))
		nlen = sizeof(c->name) - 1;
	for (size_t i = 0; i < t->n_changes; i++) {
		c = &t->changes[i];
		if (c->op == k->op && c->object == k->object && strlen(c->name) == nlen &&
		    memcmp(c->name, name, nlen) == 0) {
			c->count++;
			return;
		}
	}
	if (t->n_changes == NFT_WATCH_CHANGES_MAX) {
		t->more++;
		return;
	}
	c = &t->changes[t->n_changes++];
	c->op = k->op;
	c->object = k->object;
	memcpy(c->name, name, nlen);
	c->name[nlen] = '\0';
	c->count = 1;
}

struct attr_pick {
	uint16_t want1, want2;
	const struct nlattr *a1, *a2;
};

static int pick_cb(const struct nlattr *a, void *data)
{
	struct attr_pick *p = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type == p->want1)
		p->a1 = a;
	else if (p->want2 && type == p->want2)
		p->a2 = a;
	return MNL_CB_OK;
}

/* The string in a (not necessarily NUL-terminated), bounded by its payload. */
static size_t attr_strlen(const struct nlattr *a, const char **s)
{
	size_t len = mnl_attr_get_payload_len(a);
	const char *p = mnl_attr_get_payload(a);
	const char *nul = memchr(p, '\0', len);

	*s = p;
	return nul ? (size_t)(nul - p) : len;
}

static bool is_our_table(const struct nlattr *a)
{
	const char *s;
	size_t len;

	if (!a)
		return false;
	len = attr_strlen(a, &s);
	return len == sizeof(NFT_TABLE) - 1 && memcmp(s, NFT_TABLE, len) == 0;
}

static void object_msg(struct nft_watch *w, const struct nlmsghdr *nlh, const struct msg_kind *k)
{
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);
	struct attr_pick p = { .want1 = 1, .want2 = k->name_attr };   /* *_TABLE is 1 */
	const char *name = "";
	size_t nlen = 0;

	if (g->nfgen_family != NFPROTO_INET)
		return;
	if (mnl_attr_parse(nlh, sizeof(*g), pick_cb, &p) < 0 || !is_our_table(p.a1))
		return;
	if (k->name_attr && p.a2)
		nlen = attr_strlen(p.a2, &name);
	w->touched = true;
	if (own_port(w, nlh->nlmsg_pid))
		w->own_portid_seen = true;
	if (w->cur.portid == 0)
		w->cur.portid = nlh->nlmsg_pid;
	note_change(&w->cur, k, name, nlen);
}

static int gen_cb(const struct nlattr *a, void *data)
{
	struct nft_tamper *t = data;
	const char *s;
	size_t len;

	switch (mnl_attr_get_type(a)) {
	case NFTA_GEN_ID:
		if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			t->gen_id = ntohl(mnl_attr_get_u32(a));
		break;
	case NFTA_GEN_PROC_PID:
		if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			t->pid = (int32_t)ntohl(mnl_attr_get_u32(a));
		break;
	case NFTA_GEN_PROC_NAME:
		len = attr_strlen(a, &s);
		if (len >= sizeof(t->comm))
			len = sizeof(t->comm) - 1;
		memcpy(t->comm, s, len);
		t->comm[len] = '\0';
		break;
	}
	return MNL_CB_OK;
}

static void commit_reset(struct nft_watch *w)
{
	memset(&w->cur, 0, sizeof(w->cur));
	w->cur.pid = -1;
	w->touched = false;
	w->own_portid_seen = false;
}

/* NEWGEN closes a commit: report it when it touched our table and is not ours. */
static void gen_msg(struct nft_watch *w, const struct nlmsghdr *nlh, nft_tamper_fn fn,
		    void *ctx)
{
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);

	(void)g;
	if (mnl_attr_parse(nlh, sizeof(*g), gen_cb, &w->cur) < 0)
		w->cur.pid = -1;
	if (w->touched && !w->own_portid_seen && !own_port(w, nlh->nlmsg_pid) &&
	    !own_thread(w, w->cur.pid))
		fn(ctx, &w->cur);
	commit_reset(w);
}

static void one_msg(struct nft_watch *w, const struct nlmsghdr *nlh, nft_tamper_fn fn,
		    void *ctx)
{
	uint16_t type = NFNL_MSG_TYPE(nlh->nlmsg_type);
	const struct msg_kind *k;

	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(struct nfgenmsg)))
		return;
	if (type == NFT_MSG_NEWGEN)
		gen_msg(w, nlh, fn, ctx);
	else if ((k = kind_of(type)) != NULL)
		object_msg(w, nlh, k);
}

int nft_watch_feed(struct nft_watch *w, const void *buf, size_t len, nft_tamper_fn fn,
		   void *ctx)
{
	size_t off = 0;

	/* Bounds checked here, not with mnl_nlmsg_ok: it compares the length as a signed
	 * int, so a length above 2 GiB passes it. */
	while (len - off >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)((const char *)buf + off);
		struct nlmsghdr *copy = NULL;

		if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len - off)
			break;
		/*
		 * libmnl walks a message's attributes up to its *aligned* end: a last message
		 * whose padding is not in the buffer would be read past it (fuzz_nft_watch,
		 * 2026-12-02). It is read from a zero-padded copy.
		 */
		if (NLMSG_ALIGN(nlh->nlmsg_len) > len - off) {
			copy = calloc(1, NLMSG_ALIGN(nlh->nlmsg_len));
			if (!copy) {
				w->cur.lost = true;   /* the commit's report says it is incomplete */
				break;
			}
			memcpy(copy, nlh, nlh->nlmsg_len);
			nlh = copy;
		}
		off += NLMSG_ALIGN(nlh->nlmsg_len) < len - off ? NLMSG_ALIGN(nlh->nlmsg_len)
							       : len - off;
		one_msg(w, nlh, fn, ctx);
		free(copy);
	}
	return 0;
}

/* Notifications were dropped: what changed, and who did it, are unknown. */
static void report_lost(struct nft_watch *w, nft_tamper_fn fn, void *ctx)
{
	commit_reset(w);
	w->cur.lost = true;
	fn(ctx, &w->cur);
	commit_reset(w);
}

int nft_watch_read(struct nft_watch *w, nft_tamper_fn fn, void *ctx)
{
	for (;;) {
		ssize_t n = recv(mnl_socket_get_fd(w->nl), w->buf, WATCH_RECV_BUF, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				report_lost(w, fn, ctx);
				continue;
			}
			return -errno;
		}
		if (n == 0)
			return 0;
		nft_watch_feed(w, w->buf, (size_t)n, fn, ctx);
	}
}
