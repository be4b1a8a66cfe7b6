/*
 * Private to nft/: the handle, the growable netlink batch and the rule builder shared
 * by the files of this part. Not for other parts: they use nft/nft.h.
 */
#ifndef SANDGATE_NFT_NFT_INT_H
#define SANDGATE_NFT_NFT_INT_H

#include <limits.h>
#include <linux/netlink.h>

#include "nft/nft.h"

struct mnl_socket;
struct nftnl_rule;
struct nftnl_set;
struct nftnl_set_elem;

#define NFT_TABLE          "sandgate"
#define NFT_PROBE_TABLE    "sandgate_probe"
#define NFT_CH_PRE         "prerouting"
#define NFT_CH_OUT         "output"
#define NFT_CH_PRE_VERDICT "prerouting_verdict"
#define NFT_CH_OUT_VERDICT "output_verdict"
#define NFT_CH_SESSION     "session"
#define NFT_CH_DENY        "deny"
#define NFT_SET_CGROUP     "cgroup_sessions"
#define NFT_SET_IFACE      "iface_sessions"
#define NFT_SET_RATES      "rate_limits"   /* mark : limit (nft_ratelimit.c) */
#define NFT_SET_DROPS      "rate_drops"    /* mark : counter */
#define NFT_SET_FLOOD      "flood_limits"  /* mark : limit (nft_flood.c) */
#define NFT_SET_FLOODC     "flood_drops"   /* mark : counter */
#define NFT_PRIO_STEER     (-150)   /* mangle: after conntrack (-200), ct exists */
#define NFT_PRIO_VERDICT   (-140)   /* a queue verdict's ACCEPT resumes here */
#define NFT_IFNAMES_MAX    64       /* per session: bounds one element message */
#define NFT_MSG_ROOM       16384    /* reserved per message; every one we build is smaller */

struct nft_handle {
	struct nft_options opt;
	char netns[PATH_MAX];
	struct mnl_socket *nl;
	uint32_t portid;
	uint32_t seq;
	enum nft_qimpl impl;      /* resolved at first install */
};

/* A batch under construction: begin, messages (each with NLM_F_ACK), end. */
struct nft_batch {
	char *buf;
	size_t len;
	size_t cap;
	uint32_t seq_first;
	uint32_t seq_next;
	uint32_t nacks;           /* messages that will be ACKed */
	int err;                  /* latched build error (-ENOMEM, -EMSGSIZE) */
};

/* nft_batch.c */
int nft_batch_init(struct nft_batch *b, uint32_t seq);
void nft_batch_free(struct nft_batch *b);
struct nlmsghdr *nft_batch_msg(struct nft_batch *b, uint16_t type, uint16_t flags);
void nft_batch_done(struct nft_batch *b, struct nlmsghdr *nlh);
int nft_batch_send(struct nft_handle *h, struct nft_batch *b);
/* Adds a message for the inet table name (NEWTABLE/DELTABLE) to the batch; errors latch in b->err. */
void nft_emit_table(struct nft_batch *b, const char *name, uint16_t type, uint16_t flags);

/* nft_netns.c */
int nft_socket_open(const char *netns, struct mnl_socket **out);

/* nft_expr.c: a rule with a latched error, so rule bodies read like nft text. */
struct nft_rb {
	struct nftnl_rule *r;
	int err;
};
int nft_rb_init(struct nft_rb *rb, const char *chain);
int nft_rb_init_in(struct nft_rb *rb, const char *table, const char *chain);
void nft_rb_free(struct nft_rb *rb);
void nft_rb_meta_load(struct nft_rb *rb, uint32_t key, uint32_t dreg);
void nft_rb_meta_set(struct nft_rb *rb, uint32_t key, uint32_t sreg);
void nft_rb_ct_load(struct nft_rb *rb, uint32_t key, uint32_t dreg);
/* ct KEY of one direction (packets, bytes: the accounting counters). */
void nft_rb_ct_load_dir(struct nft_rb *rb, uint32_t key, uint8_t dir, uint32_t dreg);
void nft_rb_ct_set(struct nft_rb *rb, uint32_t key, uint32_t sreg);
void nft_rb_cmp(struct nft_rb *rb, uint32_t op, const void *data, uint32_t len);
void nft_rb_cmp_u32(struct nft_rb *rb, uint32_t op, uint32_t v);
void nft_rb_mask_u32(struct nft_rb *rb, uint32_t mask);
/* reg 1 = the address type (RTN_*) of the packet's destination: fib daddr type */
void nft_rb_fib_daddr_type(struct nft_rb *rb);
/* reg 1 |= bits (a bitwise with mask ~bits, xor bits) */
void nft_rb_or_u32(struct nft_rb *rb, uint32_t bits);
void nft_rb_lookup(struct nft_rb *rb, const char *set, int dreg);
void nft_rb_socket_cgroup(struct nft_rb *rb, uint32_t level);
void nft_rb_th_load(struct nft_rb *rb, uint32_t offset, uint32_t len);
/* Loads len bytes at offset of header base into dreg (any register, for concatenations). */
void nft_rb_payload(struct nft_rb *rb, uint32_t base, uint32_t offset, uint32_t len,
		    uint32_t dreg);
