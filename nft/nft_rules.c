/*
 * The contents of table inet sandgate: maps, chains and rules, appended to a batch.
 * docs/nft-ruleset.md explains each rule; nft_render.c prints the same rules as text
 * and must be changed with this file.
 */
#include <errno.h>
/* libc network headers before the linux/ ones, which would redefine them. */
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <libnftnl/chain.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/rtnetlink.h>   /* RTN_LOCAL: the fib address type */
#include <string.h>

#include "nft/nft_int.h"

/* nft userspace datatype ids (nftables include/datatype.h), so `nft list` prints the
 * maps with their proper types; the kernel only stores them. */
#define DT_MARK          19
#define DT_IFNAME        41
#define DT_CGROUPV2      46
#define BO_HOST_ENDIAN   1   /* nftables enum byteorder */

#define CT_DIR_ORIGINAL  0   /* enum ip_conntrack_dir */
#define CT_DIR_REPLY     1
#define CT_STATE_RELATED 0x04u   /* NF_CT_STATE_BIT(IP_CT_RELATED), 1 << (1 + 1): ct state */

#define TAG_VERDICT_MASK (NFT_MARK_TAG_MASK | NFT_MARK_VERDICT_MASK)

/* What a set looks like; data_type 0 means a plain set, not a map. */
struct set_spec {
	const char *name;
	uint32_t key_type, key_len, data_type, data_len, flags;
};

static const struct set_spec sets[] = {
	{ NFT_SET_CGROUP, DT_CGROUPV2, 8, DT_MARK, 4, NFT_SET_MAP },
	{ NFT_SET_IFACE, DT_IFNAME, IFNAMSIZ, DT_MARK, 4, NFT_SET_MAP },
};

void nft_emit_table(struct nft_batch *b, const char *name, uint16_t type, uint16_t flags)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;

	if (t == NULL) {
		b->err = -ENOMEM;
		return;
	}
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (nftnl_table_set_str(t, NFTNL_TABLE_NAME, name) < 0)
		b->err = -ENOMEM;
	nlh = nft_batch_msg(b, type, flags);
	if (nlh != NULL) {
		nftnl_table_nlmsg_build_payload(nlh, t);
		nft_batch_done(b, nlh);
	}
	nftnl_table_free(t);
}

/* Replace = add (so delete cannot fail on a first install), delete, add. */
static void emit_table_replace(struct nft_batch *b)
{
	nft_emit_table(b, NFT_TABLE, NFT_MSG_NEWTABLE, NLM_F_CREATE);
	nft_emit_table(b, NFT_TABLE, NFT_MSG_DELTABLE, 0);
	nft_emit_table(b, NFT_TABLE, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL);
}

/*
 * nft reads the byte order of a set's keys and data from its user data; without it
 * `nft list` prints our host-endian ids, marks and names byte-swapped. Maps only: the
 * concatenated placeholder sets are empty and nft handles them by their type.
 */
static void set_byteorder(struct nft_batch *b, struct nftnl_set *s)
{
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(64);

	if (ud == NULL) {
		b->err = -ENOMEM;
		return;
	}
	if (!nftnl_udata_put_u32(ud, NFTNL_UDATA_SET_KEYBYTEORDER, BO_HOST_ENDIAN) ||
	    !nftnl_udata_put_u32(ud, NFTNL_UDATA_SET_DATABYTEORDER, BO_HOST_ENDIAN) ||
	    nftnl_set_set_data(s, NFTNL_SET_USERDATA, nftnl_udata_buf_data(ud),
			       nftnl_udata_buf_len(ud)) < 0)
		b->err = -ENOMEM;
	nftnl_udata_buf_free(ud);
}

