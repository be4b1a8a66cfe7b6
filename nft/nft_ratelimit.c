/*
 * Per-session network rate limits (--net-rate): for each session with a rate, a named
 * limit object (rate over R bytes/second) and a named counter of what it dropped, both
 * reached through objref maps keyed by the session mark. One rule at the top of chain
 * session does `limit name ... map @rate_limits counter name ... map @rate_drops drop`;
 * a session without an element misses the lookup and the rule does not match. The
 * objects and elements come and go with the session's other elements, in the same
 * batch. docs/nft-ruleset.md, docs/limits.md.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nft/nft_int.h"

#define DT_MARK          19   /* nft userspace datatype id (see nft_rules.c) */
#define BO_HOST_ENDIAN   1
#define KEY_MASK         (NFT_MARK_TAG_MASK | NFT_MARK_ID_MASK)   /* verdict bits off */
#define SET_ID_RATES     40   /* batch-local set ids, distinct from nft_rules.c's */
#define SET_ID_DROPS     41
#define GET_TIMEOUT_MS   1000
#define RECV_BUF         65536   /* as nft_batch.c */

/* Object names of session id: rate_ID (the limit) and drops_ID (its counter). */
static void obj_name(char *buf, size_t len, const char *prefix, uint32_t mark)
{
	snprintf(buf, len, "%s%u", prefix, (unsigned)nft_mark_id(mark));
}

void nft_objmap_emit(struct nft_batch *b, const char *name, uint32_t objtype, uint32_t id)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(32);
	struct nlmsghdr *nlh;

	if (s == NULL || ud == NULL) {
		b->err = -ENOMEM;
		goto out;
	}
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	if (nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE) < 0 ||
	    nftnl_set_set_str(s, NFTNL_SET_NAME, name) < 0)
		b->err = -ENOMEM;
	nftnl_set_set_u32(s, NFTNL_SET_ID, id);
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, NFT_SET_OBJECT);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, DT_MARK);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, 4);
	nftnl_set_set_u32(s, NFTNL_SET_OBJ_TYPE, objtype);
	/* So `nft list` prints the host-endian marks the right way round. */
	if (!nftnl_udata_put_u32(ud, NFTNL_UDATA_SET_KEYBYTEORDER, BO_HOST_ENDIAN) ||
	    nftnl_set_set_data(s, NFTNL_SET_USERDATA, nftnl_udata_buf_data(ud),
			       nftnl_udata_buf_len(ud)) < 0)
		b->err = -ENOMEM;
	nlh = nft_batch_msg(b, NFT_MSG_NEWSET, NLM_F_CREATE | NLM_F_EXCL);
	if (nlh != NULL) {
		nftnl_set_nlmsg_build_payload(nlh, s);
		nft_batch_done(b, nlh);
	}
out:
	if (ud != NULL)
		nftnl_udata_buf_free(ud);
	if (s != NULL)
		nftnl_set_free(s);
}

void nft_rate_maps(struct nft_batch *b)
{
	nft_objmap_emit(b, NFT_SET_RATES, NFT_OBJECT_LIMIT, SET_ID_RATES);
	nft_objmap_emit(b, NFT_SET_DROPS, NFT_OBJECT_COUNTER, SET_ID_DROPS);
}

/* meta mark & 0xff0fffff  then the object the map holds for it. */
void nft_rb_objref_map(struct nft_rb *rb, const char *set)
{
	struct nftnl_expr *e;

	nft_rb_meta_load(rb, NFT_META_MARK, NFT_REG_1);
	nft_rb_mask_u32(rb, KEY_MASK);
	if (rb->err || rb->r == NULL)
		return;
	e = nftnl_expr_alloc("objref");
	if (e == NULL) {
		rb->err = -ENOMEM;
		return;
	}
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_SET_SREG, NFT_REG_1);
	if (nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_SET_NAME, set) < 0)
		rb->err = -ENOMEM;
	nftnl_rule_add_expr(rb->r, e);
}

/*
 * limit name meta mark & 0xff0fffff map @rate_limits
 * counter name meta mark & 0xff0fffff map @rate_drops drop
 * The limit objects are inverted ("over"): the rule goes on only past the rate.
 */
void nft_rate_rule(struct nft_batch *b)
{
	struct nft_rb rb;

	nft_rb_init(&rb, NFT_CH_SESSION);
	nft_rb_objref_map(&rb, NFT_SET_RATES);
	nft_rb_objref_map(&rb, NFT_SET_DROPS);
	nft_rb_verdict(&rb, NF_DROP, NULL);
	nft_rb_emit(&rb, b);
}

