/*
 * The flood limit (issue 14 item 6, docs/nft-ruleset.md "Flood limit"): a session that
 * is past its budget of blocked attempts gets, from the gateway, a limit object
 * flood_ID (rate over R packets/second) and a counter floodc_ID, reached through two
 * objref maps keyed by its mark. Rules of chain session use them *before* anything
 * is queued: DNS queries (destination port 53; UDP in either direction) and the packets of
 * undecided flows in their original direction (every SYN, a new flow's first
 * datagram) pass only within the rate; the rest is counted and rejected in the kernel
 * (chain deny: a TCP reset or an ICMP error; reply-direction queries are dropped, see
 * rule_dns_reply). So a flooding
 * session cannot fill the queues every other session's DNS and new flows go through,
 * and the gateway reads the counter into the session's net.blocked_summary: nothing is
 * uncounted. A session without elements misses the lookup: the rules do not match.
 */
#include <errno.h>
/* libc network headers before the linux/ ones, which would redefine them. */
#include <netinet/in.h>
#include <string.h>
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

/*
 * ct direction reply meta l4proto udp th dport 53 <limit> <counter> drop: a session's
 * UDP queries can travel in the reply direction. The REFUSED answer the gateway sends for a blocked query (the query itself dropped, its
 * entry never confirmed) makes conntrack a flow "from" the resolver to the socket, and
 * the session's next queries on that socket are that flow's replies: the rule above
 * missed them (23k of 120k queries in 10 s of t_gateway_flood reached the queue and
 * kept it full). Dropped, not sent to chain deny, which accepts the reply direction (for
 * the resets and ICMP errors it makes), nor rejected: the ICMP error would be the
 * flow's original direction, reach the limit's rules again and be counted as a second
 * attempt. A local sender's sendto() fails (EPERM) all the same; a sandbox behind its own
 * interface sees a lost datagram. Otherwise a packet to port 53 in the reply direction
 * is an answer to a client bound to port 53: a flooding session's share its rate.
 */
static void rule_dns_reply(struct nft_batch *b)
{
	uint8_t reply = 1, proto = IPPROTO_UDP;
	uint16_t port = htons(53);
	struct nft_rb rb;

	nft_rb_init(&rb, NFT_CH_SESSION);
	nft_rb_ct_load(&rb, NFT_CT_DIRECTION, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &reply, 1);
	nft_rb_meta_load(&rb, NFT_META_L4PROTO, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &proto, sizeof(proto));
	nft_rb_th_load(&rb, 2, sizeof(port));
	nft_rb_cmp(&rb, NFT_CMP_EQ, &port, sizeof(port));
	nft_rb_objref_map(&rb, NFT_SET_FLOOD);
	nft_rb_objref_map(&rb, NFT_SET_FLOODC);
	nft_rb_verdict(&rb, NF_DROP, NULL);
	nft_rb_emit(&rb, b);
}

void nft_flood_rule_dns(struct nft_batch *b)
{
	rule_dns(b, IPPROTO_UDP);
	rule_dns(b, IPPROTO_TCP);
	rule_dns_reply(b);
}

/* <flood> goto deny: placed just before the last queue rule, where only undecided
 * packets in their original direction arrive. */
void nft_flood_rule_new(struct nft_batch *b)
{
	struct nft_rb rb;

	nft_rb_init(&rb, NFT_CH_SESSION);
	flood_tail(&rb, b);
}

static int flood_batch(struct nft_handle *h, uint32_t mark, uint32_t rate, bool add)
{
	/* Packets; the bucket holds one second of the rate. */
	struct nft_mark_limit l = {
		.limit_map = NFT_SET_FLOOD, .limit_prefix = "flood_",
		.counter_map = NFT_SET_FLOODC, .counter_prefix = "floodc_",
		.type = NFT_LIMIT_PKTS, .rate = rate, .burst = rate,
	};
	struct nft_batch b;
	int ret;

	if (nft_mark_check(mark) != 0 || (add && rate == 0))
		return -EINVAL;
	ret = nft_batch_init(&b, h->seq);
	if (ret != 0)
		return ret;
	nft_mark_limit_emit(&b, &l, mark, add);
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
