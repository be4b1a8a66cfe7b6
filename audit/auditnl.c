/*
 * Requests to the kernel's audit subsystem over a NETLINK_AUDIT unicast socket: status,
 * enabling, the backlog limit, adding and deleting our execve rules. The rules and the
 * enabled flag are shared with a host's auditd: ours are deleted by exact match (never a
 * flush) and only when we added them; the enabled flag and backlog limit are put back
 * as they were only when we changed them.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/netlink.h>

#include "audit/auditnl.h"

#define NL_BUF 8192

int auditnl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 2 };   /* the kernel answers at once; never hang */
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	return fd;
}

/*
 * Sends one request (type, payload) with NLM_F_ACK and reads until its ack. A reply of
 * type `type` (AUDIT_GET) is copied into reply (rlen bytes at most). 0 or -errno.
 */
static int nl_request(int fd, uint16_t type, const void *data, size_t len, void *reply,
		      size_t rlen)
{
	static _Atomic uint32_t next_seq;
	uint32_t seq = ++next_seq;
	uint8_t *buf;
	struct nlmsghdr *nh;
	ssize_t got;
	int ret = -EPROTO;

	buf = calloc(1, NL_BUF > NLMSG_SPACE(len) ? NL_BUF : NLMSG_SPACE(len));
	if (!buf)
		return -ENOMEM;
	nh = (struct nlmsghdr *)buf;
	nh->nlmsg_len = (uint32_t)NLMSG_LENGTH(len);
	nh->nlmsg_type = type;
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nh->nlmsg_seq = seq;
	if (len)
		memcpy(NLMSG_DATA(nh), data, len);
	if (send(fd, buf, nh->nlmsg_len, 0) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		got = recv(fd, buf, NL_BUF, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = -errno;
			goto out;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)got);
		     nh = NLMSG_NEXT(nh, got)) {
			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					goto out;
				ret = e->error;
				/* AUDIT_GET: the ack may come before the reply. */
				if (ret != 0 || !reply)
					goto out;
				continue;
			}
			if (reply && nh->nlmsg_type == type) {
				size_t n = nh->nlmsg_len - NLMSG_HDRLEN;

				memset(reply, 0, rlen);
				memcpy(reply, NLMSG_DATA(nh), n < rlen ? n : rlen);
				ret = 0;
				goto out;
			}
		}
	}
out:
	free(buf);
	return ret;
}

int auditnl_status(int fd, struct audit_status *st)
{
	return nl_request(fd, AUDIT_GET, NULL, 0, st, sizeof(*st));
}

int auditnl_set(int fd, uint32_t mask, uint32_t enabled, uint32_t backlog_limit)
{
	struct audit_status st = { .mask = mask, .enabled = enabled,
				   .backlog_limit = backlog_limit };

	return nl_request(fd, AUDIT_SET, &st, sizeof(st), NULL, 0);
}

/* Sets syscall nr in a rule's mask. */
static void mask_set(struct audit_rule_data *r, unsigned nr)
{
	r->mask[nr / 32] |= 1u << (nr % 32);
}

/* The rule for one arch: exit,always, arch=A, syscalls, key=AUDITNL_KEY. */
static struct audit_rule_data *rule_new(uint32_t arch, const unsigned *nrs, size_t n,
					size_t *len)
{
	size_t klen = strlen(AUDITNL_KEY);
	struct audit_rule_data *r;

	*len = sizeof(*r) + klen;
	r = calloc(1, *len);
	if (!r)
		return NULL;
	r->flags = AUDIT_FILTER_EXIT;
	r->action = AUDIT_ALWAYS;
	for (size_t i = 0; i < n; i++)
		mask_set(r, nrs[i]);
	r->field_count = 2;
	r->fields[0] = AUDIT_ARCH;
	r->fieldflags[0] = AUDIT_EQUAL;
	r->values[0] = arch;
	r->fields[1] = AUDIT_FILTERKEY;
	r->fieldflags[1] = AUDIT_EQUAL;
	r->values[1] = (uint32_t)klen;
	r->buflen = (uint32_t)klen;
	memcpy(r->buf, AUDITNL_KEY, klen);
	return r;
}

/* The rules of this machine: the native arch, and i386 on x86_64. */
static size_t rules_of_arch(uint32_t *arch, unsigned nrs[][2], size_t max)
{
	size_t n = 0;

	(void)max;
#if defined(__x86_64__)
	arch[n] = AUDIT_ARCH_X86_64;
	nrs[n][0] = 59;     /* execve */
	nrs[n][1] = 322;    /* execveat */
	n++;
	arch[n] = AUDIT_ARCH_I386;
	nrs[n][0] = 11;
	nrs[n][1] = 358;
	n++;
#elif defined(__aarch64__)
	arch[n] = AUDIT_ARCH_AARCH64;
	nrs[n][0] = SYS_execve;
	nrs[n][1] = SYS_execveat;
	n++;
#else
	(void)arch;
	(void)nrs;
#endif
	return n;
}

/* AUDIT_ADD_RULE or AUDIT_DEL_RULE of rule i. 0 or -errno. */
static int rule_op(int fd, uint16_t op, uint32_t arch, const unsigned *nrs)
{
	size_t len;
	struct audit_rule_data *r = rule_new(arch, nrs, 2, &len);
	int ret;

	if (!r)
		return -ENOMEM;
	ret = nl_request(fd, op, r, len, NULL, 0);
	free(r);
	return ret;
}

int auditnl_rules_add(int fd, bool *added, size_t n)
{
	uint32_t arch[AUDITNL_RULES];
	unsigned nrs[AUDITNL_RULES][2];
	size_t k = rules_of_arch(arch, nrs, AUDITNL_RULES);
	int ret;

	if (k == 0)
		return -EAFNOSUPPORT;
	for (size_t i = 0; i < n; i++)
		added[i] = false;
	for (size_t i = 0; i < k && i < n; i++) {
		ret = rule_op(fd, AUDIT_ADD_RULE, arch[i], nrs[i]);
		if (ret == -EEXIST)
			continue;   /* the same rule is someone else's: used, never deleted */
		if (ret)
			return ret;
		added[i] = true;
	}
	return 0;
}

int auditnl_rules_del(int fd, const bool *added, size_t n)
{
	uint32_t arch[AUDITNL_RULES];
	unsigned nrs[AUDITNL_RULES][2];
	size_t k = rules_of_arch(arch, nrs, AUDITNL_RULES);
	int ret, first = 0;

	for (size_t i = 0; i < k && i < n; i++) {
		if (!added[i])
			continue;
		ret = rule_op(fd, AUDIT_DEL_RULE, arch[i], nrs[i]);
		if (ret && ret != -ENOENT && !first)
			first = ret;   /* -ENOENT: the host flushed it (auditctl -D) */
	}
	return first;
}
