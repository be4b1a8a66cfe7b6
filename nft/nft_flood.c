/*
 * The flood limit (issue 14 item 6, docs/nft-ruleset.md "Flood limit"): a session that
 * is past its budget of blocked attempts gets, from the gateway, a limit object
 * flood_ID (rate over R packets/second) and a counter floodc_ID, reached through two
 * objref maps keyed by its mark. Two rules of chain session use them *before* anything
 * is queued: DNS queries (original direction, destination port 53) and the packets of
 * undecided flows in their original direction (every SYN, a new flow's first
 * datagram) pass only within the rate; the rest is counted and rejected in the kernel
 * (chain deny: a TCP reset or an ICMP error, never a silent hang). So a flooding
 * session cannot fill the queues every other session's DNS and new flows go through,
 * and the gateway reads the counter into the session's net.blocked_summary: nothing is
 * uncounted. A session without elements misses the lookup: the rules do not match.
 */
#include <errno.h>
/* libc network headers before the linux/ ones, which would redefine them. */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <libnftnl/object.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "nft/nft_int.h"

#define SET_ID_FLOOD    42   /* batch-local set ids (nft_ratelimit.c has 40, 41) */
#define SET_ID_FLOODC   43
#define CT_DIR_ORIGINAL 0

void nft_flood_maps(struct nft_batch *b)
{
	nft_objmap_emit(b, NFT_SET_FLOOD, NFT_OBJECT_LIMIT, SET_ID_FLOOD);
	nft_objmap_emit(b, NFT_SET_FLOODC, NFT_OBJECT_COUNTER, SET_ID_FLOODC);
}

/* limit name ... map @flood_limits counter name ... map @flood_drops goto deny */
static void flood_tail(struct nft_rb *rb, struct nft_batch *b)
{
	nft_rb_objref_map(rb, NFT_SET_FLOOD);
	nft_rb_objref_map(rb, NFT_SET_FLOODC);
	nft_rb_verdict(rb, NFT_GOTO, NFT_CH_DENY);
	nft_rb_emit(rb, b);
}

/*
 * ct direction original meta l4proto P th dport 53 <flood> goto deny: before the DNS
 * rules, which queue every query (a DNS flow is decided allowed after its first query,
 * so the undecided rule below would not see the next ones of the same socket).
 */
static void rule_dns(struct nft_batch *b, uint8_t proto)
{
	uint8_t orig = CT_DIR_ORIGINAL;
	uint16_t port = htons(53);
	struct nft_rb rb;

	nft_rb_init(&rb, NFT_CH_SESSION);
	nft_rb_ct_load(&rb, NFT_CT_DIRECTION, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &orig, 1);
	nft_rb_meta_load(&rb, NFT_META_L4PROTO, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &proto, sizeof(proto));
	nft_rb_th_load(&rb, 2, sizeof(port));
	nft_rb_cmp(&rb, NFT_CMP_EQ, &port, sizeof(port));
	flood_tail(&rb, b);
}

void nft_flood_rule_dns(struct nft_batch *b)
{
	rule_dns(b, IPPROTO_UDP);
	rule_dns(b, IPPROTO_TCP);
}

/* <flood> goto deny: placed just before the last queue rule, where only undecided
 * packets in their original direction arrive. */
void nft_flood_rule_new(struct nft_batch *b)
{
	struct nft_rb rb;

	nft_rb_init(&rb, NFT_CH_SESSION);
	flood_tail(&rb, b);
}

static void obj_name(char *buf, size_t len, const char *prefix, uint32_t mark)
{
	snprintf(buf, len, "%s%u", prefix, (unsigned)nft_mark_id(mark));
}