/* reg 1 &= mask (len bytes) */
void nft_rb_mask(struct nft_rb *rb, const void *mask, uint32_t len);
/* Membership test of the key starting at sreg (a concatenation) in set. */
void nft_rb_lookup_from(struct nft_rb *rb, const char *set, uint32_t sreg);
void nft_rb_verdict(struct nft_rb *rb, int verdict, const char *chain);
void nft_rb_reject(struct nft_rb *rb, uint32_t type, uint8_t code);
void nft_rb_counter(struct nft_rb *rb);
void nft_rb_queue(struct nft_rb *rb, const struct nft_options *o, enum nft_qimpl impl);
void nft_rb_emit(struct nft_rb *rb, struct nft_batch *b);

/* nft_rules.c */
void nft_rules_build(struct nft_batch *b, const struct nft_options *o, enum nft_qimpl impl);

/* nft_elems.c */
/* A set of table NFT_TABLE (family inet) named name, to carry elements; NULL on ENOMEM. */
struct nftnl_set *nft_set_named(const char *name);
/* An element with key[0..len); NULL on ENOMEM. */
struct nftnl_set_elem *nft_elem_keyed(const void *key, uint32_t len);
void nft_elems_session(struct nft_batch *b, const struct nft_options *o,
		       const struct nft_session *s, uint16_t type);
int nft_session_check(const struct nft_session *s);

/*
 * nft_ratelimit.c: per-mark stateful objects, a limit named limit_prefix + ID and its
 * counter counter_prefix + ID, reached from maps keyed by the session mark (the
 * --net-rate limit, the flood limit of nft_flood.c). add: objects, then the elements
 * naming them; else the elements, then the objects.
 */
struct nft_mark_limit {
	const char *limit_map, *limit_prefix;
	const char *counter_map, *counter_prefix;
	uint32_t type;                /* NFT_LIMIT_PKTS or NFT_LIMIT_PKT_BYTES */
	uint64_t rate;                /* per second */
	uint32_t burst;
};
void nft_mark_limit_emit(struct nft_batch *b, const struct nft_mark_limit *l, uint32_t mark,
			 bool add);
/* nft_ratelimit.c: the --net-rate maps, their rule (chain session) and elements. */
void nft_rate_maps(struct nft_batch *b);
void nft_rate_rule(struct nft_batch *b);
void nft_rate_elems(struct nft_batch *b, const struct nft_session *s, uint16_t type);
/* A map name : objtype (mark keys) with batch-local set id. */
void nft_objmap_emit(struct nft_batch *b, const char *name, uint32_t objtype, uint32_t id);
/* meta mark & 0xff0fffff, then the object map set holds for it (objref). */
void nft_rb_objref_map(struct nft_rb *rb, const char *set);
/* Every counter object named prefix + session id, in one dump (*out malloc'ed). */
int nft_counters_dump(struct nft_handle *h, const char *prefix, struct nft_rate_drops **out,
		      size_t *n);

/* nft_flood.c: the flood limit's maps and rules (chain session). */
void nft_flood_maps(struct nft_batch *b);
void nft_flood_rule_dns(struct nft_batch *b);
void nft_flood_rule_new(struct nft_batch *b);

/* Flags of the NFQUEUE target/expression for o (bypass, fanout). */
uint16_t nft_queue_flags(const struct nft_options *o);

#endif
