/*
 * NFQUEUE receive buffers as a queue worker reads them (gateway/nfq.c): split into
 * messages, each packet message parsed into the worker's packet meta. The packet
 * payload is the sandbox's; the framing is the kernel's unless forged, and is fuzzed
 * all the same. Each input is read twice: from a buffer of exactly its size, and from
 * one with room for its last message's padding, as the worker's receive buffer has.
 * The property checked, besides ASan's: a packet's payload lies within the buffer.
 * libmnl is not instrumented: its attribute walk reading a header past the buffer is
 * seen only when the worker's code then reads what it found there.
 */
#include <linux/netfilter/nfnetlink_queue.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gw_int.h"
#include "gateway/nfq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	const uint8_t *buf;
	size_t cap;
	size_t sink;
};

static int on_msg(void *ctx, const struct nlmsghdr *nlh)
{
	struct run *r = ctx;
	struct gw_meta m = { .uid = -1, .pid = -1 };

	if ((nlh->nlmsg_type & 0xff) != NFQNL_MSG_PACKET || nfq_packet_parse(nlh, &m) != 0)
		return 0;
	/* The worker reads every byte of the payload (gateway/handle.c): so does this, and
	 * ASan sees it, where libmnl's own reads (not instrumented) it does not. */
	for (size_t i = 0; m.pay && i < m.len; i++)
		r->sink += m.pay[i];
	if (m.pay && (m.pay < r->buf || m.len > r->cap ||
		      (size_t)(m.pay - r->buf) > r->cap - m.len))
		abort();
	r->sink += m.id + m.mark;
	return 0;
}

static void one(const uint8_t *data, size_t size, size_t cap)
{
	uint8_t *buf = malloc(cap ? cap : 1);
	struct run r = { .buf = buf, .cap = cap };
	uint64_t unread = 0;

	if (!buf)
		return;
	memcpy(buf, data, size);
	(void)nfq_split(buf, size, cap, on_msg, &r, &unread);
	if (unread > 1)
		abort();   /* only a last message can miss its padding */
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 0xffff + 4096)
		return 0;   /* the worker receives at most NFQ_RBUF */
	one(data, size, size);
	one(data, size, NLMSG_ALIGN(size));
	return 0;
}
