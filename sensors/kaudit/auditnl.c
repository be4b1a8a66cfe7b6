/*
 * Requests to the kernel's audit subsystem over a NETLINK_AUDIT unicast socket: status,
 * enabling, the backlog limit, adding and deleting our execve rules. The rules and the
 * enabled flag are shared with a host's auditd: ours are deleted by exact match (never a
 * flush) and only when we added them; the enabled flag and backlog limit are put back
 * as they were only when we changed them.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/netlink.h>

#include "sensors/kaudit/auditnl.h"

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
		/*
		 * got stays signed: NLMSG_NEXT takes a message's *aligned* length from it, so
		 * after a last message whose padding is not in the datagram it goes below 0,
		 * and as a size_t NLMSG_OK took the bytes past the buffer for a message
		 * (heap-buffer-overflow, tests/unit/test_kaudit_nl.c). The kernel pads its
		 * audit replies; nothing of the datagram is left unread.
		 */
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, got); nh = NLMSG_NEXT(nh, got)) {
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

/* The rule for one arch: exit,always, arch=A, syscalls, key=KEY. */
static struct audit_rule_data *rule_new(const char *key, uint32_t arch, const unsigned *nrs,
					size_t n, size_t *len)
{
	size_t klen = strlen(key);
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
	memcpy(r->buf, key, klen);
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
static int rule_op(int fd, const char *key, uint16_t op, uint32_t arch, const unsigned *nrs)
{
	size_t len;
	struct audit_rule_data *r = rule_new(key, arch, nrs, 2, &len);
	int ret;

	if (!r)
		return -ENOMEM;
	ret = nl_request(fd, op, r, len, NULL, 0);
	free(r);
	return ret;
}

int auditnl_rules_add(int fd, const char *key, bool *added, size_t n)
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
		ret = rule_op(fd, key, AUDIT_ADD_RULE, arch[i], nrs[i]);
		/* The key is this daemon's (sandgate-PID): a rule already there is a
		 * leftover of a killed daemon of the same pid, or ours re-added. */
		if (ret && ret != -EEXIST)
			return ret;
		added[i] = true;
	}
	return 0;
}

int auditnl_rules_del(int fd, const char *key, const bool *added, size_t n)
{
	uint32_t arch[AUDITNL_RULES];
	unsigned nrs[AUDITNL_RULES][2];
	size_t k = rules_of_arch(arch, nrs, AUDITNL_RULES);
	int ret, first = 0;

	for (size_t i = 0; i < k && i < n; i++) {
		if (!added[i])
			continue;
		ret = rule_op(fd, key, AUDIT_DEL_RULE, arch[i], nrs[i]);
		if (ret && ret != -ENOENT && !first)
			first = ret;   /* -ENOENT: the host flushed it (auditctl -D) */
	}
	return first;
}

/* Fields whose value is a length of bytes in buf (audit_krule_to_data). */
static bool str_field(uint32_t f)
{
	return (f >= AUDIT_SUBJ_USER && f <= AUDIT_SUBJ_CLR) ||
	       (f >= AUDIT_OBJ_USER && f <= AUDIT_OBJ_LEV_HIGH) || f == AUDIT_WATCH ||
	       f == AUDIT_DIR || f == AUDIT_FILTERKEY || f == AUDIT_EXE;
}

/*
 * The PID in a daemon's key "sandgate-PID", or 0 when the key is not of that form (a
 * host's own rule keyed "sandgate", say: no daemon relies on it).
 */
static pid_t key_daemon_pid(const char *rk, size_t len)
{
	char num[16];
	long pid;
	char *end;

	if (len < 10 || len - 9 >= sizeof(num) || memcmp(rk, "sandgate-", 9) != 0)
		return 0;
	memcpy(num, rk + 9, len - 9);
	num[len - 9] = '\0';
	errno = 0;
	pid = strtol(num, &end, 10);
	if (errno || *end || pid <= 0 || pid > INT32_MAX)
		return 0;
	return (pid_t)pid;
}

static void note_stale(struct auditnl_scan *sc, const char *rk, size_t len)
{
	for (unsigned i = 0; i < sc->n_stale; i++)
		if (strlen(sc->stale[i]) == len && memcmp(sc->stale[i], rk, len) == 0)
			return;
	if (sc->n_stale >= AUDITNL_STALE_MAX || len >= sizeof(sc->stale[0]))
		return;   /* the rest on the next start */
	memcpy(sc->stale[sc->n_stale], rk, len);
	sc->stale[sc->n_stale][len] = '\0';
	sc->n_stale++;
}

