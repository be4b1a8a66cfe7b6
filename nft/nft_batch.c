/*
 * One nfnetlink batch: begin, messages, end, sent in one sendmsg; then every ACK is
 * read back and matched by sequence number. Either the whole batch commits or none
 * of it does; the first error the kernel names is returned.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "nft/nft_int.h"

#define ACK_TIMEOUT_MS 5000
#define DRAIN_TIMEOUT_MS 200   /* after an error or ENOBUFS: what is left comes at once */
#define RECV_BUF 65536

/* Makes room for one more message of at most NFT_MSG_ROOM bytes. */
static char *batch_room(struct nft_batch *b)
{
	char *p;
	size_t cap;

	if (b->err)
		return NULL;
	if (b->cap - b->len >= NFT_MSG_ROOM)
		return b->buf + b->len;
	cap = b->cap ? b->cap * 2 : 4 * NFT_MSG_ROOM;
	p = realloc(b->buf, cap);
	if (p == NULL) {
		b->err = -ENOMEM;
		return NULL;
	}
	/* libnftnl builders expect zeroed space behind each header. */
	memset(p + b->len, 0, cap - b->len);
	b->buf = p;
	b->cap = cap;
	return b->buf + b->len;
}

int nft_batch_init(struct nft_batch *b, uint32_t seq)
{
	struct nlmsghdr *nlh;
	char *p;

	memset(b, 0, sizeof(*b));
	/* seq 0 means "unsolicited" to some readers: never use it. */
	b->seq_first = seq ? seq : 1;
	b->seq_next = b->seq_first;
	p = batch_room(b);
	if (p == NULL)
		return b->err;
	nlh = nftnl_batch_begin(p, b->seq_next++);
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
	return 0;
}

void nft_batch_free(struct nft_batch *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

struct nlmsghdr *nft_batch_msg(struct nft_batch *b, uint16_t type, uint16_t flags)
{
	char *p = batch_room(b);

	if (p == NULL)
		return NULL;
	return nftnl_nlmsg_build_hdr(p, type, NFPROTO_INET, flags | NLM_F_ACK, b->seq_next++);
}

void nft_batch_done(struct nft_batch *b, struct nlmsghdr *nlh)
{
	if (nlh == NULL)
		return;
	/* Every message we build is far below NFT_MSG_ROOM (ifnames are capped per
	 * session); a larger one means a bug, so refuse the batch rather than send it. */
	if (nlh->nlmsg_len > NFT_MSG_ROOM) {
		b->err = -EMSGSIZE;
		return;
	}
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
	b->nacks++;
}

/* Progress of reading the ACKs of one batch. */
struct ack_state {
	uint32_t first, last, portid;
	uint32_t acked;
	int err;                  /* first error the kernel reported */
	bool lost;                /* ENOBUFS: some ACKs were dropped */
};

static void ack_parse(struct ack_state *st, const char *buf, size_t len)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	int n = (int)len;

	for (; mnl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n)) {
		const struct nlmsgerr *e;

		/* Stale ACKs of an earlier batch (after ENOBUFS) are skipped by seq. */
		if (nlh->nlmsg_seq < st->first || nlh->nlmsg_seq > st->last ||
		    nlh->nlmsg_pid != st->portid || nlh->nlmsg_type != NLMSG_ERROR)
			continue;
		if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
			continue;
		e = mnl_nlmsg_get_payload(nlh);
		st->acked++;
		if (e->error != 0 && st->err == 0)
			st->err = e->error;
	}
}

static int ack_recv(struct mnl_socket *nl, struct ack_state *st, char *buf, int timeout)
{
	struct pollfd pfd = { .fd = mnl_socket_get_fd(nl), .events = POLLIN };
	ssize_t n;
	int r;

	r = poll(&pfd, 1, timeout);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (r == 0)
		return -ETIMEDOUT;
	n = mnl_socket_recvfrom(nl, buf, RECV_BUF);
	if (n < 0) {
		if (errno == ENOBUFS) {
			st->lost = true;
			return 0;
		}
		return errno == EINTR ? 0 : -errno;
	}
	ack_parse(st, buf, (size_t)n);
	return 0;
}

static int acks_read(struct nft_handle *h, struct ack_state *st, uint32_t nacks)
{
	char *buf = malloc(RECV_BUF);
	int ret = 0;

	if (buf == NULL)
		return -ENOMEM;
	while (st->acked < nacks) {
		int t = (st->err || st->lost) ? DRAIN_TIMEOUT_MS : ACK_TIMEOUT_MS;

		ret = ack_recv(h->nl, st, buf, t);
		if (ret != 0)
			break;
	}
	free(buf);
	/* A reported error means the batch was aborted: a known outcome. */
	if (st->err)
		return st->err;
	if (st->lost)
		return -ENOBUFS;
	return ret;
}

int nft_batch_send(struct nft_handle *h, struct nft_batch *b)
{
	struct ack_state st = { .portid = h->portid };
	struct nlmsghdr *nlh;
	char *p;

	p = batch_room(b);
	if (b->err)
		return b->err;
	nlh = nftnl_batch_end(p, b->seq_next);
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
	st.first = b->seq_first;
	st.last = b->seq_next;
	h->seq = b->seq_next + 1;
	if (mnl_socket_sendto(h->nl, b->buf, b->len) < 0)
		return -errno;
	return acks_read(h, &st, b->nacks);
}
