/*
 * sg_cnchurn N MS: N times, opens a proc connector socket, sends PROC_CN_MCAST_LISTEN,
 * waits MS milliseconds, sends PROC_CN_MCAST_IGNORE and closes. Every request makes the
 * kernel broadcast an ACK to every listener (tests/integration/t_audit_loss.sh: another
 * listener coming and going must not read as loss to the daemon). Exit 0, or 1 when a
 * socket or a request failed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

static int mcast(int fd, uint32_t op)
{
	uint8_t msg[NLMSG_HDRLEN + sizeof(struct cn_msg) + sizeof(op)] = { 0 };
	struct nlmsghdr nh = { .nlmsg_len = sizeof(msg), .nlmsg_type = NLMSG_DONE };
	struct cn_msg cn = { .id = { CN_IDX_PROC, CN_VAL_PROC }, .len = sizeof(op) };

	memcpy(msg, &nh, sizeof(nh));
	memcpy(msg + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(msg + NLMSG_HDRLEN + sizeof(cn), &op, sizeof(op));
	return send(fd, msg, sizeof(msg), 0) == (ssize_t)sizeof(msg) ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	long ms = argc > 2 ? strtol(argv[2], NULL, 10) : 100;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	for (long i = 0; i < n; i++) {
		int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);

		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
		    mcast(fd, PROC_CN_MCAST_LISTEN) != 0) {
			perror("sg_cnchurn");
			return 1;
		}
		nanosleep(&ts, NULL);
		if (mcast(fd, PROC_CN_MCAST_IGNORE) != 0) {
			perror("sg_cnchurn");
			return 1;
		}
		close(fd);
		nanosleep(&ts, NULL);
	}
	return 0;
}