static void emit_obj(struct nft_batch *b, const struct nft_mark_limit *l, uint32_t mark,
		     uint32_t type, uint16_t msg)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct nlmsghdr *nlh;
	char name[32];

	if (o == NULL) {
		b->err = -ENOMEM;
		return;
	}
	obj_name(name, sizeof(name),
		 type == NFT_OBJECT_LIMIT ? l->limit_prefix : l->counter_prefix, mark);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_INET);
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, NFT_TABLE);
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, type);
	if (type == NFT_OBJECT_LIMIT && msg == NFT_MSG_NEWOBJ) {
		/* Inverted: the rule goes on only past the rate. */
		nftnl_obj_set_u64(o, NFTNL_OBJ_LIMIT_RATE, l->rate);
		nftnl_obj_set_u64(o, NFTNL_OBJ_LIMIT_UNIT, 1);
		nftnl_obj_set_u32(o, NFTNL_OBJ_LIMIT_BURST, l->burst);
		nftnl_obj_set_u32(o, NFTNL_OBJ_LIMIT_TYPE, l->type);
		nftnl_obj_set_u32(o, NFTNL_OBJ_LIMIT_FLAGS, NFT_LIMIT_F_INV);
	}
	nlh = nft_batch_msg(b, msg, msg == NFT_MSG_NEWOBJ ? NLM_F_CREATE | NLM_F_EXCL : 0);
	if (nlh != NULL) {
		nftnl_obj_nlmsg_build_payload(nlh, o);
		nft_batch_done(b, nlh);
	}
	nftnl_obj_free(o);
}

/* mark -> the object named prefix + ID, in map. */
static void emit_elem(struct nft_batch *b, uint32_t mark, const char *map, const char *prefix,
		      uint16_t msg)
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

void nft_mark_limit_emit(struct nft_batch *b, const struct nft_mark_limit *l, uint32_t mark,
			 bool add)
{
	if (add) {   /* objects before the elements naming them */
		emit_obj(b, l, mark, NFT_OBJECT_LIMIT, NFT_MSG_NEWOBJ);
		emit_obj(b, l, mark, NFT_OBJECT_COUNTER, NFT_MSG_NEWOBJ);
		emit_elem(b, mark, l->limit_map, l->limit_prefix, NFT_MSG_NEWSETELEM);
		emit_elem(b, mark, l->counter_map, l->counter_prefix, NFT_MSG_NEWSETELEM);
		return;
	}
	emit_elem(b, mark, l->limit_map, l->limit_prefix, NFT_MSG_DELSETELEM);
	emit_elem(b, mark, l->counter_map, l->counter_prefix, NFT_MSG_DELSETELEM);
	emit_obj(b, l, mark, NFT_OBJECT_LIMIT, NFT_MSG_DELOBJ);
	emit_obj(b, l, mark, NFT_OBJECT_COUNTER, NFT_MSG_DELOBJ);
}

void nft_rate_elems(struct nft_batch *b, const struct nft_session *s, uint16_t type)
{
	/* Bytes, burst 0: the bucket holds one second of the rate. */
	struct nft_mark_limit l = {
		.limit_map = NFT_SET_RATES, .limit_prefix = "rate_",
		.counter_map = NFT_SET_DROPS, .counter_prefix = "drops_",
		.type = NFT_LIMIT_PKT_BYTES, .rate = s->rate_bytes, .burst = 0,
	};

	if (s->rate_bytes == 0)
		return;
	nft_mark_limit_emit(b, &l, s->mark, type == NFT_MSG_NEWSETELEM);
}

/* What a GETOBJ brings back: one counter (get) or every drops_ID counter (dump). */
struct get_ctx {
	uint64_t pkts, bytes;
	bool found;
	bool dump;
	const char *prefix;            /* dump: the counters whose name is prefix + ID */
	struct nft_rate_drops *v;
	size_t n, cap;
	int err;
};

static void keep_drops(struct get_ctx *c, struct nftnl_obj *o)
{
	const char *name = nftnl_obj_get_str(o, NFTNL_OBJ_NAME);
	size_t plen = strlen(c->prefix);
	unsigned long id;
	char *end;

	if (name == NULL || strncmp(name, c->prefix, plen) != 0)
		return;
	id = strtoul(name + plen, &end, 10);
	if (*end || id == 0 || id > NFT_SESSION_ID_MAX)
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct nft_rate_drops *v = realloc(c->v, cap * sizeof(*v));

		if (v == NULL) {
			c->err = -ENOMEM;
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct nft_rate_drops){ nft_mark_make((uint32_t)id),
						 nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_PKTS),
						 nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_BYTES) };
}

static int on_obj(const struct nlmsghdr *nlh, void *data)
{
	struct get_ctx *c = data;
	struct nftnl_obj *o = nftnl_obj_alloc();

	if (o == NULL)
		return MNL_CB_ERROR;
	if (nftnl_obj_nlmsg_parse(nlh, o) == 0) {
		if (c->dump) {
			keep_drops(c, o);
		} else {
			c->pkts = nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_PKTS);
			c->bytes = nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_BYTES);
			c->found = true;
		}
	}
	nftnl_obj_free(o);
	return c->err ? MNL_CB_ERROR : MNL_CB_OK;
}

/* Reads answers to seq until the object (get), NLMSG_DONE (dump) or an error; stale
 * answers to older sequence numbers are skipped. */