static void emit_obj(struct nft_batch *b, uint32_t mark, uint32_t type, uint32_t rate,
		     uint16_t msg)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct nlmsghdr *nlh;
	char name[32];

	if (o == NULL) {
		b->err = -ENOMEM;
		return;
	}
	obj_name(name, sizeof(name), type == NFT_OBJECT_LIMIT ? "flood_" : "floodc_", mark);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_INET);
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, NFT_TABLE);
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, type);
	if (type == NFT_OBJECT_LIMIT && msg == NFT_MSG_NEWOBJ) {
		/* Packets, inverted (matches over the rate); the bucket holds one second. */
		nftnl_obj_set_u64(o, NFTNL_OBJ_LIMIT_RATE, rate);
		nftnl_obj_set_u64(o, NFTNL_OBJ_LIMIT_UNIT, 1);
		nftnl_obj_set_u32(o, NFTNL_OBJ_LIMIT_BURST, rate);
		nftnl_obj_set_u32(o, NFTNL_OBJ_LIMIT_TYPE, NFT_LIMIT_PKTS);
		nftnl_obj_set_u32(o, NFTNL_OBJ_LIMIT_FLAGS, NFT_LIMIT_F_INV);
	}
	nlh = nft_batch_msg(b, msg, msg == NFT_MSG_NEWOBJ ? NLM_F_CREATE | NLM_F_EXCL : 0);
	if (nlh != NULL) {
		nftnl_obj_nlmsg_build_payload(nlh, o);
		nft_batch_done(b, nlh);
	}
	nftnl_obj_free(o);
}

static void emit_elem(struct nft_batch *b, uint32_t mark, const char *map,
		      const char *prefix, uint16_t msg)
{
	struct nftnl_set *set = nft_set_named(map);
	struct nftnl_set_elem *e = nft_elem_keyed(&mark, sizeof(mark));
	struct nlmsghdr *nlh;
	char name[32];

	if (set == NULL || e == NULL) {
		b->err = -ENOMEM;
		goto out;
	}
	obj_name(name, sizeof(name), prefix, mark);
	if (nftnl_set_elem_set_str(e, NFTNL_SET_ELEM_OBJREF, name) < 0) {
		b->err = -ENOMEM;
		goto out;
	}
	nftnl_set_elem_add(set, e);
	e = NULL;   /* the set owns it */
	nlh = nft_batch_msg(b, msg, msg == NFT_MSG_NEWSETELEM ? NLM_F_CREATE | NLM_F_EXCL : 0);
	if (nlh != NULL) {
		nftnl_set_elems_nlmsg_build_payload(nlh, set);
		nft_batch_done(b, nlh);
	}
out:
	if (e != NULL)
		nftnl_set_elem_free(e);
	if (set != NULL)
		nftnl_set_free(set);
}

static int flood_batch(struct nft_handle *h, uint32_t mark, uint32_t rate, bool add)
{
	struct nft_batch b;
	int ret;

	if (nft_mark_check(mark) != 0 || (add && rate == 0))
		return -EINVAL;
	ret = nft_batch_init(&b, h->seq);
	if (ret != 0)
		return ret;
	if (add) {   /* objects before the elements naming them */
		emit_obj(&b, mark, NFT_OBJECT_LIMIT, rate, NFT_MSG_NEWOBJ);
		emit_obj(&b, mark, NFT_OBJECT_COUNTER, 0, NFT_MSG_NEWOBJ);
		emit_elem(&b, mark, NFT_SET_FLOOD, "flood_", NFT_MSG_NEWSETELEM);
		emit_elem(&b, mark, NFT_SET_FLOODC, "floodc_", NFT_MSG_NEWSETELEM);
	} else {
		emit_elem(&b, mark, NFT_SET_FLOOD, "flood_", NFT_MSG_DELSETELEM);
		emit_elem(&b, mark, NFT_SET_FLOODC, "floodc_", NFT_MSG_DELSETELEM);
		emit_obj(&b, mark, NFT_OBJECT_LIMIT, 0, NFT_MSG_DELOBJ);
		emit_obj(&b, mark, NFT_OBJECT_COUNTER, 0, NFT_MSG_DELOBJ);
	}
	ret = nft_batch_send(h, &b);
	nft_batch_free(&b);
	return ret;
}

int nft_flood_add(struct nft_handle *h, uint32_t mark, uint32_t pkts_per_s)
{
	return flood_batch(h, mark, pkts_per_s, true);
}

int nft_flood_del(struct nft_handle *h, uint32_t mark)
{
	return flood_batch(h, mark, 0, false);
}

int nft_flood_drops_all(struct nft_handle *h, struct nft_rate_drops **out, size_t *n)
{
	return nft_counters_dump(h, "floodc_", out, n);
}
