/*
 * Rule builder: one call per nft expression, with the first allocation failure
 * latched in rb->err so a rule body reads like its nft text and is checked once.
 */
#include <errno.h>
#include <stdio.h>  /* libnftnl headers use FILE */
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/xt_NFQUEUE.h>
#include <stdlib.h>
#include <string.h>

#include "nft/nft_int.h"

int nft_rb_init(struct nft_rb *rb, const char *chain)
{
	return nft_rb_init_in(rb, NFT_TABLE, chain);
}

int nft_rb_init_in(struct nft_rb *rb, const char *table, const char *chain)
{
	rb->err = 0;
	rb->r = nftnl_rule_alloc();
	if (rb->r == NULL)
		return rb->err = -ENOMEM;
	nftnl_rule_set_u32(rb->r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	if (nftnl_rule_set_str(rb->r, NFTNL_RULE_TABLE, table) < 0 ||
	    nftnl_rule_set_str(rb->r, NFTNL_RULE_CHAIN, chain) < 0)
		rb->err = -ENOMEM;
	return rb->err;
}

void nft_rb_free(struct nft_rb *rb)
{
	if (rb->r != NULL)
		nftnl_rule_free(rb->r);
	rb->r = NULL;
}

/* Allocates an expression of kind name, or latches -ENOMEM and returns NULL. */
static struct nftnl_expr *rb_expr(struct nft_rb *rb, const char *name)
{
	struct nftnl_expr *e;

	if (rb->err || rb->r == NULL)
		return NULL;
	e = nftnl_expr_alloc(name);
	if (e == NULL)
		rb->err = -ENOMEM;
	return e;
}

/* Attribute setters that can fail (copies, lengths): the failure latches in rb. */
static void rb_set(struct nft_rb *rb, struct nftnl_expr *e, uint16_t t, const void *d,
		   uint32_t len)
{
	if (nftnl_expr_set(e, t, d, len) < 0 && rb->err == 0)
		rb->err = -EINVAL;
}

static void rb_set_str(struct nft_rb *rb, struct nftnl_expr *e, uint16_t t, const char *v)
{
	if (nftnl_expr_set_str(e, t, v) < 0 && rb->err == 0)
		rb->err = -ENOMEM;
}

/* Appends e; with libnftnl the rule owns it from here. */
static void rb_add(struct nft_rb *rb, struct nftnl_expr *e)
{
	if (e != NULL)
		nftnl_rule_add_expr(rb->r, e);
}

void nft_rb_meta_load(struct nft_rb *rb, uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = rb_expr(rb, "meta");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
	rb_add(rb, e);
}

void nft_rb_meta_set(struct nft_rb *rb, uint32_t key, uint32_t sreg)
{
	struct nftnl_expr *e = rb_expr(rb, "meta");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_SREG, sreg);
	rb_add(rb, e);
}

void nft_rb_ct_load(struct nft_rb *rb, uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = rb_expr(rb, "ct");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, dreg);
	rb_add(rb, e);
}

void nft_rb_ct_load_dir(struct nft_rb *rb, uint32_t key, uint8_t dir, uint32_t dreg)
{
	struct nftnl_expr *e = rb_expr(rb, "ct");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, dir);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, dreg);
	rb_add(rb, e);
}

void nft_rb_ct_set(struct nft_rb *rb, uint32_t key, uint32_t sreg)
{
	struct nftnl_expr *e = rb_expr(rb, "ct");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_SREG, sreg);
	rb_add(rb, e);
}

void nft_rb_cmp(struct nft_rb *rb, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = rb_expr(rb, "cmp");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	rb_set(rb, e, NFTNL_EXPR_CMP_DATA, data, len);
	rb_add(rb, e);
}

/* Register values of meta/ct marks are host-endian u32. */
void nft_rb_cmp_u32(struct nft_rb *rb, uint32_t op, uint32_t v)
{
	nft_rb_cmp(rb, op, &v, sizeof(v));
}

/* reg 1 = (reg 1 & mask) ^ xor, on 32 bits */
static void bitwise_u32(struct nft_rb *rb, uint32_t mask, uint32_t xor)
{
	struct nftnl_expr *e = rb_expr(rb, "bitwise");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, sizeof(uint32_t));
	rb_set(rb, e, NFTNL_EXPR_BITWISE_MASK, &mask, sizeof(mask));
	rb_set(rb, e, NFTNL_EXPR_BITWISE_XOR, &xor, sizeof(xor));
	rb_add(rb, e);
}

void nft_rb_mask_u32(struct nft_rb *rb, uint32_t mask)
{
	bitwise_u32(rb, mask, 0);
}

void nft_rb_fib_daddr_type(struct nft_rb *rb)
{
	struct nftnl_expr *e = rb_expr(rb, "fib");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, NFTA_FIB_F_DADDR);
	rb_add(rb, e);
}

void nft_rb_or_u32(struct nft_rb *rb, uint32_t bits)
{
	bitwise_u32(rb, ~bits, bits);
}

