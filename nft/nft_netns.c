/*
 * The netfilter netlink socket, opened in a named network namespace when asked.
 * A socket belongs to the namespace it was created in for its whole life, so a
 * short-lived thread enters /run/netns/NAME, creates the socket and exits: the
 * daemon's own threads (the audit sensors need the initial namespace) never move.
 */
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nft/nft_int.h"

/* Room for many ACKs and for a batch carrying thousands of session elements. */
#define NFT_SOCK_BUF (8 * 1024 * 1024)

struct ns_job {
	const char *netns;
	struct mnl_socket *nl;
	int err;
};

static void sock_tune(struct mnl_socket *nl)
{
	int fd = mnl_socket_get_fd(nl);
	int one = 1, size = NFT_SOCK_BUF;

	/* Best effort: small ACKs and a deep buffer only make ENOBUFS rarer. The FORCE
	 * variants pass the rmem_max/wmem_max caps for CAP_NET_ADMIN. */
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

static int sock_create(struct mnl_socket **out)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	int ret;

	if (nl == NULL)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		mnl_socket_close(nl);
		return ret;
	}
	sock_tune(nl);
	*out = nl;
	return 0;
}

static void *ns_thread(void *arg)
{
	struct ns_job *job = arg;
	char path[PATH_MAX];
	int fd;

	if (job->netns[0] == '/')
		snprintf(path, sizeof(path), "%s", job->netns);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", job->netns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		job->err = -errno;
		return NULL;
	}
	/* Only this thread moves; it dies right after, so nothing else runs here. */
	if (setns(fd, CLONE_NEWNET) != 0)
		job->err = -errno;
	else
		job->err = sock_create(&job->nl);
	close(fd);
	return NULL;
}

int nft_socket_open(const char *netns, struct mnl_socket **out)
{
	struct ns_job job = { .netns = netns, .err = 0 };
	pthread_t t;
	int r;

	if (netns == NULL)
		return sock_create(out);
	r = pthread_create(&t, NULL, ns_thread, &job);
	if (r != 0)
		return -r;
	r = pthread_join(t, NULL);
	if (r != 0)
		return -r;
	if (job.err == 0)
		*out = job.nl;
	return job.err;
}