/* What one listed rule says: its arch, its key, and whether it audits execve at exit. */
static void scan_rule(const struct audit_rule_data *r, size_t len, const char *key,
		      const uint32_t *arch, unsigned nrs[][2], size_t k,
		      struct auditnl_scan *sc)
{
	size_t off = 0, klen = strlen(key);
	uint32_t ra = 0;
	const char *rk = NULL;
	size_t rklen = 0;

	if (len < sizeof(*r) || r->field_count > AUDIT_MAX_FIELDS ||
	    r->buflen > len - sizeof(*r))
		return;
	for (uint32_t f = 0; f < r->field_count; f++) {
		if (r->fields[f] == AUDIT_ARCH)
			ra = r->values[f];
		if (str_field(r->fields[f])) {
			/* string fields: values[f] bytes of buf, in field order */
			if (r->values[f] > r->buflen - off)
				return;
			if (r->fields[f] == AUDIT_FILTERKEY) {
				rk = r->buf + off;
				rklen = r->values[f];
			}
			off += r->values[f];
		}
	}
	if (!rk || rklen < 8 || memcmp(rk, "sandgate", 8) != 0)
		return;
	if (rklen != klen || memcmp(rk, key, klen) != 0) {
		pid_t pid = key_daemon_pid(rk, rklen);

		if (pid && kill(pid, 0) == -1 && errno == ESRCH)
			note_stale(sc, rk, rklen);   /* a daemon killed before it cleaned up */
		else if (pid)
			sc->others++;   /* another live sandgated's rule */
		return;
	}
	for (size_t i = 0; i < k && i < AUDITNL_RULES; i++)
		if (ra == arch[i] && r->flags == AUDIT_FILTER_EXIT && r->action == AUDIT_ALWAYS &&
		    (r->mask[nrs[i][0] / 32] & (1u << (nrs[i][0] % 32))))
			sc->present[i] = true;
}

/* Reads the AUDIT_LIST_RULES dump of request seq until its NLMSG_DONE. */
static int scan_read(int fd, uint32_t seq, uint8_t *buf, const char *key,
		     struct auditnl_scan *sc)
{
	uint32_t arch[AUDITNL_RULES];
	unsigned nrs[AUDITNL_RULES][2];
	size_t k = rules_of_arch(arch, nrs, AUDITNL_RULES);
	struct nlmsghdr *nh;
	ssize_t got;

	for (;;) {
		got = recv(fd, buf, NL_BUF, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		/* got stays signed (see nl_request). */
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, got); nh = NLMSG_NEXT(nh, got)) {
			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EPROTO;
				if (e->error)
					return e->error;
				continue;   /* the ack of the request; the dump follows */
			}
			if (nh->nlmsg_type == AUDIT_LIST_RULES)
				scan_rule(NLMSG_DATA(nh), nh->nlmsg_len - NLMSG_HDRLEN, key, arch,
					  nrs, k, sc);
		}
	}
}

int auditnl_rules_scan(int fd, const char *key, struct auditnl_scan *sc)
{
	static _Atomic uint32_t scan_seq = 1u << 31;
	struct nlmsghdr *nh;
	uint8_t *buf = calloc(1, NL_BUF);
	uint32_t seq = ++scan_seq;
	int ret;

	memset(sc, 0, sizeof(*sc));
	if (!buf)
		return -ENOMEM;
	nh = (struct nlmsghdr *)buf;
	nh->nlmsg_len = NLMSG_LENGTH(0);
	nh->nlmsg_type = AUDIT_LIST_RULES;
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nh->nlmsg_seq = seq;
	ret = send(fd, buf, nh->nlmsg_len, 0) < 0 ? -errno : scan_read(fd, seq, buf, key, sc);
	free(buf);
	return ret;
}

int auditnl_rules_reap(int fd, const char *key, unsigned *reaped)
{
	uint32_t arch[AUDITNL_RULES];
	unsigned nrs[AUDITNL_RULES][2];
	size_t k = rules_of_arch(arch, nrs, AUDITNL_RULES);
	struct auditnl_scan *sc = calloc(1, sizeof(*sc));
	int ret;

	*reaped = 0;
	if (!sc)
		return -ENOMEM;
	ret = auditnl_rules_scan(fd, key, sc);
	for (unsigned i = 0; ret == 0 && i < sc->n_stale; i++) {
		for (size_t j = 0; j < k && ret == 0; j++) {
			ret = rule_op(fd, sc->stale[i], AUDIT_DEL_RULE, arch[j], nrs[j]);
			if (ret == -ENOENT)
				ret = 0;   /* that daemon had no rule of this arch */
		}
		if (ret == 0)
			(*reaped)++;
	}
	free(sc);
	return ret;
}

size_t auditnl_rules_count(void)
{
	uint32_t arch[AUDITNL_RULES];
	unsigned nrs[AUDITNL_RULES][2];

	return rules_of_arch(arch, nrs, AUDITNL_RULES);
}
