/* Capability names, the keep set, and the /proc/PID/status parser (pure, fuzzed). */
#include "contain/contain.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *const cap_names[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
	"CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
	"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
};
#define N_CAPS (int)(sizeof(cap_names) / sizeof(cap_names[0]))

#define BIT(n) (1ULL << (n))

uint64_t contain_keep_default(void)
{
	/* Root must still own the filesystem (apt, dpkg, pip, npm), switch users, bind
	 * ports and chroot (maintainer scripts); nothing here reaches past the session's
	 * namespaces. KILL: the PID namespace already hides every process outside. */
	return BIT(0) | BIT(1) | BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(8) |
	       BIT(10) | BIT(14) | BIT(15) | BIT(18) | BIT(28) | BIT(31);
}

const char *contain_cap_name(int cap)
{
	return cap >= 0 && cap < N_CAPS ? cap_names[cap] : NULL;
}

int contain_cap_parse(const char *name, int *cap)
{
	const char *n = name;
	int i;

	if (strncasecmp(n, "CAP_", 4) == 0)
		n += 4;
	for (i = 0; i < N_CAPS; i++) {
		if (strcasecmp(n, cap_names[i] + 4) == 0) {
			*cap = i;
			return 0;
		}
	}
	return -EINVAL;
}

int contain_cap_list(const char *list, uint64_t *mask, char *bad, size_t badlen)
{
	char name[64];
	const char *p = list, *end;
	size_t n = 0;
	int cap;

	*mask = 0;
	while (*p) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if (n == 0 || n >= sizeof(name))
			goto bad;
		memcpy(name, p, n);
		name[n] = '\0';
		if (contain_cap_parse(name, &cap) < 0)
			goto bad;
		*mask |= BIT(cap);
		p += n + (end ? 1 : 0);
		if (end && !*p)
			goto bad;
	}
	return 0;
bad:
	snprintf(bad, badlen, "%.*s", (int)(n < 63 ? n : 63), p);
	return -EINVAL;
}

/* The hex value after "Key:\t" on its own line. 0, -ENOENT, -EINVAL. */
static int status_hex(const char *buf, size_t len, const char *key, uint64_t *v)
{
	size_t klen = strlen(key), i = 0, j;
	uint64_t x = 0;

	while (i < len) {
		const char *line = buf + i, *nl = memchr(line, '\n', len - i);
		size_t llen = nl ? (size_t)(nl - line) : len - i;

		if (llen > klen && memcmp(line, key, klen) == 0 && line[klen] == ':') {
			for (j = klen + 1; j < llen && (line[j] == '\t' || line[j] == ' '); j++)
				;
			if (j == llen || llen - j > 16)
				return -EINVAL;
			for (; j < llen; j++) {
				if (!isxdigit((unsigned char)line[j]))
					return -EINVAL;
				x = x << 4 | (uint64_t)(isdigit((unsigned char)line[j])
						? line[j] - '0' : (tolower((unsigned char)line[j]) - 'a' + 10));
			}
			*v = x;
			return 0;
		}
		i += llen + 1;
	}
	return -ENOENT;
}

int contain_parse_status(const char *buf, size_t len, struct contain_status *st)
{
	uint64_t nnp = 0, sc = 0;
	int ret = status_hex(buf, len, "CapInh", &st->inh);

	st->seccomp = -1;
	if (ret == 0)
		ret = status_hex(buf, len, "CapPrm", &st->prm);
	if (ret == 0)
		ret = status_hex(buf, len, "CapEff", &st->eff);
	if (ret == 0)
		ret = status_hex(buf, len, "CapBnd", &st->bnd);
	if (ret == 0)
		ret = status_hex(buf, len, "CapAmb", &st->amb);
	if (ret == 0)
		ret = status_hex(buf, len, "NoNewPrivs", &nnp);
	if (ret == 0 && nnp > 1)
		ret = -EINVAL;
	st->no_new_privs = nnp == 1;
	/* Absent without CONFIG_SECCOMP: then there is no filter either (the check says). */
	if (ret == 0 && status_hex(buf, len, "Seccomp", &sc) == 0)
		st->seccomp = sc > 2 ? -1 : (int)sc;
	return ret;
}

int contain_status_check(const struct contain_status *st, uint64_t keep, int cap_last,
			 char *why, size_t len)
{
	static const char *const set_names[] = { "bounding", "permitted", "effective",
						 "inheritable", "ambient" };
	uint64_t sets[5] = { st->bnd, st->prm, st->eff, st->inh, st->amb }, all, extra;
	int i, cap;

	all = cap_last >= CONTAIN_CAP_MAX ? ~0ULL : BIT(cap_last + 1) - 1;
	for (i = 0; i < 5; i++) {
		extra = sets[i] & all & ~keep;
		if (!extra)
			continue;
		for (cap = 0; !(extra & BIT(cap)); cap++)
			;
		snprintf(why, len, "%s set holds %s", set_names[i],
			 contain_cap_name(cap) ? contain_cap_name(cap) : "an unknown capability");
		return -EPERM;
	}
	if (!st->no_new_privs) {
		snprintf(why, len, "no_new_privs is not set");
		return -EPERM;
	}
	if (st->seccomp != 2) {
		snprintf(why, len, "no seccomp filter (new user namespaces are not refused)");
		return -EPERM;
	}
	return 0;
}

int contain_cap_last(void)
{
	char buf[16] = "";
	ssize_t n;
	int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC), v;

	if (fd < 0)
		return 40;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	v = n > 0 ? atoi(buf) : 40;
	return v > 0 && v <= CONTAIN_CAP_MAX ? v : 40;
}

int contain_stat_ppid(const char *buf, size_t len, pid_t *ppid)
{
	const char *p = NULL, *end = buf + len;
	size_t i;
	long v = 0;

	/* comm may hold anything, ")" included: the last one ends it. */
	for (i = 0; i < len; i++)
		if (buf[i] == ')')
			p = buf + i;
	if (!p || end - p < 5 || p[1] != ' ' || p[3] != ' ')
		return -EINVAL;
	for (p += 4; p < end && *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > 0x7fffffff)
			return -EINVAL;
	}
	if (p == end || *p != ' ')
		return -EINVAL;
	*ppid = (pid_t)v;
	return 0;
}
