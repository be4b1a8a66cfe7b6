/*
 * The audit control requests' reply reading (sensors/kaudit/auditnl.c) on replies
 * written in advance into the other end of a datagram socketpair, as the kernel's
 * NETLINK_AUDIT socket would deliver them: a datagram of several messages, and one
 * whose last message's padding is not in it.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sensors/kaudit/auditnl.h"

#define NL_BUF 8192   /* auditnl.c's receive buffer */

/* fds[0] is auditnl's end (100 ms receive timeout), fds[1] the kernel's. */
static void pair(int fds[2])
{
	struct timeval tv = { .tv_usec = 100 * 1000 };

	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, fds), 0);
	assert_int_equal(setsockopt(fds[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
}

/* AUDIT_GET replies for request numbers 1..16 in one datagram, each saying its number
 * in backlog_limit: the request's own is found among the others. */
static void test_status_among_others(void **state)
{
	uint8_t *d = calloc(1, 16 * NLMSG_SPACE(sizeof(struct audit_status)));
	struct audit_status st = { 0 };
	size_t off = 0;
	int fds[2];

	(void)state;
	assert_non_null(d);
	for (uint32_t seq = 1; seq <= 16; seq++) {
		struct nlmsghdr h = { .nlmsg_len = NLMSG_LENGTH(sizeof(st)),
				      .nlmsg_type = AUDIT_GET, .nlmsg_seq = seq };
		struct audit_status s = { .backlog_limit = seq };

		memcpy(d + off, &h, sizeof(h));
		memcpy(d + off + NLMSG_HDRLEN, &s, sizeof(s));
		off += NLMSG_SPACE(sizeof(st));
	}
	pair(fds);
	assert_int_equal(send(fds[1], d, off, 0), (ssize_t)off);
	assert_int_equal(auditnl_status(fds[0], &st), 0);
	assert_in_range(st.backlog_limit, 1, 16);
	close(fds[0]);
	close(fds[1]);
	free(d);
}

/*
 * A datagram of NL_BUF - 3 bytes, one message of that length (not the request's): its
 * padding runs to the buffer's end, and the walk past it used to take what lies beyond
 * the buffer for the next message (the remaining length went negative and was compared
 * as a size_t). Now the walk ends; the next recv times out.
 */
static void test_unpadded_last_message(void **state)
{
	uint8_t *d = calloc(1, NL_BUF);
	struct nlmsghdr h = { .nlmsg_len = NL_BUF - 3, .nlmsg_type = AUDIT_GET,
			      .nlmsg_seq = 0 };
	struct audit_status st;
	int fds[2];

	(void)state;
	assert_non_null(d);
	memcpy(d, &h, sizeof(h));
	pair(fds);
	assert_int_equal(send(fds[1], d, NL_BUF - 3, 0), NL_BUF - 3);
	assert_int_equal(auditnl_status(fds[0], &st), -EAGAIN);
	close(fds[0]);
	close(fds[1]);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_among_others),
		cmocka_unit_test(test_unpadded_last_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