static void emit_set(struct nft_batch *b, const struct set_spec *sp, uint32_t id)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct nlmsghdr *nlh;

	if (s == NULL) {
		b->err = -ENOMEM;
		return;
	}
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	if (nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE) < 0 ||
	    nftnl_set_set_str(s, NFTNL_SET_NAME, sp->name) < 0)
		b->err = -ENOMEM;
	nftnl_set_set_u32(s, NFTNL_SET_ID, id);
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, sp->flags);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, sp->key_type);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, sp->key_len);
	if (sp->data_type != 0) {
		nftnl_set_set_u32(s, NFTNL_SET_DATA_TYPE, sp->data_type);
		nftnl_set_set_u32(s, NFTNL_SET_DATA_LEN, sp->data_len);
		set_byteorder(b, s);
	}
	nlh = nft_batch_msg(b, NFT_MSG_NEWSET, NLM_F_CREATE | NLM_F_EXCL);
	if (nlh != NULL) {
		nftnl_set_nlmsg_build_payload(nlh, s);
		nft_batch_done(b, nlh);
	}
	nftnl_set_free(s);
}

/* hook < 0 makes a regular chain (jump/goto target). */
static void emit_chain(struct nft_batch *b, const char *name, int hook, int prio)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh;

	if (c == NULL) {
		b->err = -ENOMEM;
		return;
	}
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	if (nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFT_TABLE) < 0 ||
	    nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name) < 0)
		b->err = -ENOMEM;
	if (hook >= 0) {
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
		nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
		if (nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter") < 0)
			b->err = -ENOMEM;
	}
	nlh = nft_batch_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_EXCL);
	if (nlh != NULL) {
		nftnl_chain_nlmsg_build_payload(nlh, c);
		nft_batch_done(b, nlh);
	}
	nftnl_chain_free(c);
}