static int get_recv_into(struct nft_handle *h, uint32_t seq, struct get_ctx *c, char *buf)
{
	struct pollfd p = { .fd = mnl_socket_get_fd(h->nl), .events = POLLIN };
	ssize_t n;
	int ret;

	for (;;) {
		ret = poll(&p, 1, GET_TIMEOUT_MS);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			return ret < 0 ? -errno : -ETIMEDOUT;
		n = mnl_socket_recvfrom(h->nl, buf, RECV_BUF);
		if (n < 0)
			return -errno;
		ret = mnl_cb_run(buf, (size_t)n, seq, h->portid, on_obj, c);
		if (c->err)
			return c->err;
		if (ret == MNL_CB_ERROR && errno == EPROTO)
			continue;   /* a stale answer to an older sequence number */
		if (ret <= MNL_CB_STOP)
			return ret < 0 ? -errno : 0;
		if (c->found)
			return 0;
	}
}

/*
 * Reads answers to seq until the object (get), NLMSG_DONE (dump) or an error. The
 * buffer is as large as nft_batch.c's: dump skbs grow to the largest read the socket
 * has seen, and a smaller buffer would truncate them.
 */
static int get_recv(struct nft_handle *h, uint32_t seq, struct get_ctx *c)
{
	char *buf = malloc(RECV_BUF);
	int ret;

	if (buf == NULL)
		return -ENOMEM;
	ret = get_recv_into(h, seq, c, buf);
	free(buf);
	return ret;
}

int nft_rate_drops_all(struct nft_handle *h, struct nft_rate_drops **out, size_t *n)
{
	return nft_counters_dump(h, "drops_", out, n);
}

int nft_counters_dump(struct nft_handle *h, const char *prefix, struct nft_rate_drops **out,
		      size_t *n)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct get_ctx c = { .dump = true, .prefix = prefix };
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct nlmsghdr *nlh;
	uint32_t seq = h->seq++;
	int ret;

	*out = NULL;
	*n = 0;
	if (o == NULL)
		return -ENOMEM;
	/* The kernel filters a dump by table and object type. */
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, NFT_TABLE);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_COUNTER);
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETOBJ, NFPROTO_INET, NLM_F_DUMP, seq);
	nftnl_obj_nlmsg_build_payload(nlh, o);
	nftnl_obj_free(o);
	ret = mnl_socket_sendto(h->nl, nlh, nlh->nlmsg_len) < 0 ? -errno : 0;
	if (ret == 0)
		ret = get_recv(h, seq, &c);
	if (ret) {
		free(c.v);
		return ret;
	}
	*out = c.v;
	*n = c.n;
	return 0;
}

int nft_rate_drops(struct nft_handle *h, uint32_t mark, uint64_t *pkts, uint64_t *bytes)
{
	char buf[MNL_SOCKET_BUFFER_SIZE], name[32];
	struct get_ctx c = { 0 };
	struct nftnl_obj *o;
	struct nlmsghdr *nlh;
	uint32_t seq = h->seq++;
	int ret;

	if (nft_mark_check(mark) != 0)
		return -EINVAL;
	o = nftnl_obj_alloc();
	if (o == NULL)
		return -ENOMEM;
	obj_name(name, sizeof(name), "drops_", mark);
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, NFT_TABLE);
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_COUNTER);
	/* No NLM_F_ACK: the answer is the object or an error, nothing after it. */
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETOBJ, NFPROTO_INET, 0, seq);
	nftnl_obj_nlmsg_build_payload(nlh, o);
	nftnl_obj_free(o);
	if (mnl_socket_sendto(h->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	ret = get_recv(h, seq, &c);
	if (ret == 0 && !c.found)
		ret = -ENOENT;
	if (ret == 0) {
		*pkts = c.pkts;
		*bytes = c.bytes;
	}
	return ret;
}

static const struct { const char *unit; uint64_t mul, div; } rate_units[] = {
	{ "bit", 1, 8 }, { "kbit", 1000, 8 }, { "mbit", 1000000, 8 },
	{ "gbit", 1000000000, 8 }, { "bytes", 1, 1 }, { "kbytes", 1024, 1 },
	{ "mbytes", 1024 * 1024, 1 }, { "gbytes", 1024 * 1024 * 1024, 1 },
};

int nft_rate_parse(const char *s, uint64_t *bytes_per_s)
{
	char *end;
	double v;
	size_t n;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || !(v > 0))
		return -EINVAL;
	n = strlen(end);
	if (n >= 2 && strcmp(end + n - 2, "/s") == 0)
		n -= 2;
	for (size_t i = 0; i < sizeof(rate_units) / sizeof(rate_units[0]); i++) {
		double r;

		if (n != strlen(rate_units[i].unit) || strncmp(end, rate_units[i].unit, n) != 0)
			continue;
		r = v * (double)rate_units[i].mul / (double)rate_units[i].div;
		if (!(r >= 1 && r <= (double)NFT_RATE_MAX))
			return -ERANGE;
		*bytes_per_s = (uint64_t)(r + 0.5);
		return 0;
	}
	return -EINVAL;
}
