/*
 * A TCP flow's net.flow at its close (gateway/ct_int.h). Conntrack keeps a closed
 * connection for its TIME_WAIT (120 s by default) or CLOSE timeout before the destroy
 * event: the record would come minutes late. The event socket also listens for state
 * updates: at TIME_WAIT or CLOSE the entry's counters are read (update events carry
 * none) and the flow ends there. Its id and tuple are kept until the destroy event,
 * which is then swallowed: one final net.flow per flow. Runs on the conntrack thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gateway/ct_int.h"
#include "nft/nft.h"

#define CL_BUCKETS 65536u
#define CL_MAX (1u << 20)           /* closed entries remembered at most */
#define CL_EXPIRE_EVERY_MS 10000
#define CL_SLACK_MS 60000           /* past the longest timeout, for late destroy events */

struct cl_node {
	struct cl_node *next;
	uint32_t id, kh;
	int64_t at_ms;
};

struct gw_ctclosed {
	struct cl_node *b[CL_BUCKETS];
	size_t n;
};

/* FNV-1a of the key (zero-padded by gw_ct_key, so equal tuples hash alike). */
static uint32_t key_hash(const struct flow_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static struct cl_node **cl_slot(struct gw_ctclosed *c, uint32_t id, uint32_t kh)
{
	struct cl_node **pp = &c->b[(id ^ kh) % CL_BUCKETS];

	while (*pp && ((*pp)->id != id || (*pp)->kh != kh))
		pp = &(*pp)->next;
	return pp;
}

static int cl_add(struct gw_ctclosed *c, uint32_t id, uint32_t kh, int64_t now)
{
	struct cl_node **pp = cl_slot(c, id, kh), *n;

	if (*pp)
		return 0;
	if (c->n >= CL_MAX || (n = calloc(1, sizeof(*n))) == NULL)
		return -ENOSPC;
	n->id = id;
	n->kh = kh;
	n->at_ms = now;
	*pp = n;
	c->n++;
	return 0;
}

/* Whether id/kh was closed; take: forget it too. */
static bool cl_has(struct gw_ctclosed *c, uint32_t id, uint32_t kh, bool take)
{
	struct cl_node **pp = cl_slot(c, id, kh), *n = *pp;

	if (!n)
		return false;
	if (take) {
		*pp = n->next;
		free(n);
		c->n--;
	}
	return true;
}

static int on_get(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct gw_ctev *c = data;

	(void)type;
	nfct_copy(c->got, ct, NFCT_CP_OVERRIDE);
	c->found = true;
	return NFCT_CB_CONTINUE;
}

int gw_ctev_init(struct gw_ctev *c, struct gateway *g)
{
	memset(c, 0, sizeof(*c));
	c->g = g;
	c->closed = calloc(1, sizeof(*c->closed));
	c->got = nfct_new();
	if (!c->closed || !c->got)
		return -ENOMEM;
	/* Opened in the gateway's namespace (the conntrack thread is in it). */
	c->get = nfct_open(CONNTRACK, 0);
	if (!c->get)
		return errno ? -errno : -EIO;
	if (nfct_callback_register(c->get, NFCT_T_ALL, on_get, c) < 0)
		return -EIO;
	return 0;
}

void gw_ctev_fini(struct gw_ctev *c)
{
	struct cl_node *n, *next;

	if (c->get)
		nfct_close(c->get);
	if (c->got)
		nfct_destroy(c->got);
	for (size_t i = 0; c->closed && i < CL_BUCKETS; i++)
		for (n = c->closed->b[i]; n; n = next) {
			next = n->next;
			free(n);
		}
	free(c->closed);
	memset(c, 0, sizeof(*c));
}

/* A TCP state at which the connection is over: both FINs and the last ACK, or a RST. */
static bool tcp_closed(const struct nf_conntrack *ct)
{
	uint8_t st;

	if (nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO) != IPPROTO_TCP ||
	    nfct_attr_is_set(ct, ATTR_TCP_STATE) <= 0)
		return false;
	st = nfct_get_attr_u8(ct, ATTR_TCP_STATE);
	return st == TCP_CONNTRACK_TIME_WAIT || st == TCP_CONNTRACK_CLOSE;
}