/* Looks reg 1 up in set; dreg < 0 makes it a plain membership test. */
void nft_rb_lookup(struct nft_rb *rb, const char *set, int dreg)
{
	struct nftnl_expr *e = rb_expr(rb, "lookup");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	if (dreg >= 0)
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_DREG, (uint32_t)dreg);
	rb_set_str(rb, e, NFTNL_EXPR_LOOKUP_SET, set);
	rb_add(rb, e);
}

void nft_rb_socket_cgroup(struct nft_rb *rb, uint32_t level)
{
	struct nftnl_expr *e = rb_expr(rb, "socket");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_KEY, NFT_SOCKET_CGROUPV2);
	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_LEVEL, level);
	rb_add(rb, e);
}

void nft_rb_th_load(struct nft_rb *rb, uint32_t offset, uint32_t len)
{
	struct nftnl_expr *e = rb_expr(rb, "payload");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_TRANSPORT_HEADER);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
	rb_add(rb, e);
}

void nft_rb_payload(struct nft_rb *rb, uint32_t base, uint32_t offset, uint32_t len,
		    uint32_t dreg)
{
	struct nftnl_expr *e = rb_expr(rb, "payload");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
	rb_add(rb, e);
}

void nft_rb_mask(struct nft_rb *rb, const void *mask, uint32_t len)
{
	struct nftnl_expr *e = rb_expr(rb, "bitwise");
	uint8_t zero[16] = { 0 };

	if (e == NULL)
		return;
	if (len > sizeof(zero)) {
		rb->err = -EINVAL;
		nftnl_expr_free(e);
		return;
	}
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	rb_set(rb, e, NFTNL_EXPR_BITWISE_MASK, mask, len);
	rb_set(rb, e, NFTNL_EXPR_BITWISE_XOR, zero, len);
	rb_add(rb, e);
}

void nft_rb_lookup_from(struct nft_rb *rb, const char *set, uint32_t sreg)
{
	struct nftnl_expr *e = rb_expr(rb, "lookup");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, sreg);
	rb_set_str(rb, e, NFTNL_EXPR_LOOKUP_SET, set);
	rb_add(rb, e);
}

void nft_rb_verdict(struct nft_rb *rb, int verdict, const char *chain)
{
	struct nftnl_expr *e = rb_expr(rb, "immediate");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	if (chain != NULL)
		rb_set_str(rb, e, NFTNL_EXPR_IMM_CHAIN, chain);
	rb_add(rb, e);
}

void nft_rb_reject(struct nft_rb *rb, uint32_t type, uint8_t code)
{
	struct nftnl_expr *e = rb_expr(rb, "reject");

	if (e == NULL)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, type);
	nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, code);
	rb_add(rb, e);
}

void nft_rb_counter(struct nft_rb *rb)
{
	rb_add(rb, rb_expr(rb, "counter"));
}

/* xtables NFQUEUE rev 3 through nft_compat: the kernel has no native queue. */
static void rb_queue_compat(struct nft_rb *rb, const struct nft_options *o)
{
	struct nftnl_expr *e = rb_expr(rb, "target");
	struct xt_NFQ_info_v3 *info;

	if (e == NULL)
		return;
	/* libnftnl takes ownership of the info buffer and frees it with the expr. */
	info = calloc(1, sizeof(*info));
	if (info == NULL) {
		nftnl_expr_free(e);
		rb->err = -ENOMEM;
		return;
	}
	info->queuenum = o->queue_base;
	info->queues_total = o->queue_count;
	info->flags = nft_queue_flags(o);
	rb_set_str(rb, e, NFTNL_EXPR_TG_NAME, "NFQUEUE");
	nftnl_expr_set_u32(e, NFTNL_EXPR_TG_REV, 3);
	if (nftnl_expr_set(e, NFTNL_EXPR_TG_INFO, info, sizeof(*info)) < 0) {
		free(info);   /* not taken over */
		if (rb->err == 0)
			rb->err = -EINVAL;
	}
	rb_add(rb, e);
}

void nft_rb_queue(struct nft_rb *rb, const struct nft_options *o, enum nft_qimpl impl)
{
	struct nftnl_expr *e;

	if (impl == NFT_QIMPL_COMPAT) {
		rb_queue_compat(rb, o);
		return;
	}
	e = rb_expr(rb, "queue");
	if (e == NULL)
		return;
	nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_NUM, o->queue_base);
	nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_TOTAL, o->queue_count);
	nftnl_expr_set_u16(e, NFTNL_EXPR_QUEUE_FLAGS, nft_queue_flags(o));
	rb_add(rb, e);
}

/* Appends the rule to b as NEWRULE (append) and frees it; errors latch in b. */
void nft_rb_emit(struct nft_rb *rb, struct nft_batch *b)
{
	struct nlmsghdr *nlh;

	if (rb->err && b->err == 0)
		b->err = rb->err;
	if (b->err == 0) {
		nlh = nft_batch_msg(b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
		if (nlh != NULL) {
			nftnl_rule_nlmsg_build_payload(nlh, rb->r);
			nft_batch_done(b, nlh);
		}
	}
	nft_rb_free(rb);
}
