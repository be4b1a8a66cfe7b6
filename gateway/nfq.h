/*
 * How a queue worker (gateway/nfq.c) reads what it receives from its NFQUEUE socket,
 * apart from the socket so that fuzz_nfq drives it with bytes as a sandbox could shape
 * them (a packet's payload is the sandbox's; a forged datagram is anyone's with
 * CAP_NET_ADMIN in the gateway's namespace).
 */
#ifndef SANDGATE_GATEWAY_NFQ_H
#define SANDGATE_GATEWAY_NFQ_H

#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>

struct gw_meta;

/* Called for each whole message of a receive buffer; nonzero stops the split. */
typedef int (*nfq_msg_fn)(void *ctx, const struct nlmsghdr *nlh);

/*
 * Splits the n received bytes at buf into netlink messages and calls fn for each.
 * cap is the size of buf: when it leaves room for the last message's padding (the
 * kernel does not send it after a queued packet), the padding is zeroed there, for
 * libmnl reads a message's attributes up to its aligned end. Without that room, or
 * when the framing is broken (a message longer than what is left, or shorter than its
 * header), the rest of the buffer is not read and *unread counts it (once a buffer).
 * Returns what fn returned last (0 when all went through).
 */
int nfq_split(uint8_t *buf, size_t n, size_t cap, nfq_msg_fn fn, void *ctx,
	      uint64_t *unread);

/*
 * One NFQNL_MSG_PACKET message into m (id, mark, uid, checksum state, payload; the
 * rest of m is left as it was). 0, or -EBADMSG without a packet header (no id: there is
 * nothing to answer).
 */
int nfq_packet_parse(const struct nlmsghdr *nlh, struct gw_meta *m);

#endif