/* Reads entry ct again (its counters now) into c->got. 0, -ENOENT (gone), -errno. */
static int read_entry(struct gw_ctev *c, const struct nf_conntrack *ct)
{
	struct nf_conntrack *q = nfct_new();
	int ret = 0;

	if (!q)
		return -ENOMEM;
	nfct_copy(q, ct, NFCT_CP_ORIG);
	c->found = false;
	if (nfct_query(c->get, NFCT_Q_GET, q) != 0)
		ret = errno ? -errno : -EIO;
	nfct_destroy(q);
	if (ret == 0 && (!c->found ||
			 nfct_get_attr_u32(c->got, ATTR_ID) != nfct_get_attr_u32(ct, ATTR_ID)))
		ret = -ENOENT;   /* a new entry took the tuple: this one was destroyed */
	return ret;
}

static void on_update(struct gw_ctev *c, const struct nf_conntrack *ct)
{
	struct flow_key k;
	uint32_t id = nfct_get_attr_u32(ct, ATTR_ID), kh;

	if (!tcp_closed(ct))
		return;
	gw_ct_key(ct, &k);
	kh = key_hash(&k);
	if (cl_has(c->closed, id, kh, false))
		return;   /* TIME_WAIT then CLOSE, say: recorded at the first */
	/* Gone already: its destroy event follows and records it. */
	if (read_entry(c, ct) != 0)
		return;
	/* Without room to remember it, the destroy event records it instead. */
	if (cl_add(c->closed, id, kh, time_mono_ms()) != 0)
		return;
	atomic_fetch_add_explicit(&c->g->st.flows_closed, 1, memory_order_relaxed);
	gw_ct_finish(c->g, c->got);
}

void gw_ctev_recorded(struct gw_ctev *c, uint32_t id, const struct flow_key *k)
{
	if (c && c->closed)
		(void)cl_add(c->closed, id, key_hash(k), time_mono_ms());   /* full: written twice */
}

int gw_ct_on_event(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct gw_ctev *c = data;
	struct flow_key k;

	if (!nft_mark_is_session(nfct_get_attr_u32(ct, ATTR_MARK)))
		return NFCT_CB_CONTINUE;   /* host traffic: never reported */
	if (type == NFCT_T_UPDATE) {
		on_update(c, ct);
		return NFCT_CB_CONTINUE;
	}
	if (type != NFCT_T_DESTROY)
		return NFCT_CB_CONTINUE;
	gw_ct_key(ct, &k);
	if (cl_has(c->closed, nfct_get_attr_u32(ct, ATTR_ID), key_hash(&k), true))
		return NFCT_CB_CONTINUE;   /* recorded at its close */
	gw_ct_finish(c->g, ct);
	return NFCT_CB_CONTINUE;
}

/* The namespace's timeout sysctl name in ms; fallback when unreadable. */
static int64_t timeout_ms(const char *name, int64_t fallback)
{
	char path[128], b[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/netfilter/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fallback;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return fallback;
	b[n] = '\0';
	return strtoll(b, NULL, 10) * 1000;
}

void gw_ctev_expire(struct gw_ctev *c)
{
	int64_t now = time_mono_ms(), keep, tw, cl;
	struct cl_node **pp, *n;

	if (now < c->next_expire_ms || !c->closed || c->closed->n == 0)
		return;
	c->next_expire_ms = now + CL_EXPIRE_EVERY_MS;
	tw = timeout_ms("nf_conntrack_tcp_timeout_time_wait", 120000);
	cl = timeout_ms("nf_conntrack_tcp_timeout_close", 10000);
	keep = (tw > cl ? tw : cl) + CL_SLACK_MS;
	for (size_t i = 0; i < CL_BUCKETS; i++)
		for (pp = &c->closed->b[i]; (n = *pp) != NULL;) {
			if (now - n->at_ms < keep) {
				pp = &n->next;
				continue;
			}
			*pp = n->next;
			free(n);
			c->closed->n--;
		}
}
