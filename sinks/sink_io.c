/* A sink's transport (sinks/sink_impl.h): a file, stdout, a TCP connection (with TLS
 * for syslog_tls, sinks/sink_tls.c), or libcurl (sinks/sink_curl.c). */
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "common/timeutil.h"
#include "sinks/sink_impl.h"

#define SINK_SEND_TIMEOUT_S 5

uint64_t sink_now_ms(void)
{
	return (uint64_t)time_mono_ms();
}

/* Non-blocking connect bounded by SINK_SEND_TIMEOUT_S: a black-holed receiver must not
 * hold the sink's thread (and the daemon's shutdown) for the kernel's SYN retries. */
static int connect_bounded(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct pollfd p = { fd, POLLOUT, 0 };
	int flags = fcntl(fd, F_GETFL), err = 0;
	socklen_t elen = sizeof(err);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	if (connect(fd, sa, len) < 0) {
		if (errno != EINPROGRESS)
			return -errno;
		if (poll(&p, 1, SINK_SEND_TIMEOUT_S * 1000) <= 0)
			return -ETIMEDOUT;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
			return -errno;
		if (err)
			return -err;
	}
	return fcntl(fd, F_SETFL, flags) < 0 ? -errno : 0;
}

static int open_tcp(struct sink *k)
{
	struct timeval tv = { SINK_SEND_TIMEOUT_S, 0 };
	int one = 1, ret;
	int fd = socket(k->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);

	if (fd < 0)
		return -errno;
	/* A receiver that stops reading (or, for TLS, answering) must not hold this thread
	 * forever. */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	ret = connect_bounded(fd, (const struct sockaddr *)&k->addr, k->s.addr_len);
	if (ret) {
		close(fd);
		return ret;
	}
	k->fd = fd;
	if (k->s.kind == SINK_SYSLOG_TLS && (ret = sink_tls_open(k)) != 0) {
		sink_io_close(k);
		return ret;
	}
	return 0;
}

int sink_addr_str(const struct sink *k, char *out, size_t len)
{
	const void *a = k->addr.ss_family == AF_INET
				? (const void *)&((const struct sockaddr_in *)&k->addr)->sin_addr
				: (const void *)&((const struct sockaddr_in6 *)&k->addr)->sin6_addr;

	return inet_ntop(k->addr.ss_family, a, out, (socklen_t)len) ? 0 : -EINVAL;
}

int sink_io_open(struct sink *k)
{
	if (k->fd >= 0)
		return 0;
	switch (k->s.kind) {
	case SINK_HEC:
	case SINK_OTLP_HTTP:
		return sink_curl_open(k);
	case SINK_STDOUT:
		k->fd = dup(STDOUT_FILENO);
		return k->fd < 0 ? -errno : 0;
	case SINK_FILE:
		k->fd = open(k->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		return k->fd < 0 ? -errno : 0;
	case SINK_SYSLOG_TCP:
	case SINK_SYSLOG_TLS:
		return open_tcp(k);
	}
	return -EINVAL;
}

int sink_io_write(struct sink *k, const char *data, size_t len)
{
	if (k->s.kind == SINK_HEC || k->s.kind == SINK_OTLP_HTTP)
		return sink_curl_post(k, data, len);
	if (k->s.kind == SINK_SYSLOG_TLS)
		return sink_tls_write(k, data, len);
	while (len) {
		ssize_t n = k->s.kind == SINK_SYSLOG_TCP ? send(k->fd, data, len, MSG_NOSIGNAL)
							: write(k->fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		data += n;
		len -= (size_t)n;
	}
	/* The cursor moves past these lines next: they must be on disk first (a FIFO or
	 * character device has no disk: EINVAL). */
	if (k->s.kind == SINK_FILE && fdatasync(k->fd) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

void sink_io_close(struct sink *k)
{
	sink_curl_close(k);
	sink_tls_close(k);
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

int sink_io_alive(struct sink *k)
{
	struct pollfd p = { k->fd, POLLIN | POLLRDHUP, 0 };
	char junk[256];

	if (k->fd < 0)
		return -ENOTCONN;
	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (p.revents & (POLLRDHUP | POLLHUP | POLLERR))
		return -ECONNRESET;
	if (k->tls)
		return sink_tls_drain(k);   /* records, not bytes: OpenSSL reads them */
	/* A syslog receiver says nothing; whatever it sends is read and ignored. */
	while (recv(k->fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		;
	return 0;
}

int sink_io_unacked(struct sink *k, int *bytes)
{
	if (ioctl(k->fd, SIOCOUTQ, bytes) < 0)
		return -errno;
	return 0;
}