/* ct mark & 0xff000000 == TAG meta mark set ct mark goto session */
static void rule_restore(struct nft_batch *b, const char *chain)
{
	struct nft_rb rb;

	nft_rb_init(&rb, chain);
	nft_rb_ct_load(&rb, NFT_CT_MARK, NFT_REG_1);
	nft_rb_mask_u32(&rb, NFT_MARK_TAG_MASK);
	nft_rb_cmp_u32(&rb, NFT_CMP_EQ, NFT_MARK_TAG);
	nft_rb_ct_load(&rb, NFT_CT_MARK, NFT_REG_1);
	nft_rb_meta_set(&rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_verdict(&rb, NFT_GOTO, NFT_CH_SESSION);
	nft_rb_emit(&rb, b);
}

/* Classifies an untagged flow: reg 1 holds the key looked up in map. */
static void rule_classify_tail(struct nft_rb *rb, const char *map)
{
	nft_rb_lookup(rb, map, NFT_REG_1);
	nft_rb_meta_set(rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_meta_load(rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_ct_set(rb, NFT_CT_MARK, NFT_REG_1);
	nft_rb_verdict(rb, NFT_GOTO, NFT_CH_SESSION);
}

/*
 * A session packet classified for the first time in the *reply* direction of its
 * conntrack entry: the session is answering a connection it did not make (a listener
 * in the session, a host elsewhere connecting in). No worker ever reads that direction,
 * and "ct direction reply accept" in chain session let it all out: until 2026-12-03 a
 * host no policy allows read 15,000 bytes from a session's listener, in cgroup and in
 * interface mode (t_gateway_raw.sh). Such a flow is denied at once (the deny verdict in
 * its ct mark; chain deny drops the session's packets and resets the other side's).
 * Destination port 53 is left to the DNS rules: a session's next query on a socket the
 * gateway answered REFUSED travels in the reply direction (docs/nft-ruleset.md "Flood
 * limit") and is queued and read there like any query.
 * ct direction reply th dport != 53 <key> meta mark set <map> meta mark set meta mark |
 * DENY ct mark set meta mark goto deny; reg 1 holds the key when called.
 */
static void rule_inbound_head(struct nft_rb *rb)
{
	uint8_t reply = CT_DIR_REPLY;
	uint16_t dns = htons(53);

	nft_rb_ct_load(rb, NFT_CT_DIRECTION, NFT_REG_1);
	nft_rb_cmp(rb, NFT_CMP_EQ, &reply, 1);
	nft_rb_th_load(rb, 2, sizeof(dns));
	nft_rb_cmp(rb, NFT_CMP_NEQ, &dns, sizeof(dns));
}

static void rule_inbound_tail(struct nft_rb *rb, const char *map)
{
	nft_rb_lookup(rb, map, NFT_REG_1);
	nft_rb_meta_set(rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_meta_load(rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_or_u32(rb, NFT_MARK_DENY);
	nft_rb_meta_set(rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_meta_load(rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_ct_set(rb, NFT_CT_MARK, NFT_REG_1);
	nft_rb_verdict(rb, NFT_GOTO, NFT_CH_DENY);
}

static void chain_prerouting(struct nft_batch *b, const struct nft_options *o)
{
	struct nft_rb rb;

	/* iif lo accept: looped-back packets were steered once already, on output. */
	nft_rb_init(&rb, NFT_CH_PRE);
	nft_rb_meta_load(&rb, NFT_META_IIF, NFT_REG_1);
	nft_rb_cmp_u32(&rb, NFT_CMP_EQ, 1);
	nft_rb_verdict(&rb, NF_ACCEPT, NULL);
	nft_rb_emit(&rb, b);
	rule_restore(b, NFT_CH_PRE);
	if (!o->iface_mode)
		return;
	/* fib daddr type != local: as loopback in cgroup mode, a process of the gateway's
	 * host talking to a sandbox's listener (a health check, an orchestrator) is the
	 * host's business; only what would be routed on is a way out. */
	nft_rb_init(&rb, NFT_CH_PRE);
	nft_rb_fib_daddr_type(&rb);
	nft_rb_cmp_u32(&rb, NFT_CMP_NEQ, RTN_LOCAL);
	rule_inbound_head(&rb);
	nft_rb_meta_load(&rb, NFT_META_IIFNAME, NFT_REG_1);
	rule_inbound_tail(&rb, NFT_SET_IFACE);
	nft_rb_emit(&rb, b);
	/* meta mark set iifname map @iface_sessions ct mark set meta mark goto session */
	nft_rb_init(&rb, NFT_CH_PRE);
	nft_rb_meta_load(&rb, NFT_META_IIFNAME, NFT_REG_1);
	rule_classify_tail(&rb, NFT_SET_IFACE);
	nft_rb_emit(&rb, b);
}

static void chain_output(struct nft_batch *b, const struct nft_options *o)
{
	struct nft_rb rb;

	rule_restore(b, NFT_CH_OUT);
	if (!o->cgroup_mode)
		return;
	/* oif != "lo": a host process talking to a session's listener over loopback is the
	 * host's business, not a way out (another session's connection in is its own flow,
	 * classified and decided at its SYN). */
	nft_rb_init(&rb, NFT_CH_OUT);
	nft_rb_meta_load(&rb, NFT_META_OIF, NFT_REG_1);
	nft_rb_cmp_u32(&rb, NFT_CMP_NEQ, 1);
	rule_inbound_head(&rb);
	nft_rb_socket_cgroup(&rb, o->cgroup_level);
	rule_inbound_tail(&rb, NFT_SET_CGROUP);
	nft_rb_emit(&rb, b);
	/* meta mark set socket cgroupv2 level L map @cgroup_sessions ct mark set ... */
	nft_rb_init(&rb, NFT_CH_OUT);
	nft_rb_socket_cgroup(&rb, o->cgroup_level);
	rule_classify_tail(&rb, NFT_SET_CGROUP);
	nft_rb_emit(&rb, b);
}

/* meta l4proto P th sport|dport 53 counter queue */
static void rule_dns(struct nft_batch *b, const struct nft_options *o,
		     enum nft_qimpl impl, uint8_t proto, uint32_t port_off)
{
	uint16_t port = htons(53);
	struct nft_rb rb;

	nft_rb_init(&rb, NFT_CH_SESSION);
	nft_rb_meta_load(&rb, NFT_META_L4PROTO, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &proto, sizeof(proto));
	nft_rb_th_load(&rb, port_off, sizeof(port));
	nft_rb_cmp(&rb, NFT_CMP_EQ, &port, sizeof(port));
	nft_rb_counter(&rb);
	nft_rb_queue(&rb, o, impl);
	nft_rb_emit(&rb, b);
}

/* meta mark & VERDICT_MASK == v <verdict> */
static void rule_on_verdict(struct nft_batch *b, uint32_t v, int verdict, const char *to)
{
	struct nft_rb rb;

	nft_rb_init(&rb, NFT_CH_SESSION);
	nft_rb_meta_load(&rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_mask_u32(&rb, NFT_MARK_VERDICT_MASK);
	nft_rb_cmp_u32(&rb, NFT_CMP_EQ, v);
	nft_rb_verdict(&rb, verdict, to);
	nft_rb_emit(&rb, b);
}

/* icmpv6 type 133-137 accept: neighbour discovery is untracked and never queued. */
static void rule_nd(struct nft_batch *b)
{
	uint8_t proto = IPPROTO_ICMPV6, lo = 133, hi = 137;
	struct nft_rb rb;

	nft_rb_init(&rb, NFT_CH_SESSION);
	nft_rb_meta_load(&rb, NFT_META_L4PROTO, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &proto, sizeof(proto));
	nft_rb_th_load(&rb, 0, 1);
	nft_rb_cmp(&rb, NFT_CMP_GTE, &lo, sizeof(lo));
	nft_rb_cmp(&rb, NFT_CMP_LTE, &hi, sizeof(hi));
	nft_rb_verdict(&rb, NF_ACCEPT, NULL);
	nft_rb_emit(&rb, b);
}

/*
 * ip hdrlength 5 ip length 20+4D tcp flags & (fin | syn | rst) == 0 tcp doff D
 * ct original packets 2 accept (ipv6: ip6 nexthdr tcp ip6 length 4D): the handshake's
 * last ACK, the flow's second packet, when it carries no byte, is not queued. The
 * length test is exact, so no data passes this way; only the doff of plain ACKs (5: no
 * options, 8: timestamps) are listed. Later empty segments are still queued: a flow where
 * only the server speaks is then decided (and recorded) at its 8th queued packet, as
 * before. Without conntrack accounting the count reads 0 and the ACK is queued. The conn
 * bench queued 2.9 packets per connection before this; each is a round trip.
 */
static void rule_empty_segment(struct nft_batch *b, bool v6, uint8_t doff)
{
	uint8_t nfproto = v6 ? NFPROTO_IPV6 : NFPROTO_IPV4, tcp = IPPROTO_TCP;
	/* fin | syn | rst | urg: an empty ACK with the urgent pointer set is queued (the
	 * worker refuses urgent data, gateway/flight.c); until 2026-12-03 URG was left out and
	 * such an ACK went by the worker (t_gateway_raw.sh). */
	uint8_t flags = 0x27, zero = 0, ihl_mask = 0x0f, ihl5 = 5, off_mask = 0xf0;
	uint8_t off = (uint8_t)(doff << 4);
	uint64_t second = 2;   /* host order, as the kernel stores the counter */
	uint16_t len = htons((uint16_t)((v6 ? 0 : 20) + 4 * doff));
	struct nft_rb rb;

	nft_rb_init(&rb, NFT_CH_SESSION);
	nft_rb_meta_load(&rb, NFT_META_NFPROTO, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &nfproto, 1);
	if (v6) {
		nft_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 6, 1, NFT_REG_1);
		nft_rb_cmp(&rb, NFT_CMP_EQ, &tcp, 1);
		nft_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 4, 2, NFT_REG_1);
		nft_rb_cmp(&rb, NFT_CMP_EQ, &len, 2);
	} else {
		nft_rb_meta_load(&rb, NFT_META_L4PROTO, NFT_REG_1);
		nft_rb_cmp(&rb, NFT_CMP_EQ, &tcp, 1);
		nft_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 0, 1, NFT_REG_1);
		nft_rb_mask(&rb, &ihl_mask, 1);
		nft_rb_cmp(&rb, NFT_CMP_EQ, &ihl5, 1);
		nft_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 2, 2, NFT_REG_1);
		nft_rb_cmp(&rb, NFT_CMP_EQ, &len, 2);
	}
	nft_rb_th_load(&rb, 13, 1);
	nft_rb_mask(&rb, &flags, 1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &zero, 1);
	nft_rb_th_load(&rb, 12, 1);
	nft_rb_mask(&rb, &off_mask, 1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &off, 1);
	nft_rb_ct_load_dir(&rb, NFT_CT_PKTS, CT_DIR_ORIGINAL, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &second, sizeof(second));
	nft_rb_verdict(&rb, NF_ACCEPT, NULL);
	nft_rb_emit(&rb, b);
}

static void chain_session(struct nft_batch *b, const struct nft_options *o,
			  enum nft_qimpl impl)
{
	uint8_t reply = CT_DIR_REPLY;
	struct nft_rb rb;

	rule_nd(b);
	nft_rate_rule(b);   /* --net-rate: before anything can accept or queue */
	nft_flood_rule_dns(b);   /* a flooding session's queries: before they are queued */
	rule_dns(b, o, impl, IPPROTO_UDP, 2);
	rule_dns(b, o, impl, IPPROTO_TCP, 2);
	rule_dns(b, o, impl, IPPROTO_UDP, 0);
	rule_dns(b, o, impl, IPPROTO_TCP, 0);
	rule_on_verdict(b, NFT_MARK_ALLOW, NF_ACCEPT, NULL);
	rule_on_verdict(b, NFT_MARK_DENY, NFT_GOTO, NFT_CH_DENY);
	/* ct direction reply accept: answers to what the worker let out. */
	nft_rb_init(&rb, NFT_CH_SESSION);
	nft_rb_ct_load(&rb, NFT_CT_DIRECTION, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &reply, 1);
	nft_rb_verdict(&rb, NF_ACCEPT, NULL);
	nft_rb_emit(&rb, b);
	/* No SYN is accepted here, not even to an address an allowed answer bound: the
	 * worker must see every SYN, whose sequence number is where the first flight starts
	 * (docs/nft-ruleset.md "Bound addresses"), and strips Fast Open data off it. */
	rule_empty_segment(b, false, 5);
	rule_empty_segment(b, false, 8);
	rule_empty_segment(b, true, 5);
	rule_empty_segment(b, true, 8);
	nft_flood_rule_new(b);   /* a flooding session's undecided packets */
	/* counter queue: undecided, original direction. */
	nft_rb_init(&rb, NFT_CH_SESSION);
	nft_rb_counter(&rb);
	nft_rb_queue(&rb, o, impl);
	nft_rb_emit(&rb, b);
}

static void chain_deny(struct nft_batch *b)
{
	uint8_t orig = CT_DIR_ORIGINAL, tcp = IPPROTO_TCP;
	struct nft_rb rb;

	/* ct direction original meta l4proto tcp reject with tcp reset */
	nft_rb_init(&rb, NFT_CH_DENY);
	nft_rb_ct_load(&rb, NFT_CT_DIRECTION, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &orig, 1);
	nft_rb_meta_load(&rb, NFT_META_L4PROTO, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &tcp, 1);
	nft_rb_reject(&rb, NFT_REJECT_TCP_RST, 0);
	nft_rb_emit(&rb, b);
	/* ct direction original reject with icmpx admin-prohibited */
	nft_rb_init(&rb, NFT_CH_DENY);
	nft_rb_ct_load(&rb, NFT_CT_DIRECTION, NFT_REG_1);
	nft_rb_cmp(&rb, NFT_CMP_EQ, &orig, 1);
	nft_rb_reject(&rb, NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
	nft_rb_emit(&rb, b);
	/*
	 * ct state related accept: the reset or ICMP error the rules above send back is
	 * attached to the denied flow's conntrack entry as related, and must reach the
	 * client. Nothing else of a denied flow passes: not the replies of a flow denied after
	 * its first packets (its server still talks), and not what a session sends on a
	 * connection made to it (denied at its classification, rule_inbound_head). Until
	 * 2026-12-03 this rule accepted the whole reply direction, and so let the latter out.
	 */
	nft_rb_init(&rb, NFT_CH_DENY);
	nft_rb_ct_load(&rb, NFT_CT_STATE, NFT_REG_1);
	nft_rb_mask_u32(&rb, CT_STATE_RELATED);
	nft_rb_cmp_u32(&rb, NFT_CMP_NEQ, 0);
	nft_rb_verdict(&rb, NF_ACCEPT, NULL);
	nft_rb_emit(&rb, b);
	nft_rb_init(&rb, NFT_CH_DENY);
	nft_rb_verdict(&rb, NF_DROP, NULL);
	nft_rb_emit(&rb, b);
}

/* meta mark & 0xff300000 == TAG|v  ct mark & cmask == cval  ct mark set meta mark [to] */
static void rule_commit(struct nft_batch *b, const char *chain, uint32_t v,
			uint32_t cmask, uint32_t cval, const char *to)
{
	struct nft_rb rb;

	nft_rb_init(&rb, chain);
	nft_rb_meta_load(&rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_mask_u32(&rb, TAG_VERDICT_MASK);
	nft_rb_cmp_u32(&rb, NFT_CMP_EQ, NFT_MARK_TAG | v);
	nft_rb_ct_load(&rb, NFT_CT_MARK, NFT_REG_1);
	nft_rb_mask_u32(&rb, cmask);
	nft_rb_cmp_u32(&rb, NFT_CMP_EQ, cval);
	nft_rb_meta_load(&rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_ct_set(&rb, NFT_CT_MARK, NFT_REG_1);
	if (to != NULL)
		nft_rb_verdict(&rb, NFT_GOTO, to);
	nft_rb_emit(&rb, b);
}

/* Where a queue verdict's ACCEPT resumes: copy a fresh verdict into the ct mark. */
static void chain_verdict(struct nft_batch *b, const char *chain)
{
	rule_commit(b, chain, NFT_MARK_ALLOW, TAG_VERDICT_MASK, NFT_MARK_TAG, NULL);
	rule_commit(b, chain, NFT_MARK_DENY, NFT_MARK_TAG_MASK, NFT_MARK_TAG, NFT_CH_DENY);
}

void nft_rules_build(struct nft_batch *b, const struct nft_options *o, enum nft_qimpl impl)
{
	emit_table_replace(b);
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		emit_set(b, &sets[i], (uint32_t)i + 1);
	nft_rate_maps(b);
	nft_flood_maps(b);
	/* Regular chains first: base chains' rules jump to them. */
	emit_chain(b, NFT_CH_DENY, -1, 0);
	emit_chain(b, NFT_CH_SESSION, -1, 0);
	emit_chain(b, NFT_CH_PRE, NF_INET_PRE_ROUTING, NFT_PRIO_STEER);
	emit_chain(b, NFT_CH_OUT, NF_INET_LOCAL_OUT, NFT_PRIO_STEER);
	emit_chain(b, NFT_CH_PRE_VERDICT, NF_INET_PRE_ROUTING, NFT_PRIO_VERDICT);
	emit_chain(b, NFT_CH_OUT_VERDICT, NF_INET_LOCAL_OUT, NFT_PRIO_VERDICT);
	chain_deny(b);
	chain_session(b, o, impl);
	chain_prerouting(b, o);
	chain_output(b, o);
	chain_verdict(b, NFT_CH_PRE_VERDICT);
	chain_verdict(b, NFT_CH_OUT_VERDICT);
}
