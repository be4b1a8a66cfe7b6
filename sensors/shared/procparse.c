/*
 * /proc/PID/{stat,status,cmdline} bytes. Pure functions: the caller reads the files;
 * nothing here trusts a length or a terminator.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/shared/procparse.h"

/* Parses a decimal u64 at buf[*i..len), advancing *i. 0 or -EINVAL. */
static int dec_u64(const char *buf, size_t len, size_t *i, uint64_t *v, bool neg_ok)
{
	bool neg = false;
	uint64_t x = 0;
	size_t start;

	if (neg_ok && *i < len && buf[*i] == '-') {
		neg = true;
		(*i)++;
	}
	start = *i;
	while (*i < len && buf[*i] >= '0' && buf[*i] <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		x = x * 10 + (uint64_t)(buf[*i] - '0');
		(*i)++;
	}
	if (*i == start)
		return -EINVAL;
	*v = neg ? (uint64_t)0 - x : x;
	return 0;
}

static void copy_comm(char *out, const char *p, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n && k + 1 < AUDIT_COMM_MAX; i++)
		out[k++] = (p[i] >= 0x20 && p[i] < 0x7f) ? p[i] : '?';
	out[k] = '\0';
}

int proc_stat_parse(const char *buf, size_t len, struct proc_stat_info *st)
{
	const char *open = memchr(buf, '(', len);
	size_t i, close = len, field = 2;
	uint64_t v = 0;

	/* comm is between the first '(' and the last ')': it may hold either. */
	while (close > 0 && buf[close - 1] != ')')
		close--;
	if (!open || close == 0 || buf + close - 1 <= open)
		return -EINVAL;
	copy_comm(st->comm, open + 1, (size_t)(buf + close - 1 - (open + 1)));
	st->ppid = -1;
	for (i = close; i < len && field < 22;) {
		if (buf[i] != ' ')
			return -EINVAL;
		i++;
		field++;
		if (field == 3) {   /* state: one character */
			if (i >= len)
				return -EINVAL;
			i++;
			continue;
		}
		if (dec_u64(buf, len, &i, &v, true))
			return -EINVAL;
		if (field == 4)
			st->ppid = (int32_t)v;
	}
	if (field != 22)
		return -EINVAL;
	st->start_ticks = v;
	return 0;
}

int proc_status_uids(const char *buf, size_t len, uint32_t *ruid, uint32_t *euid)
{
	static const char key[] = "Uid:";
	size_t i = 0, k = sizeof(key) - 1;
	uint64_t r, e;

	while (i + k <= len) {
		if ((i == 0 || buf[i - 1] == '\n') && memcmp(buf + i, key, k) == 0)
			break;
		i++;
	}
	if (i + k > len)
		return -EINVAL;
	i += k;
	while (i < len && (buf[i] == '\t' || buf[i] == ' '))
		i++;
	if (dec_u64(buf, len, &i, &r, false))
		return -EINVAL;
	while (i < len && (buf[i] == '\t' || buf[i] == ' '))
		i++;
	if (dec_u64(buf, len, &i, &e, false) || r > UINT32_MAX || e > UINT32_MAX)
		return -EINVAL;
	*ruid = (uint32_t)r;
	*euid = (uint32_t)e;
	return 0;
}

bool cmdline_next(const char *buf, size_t len, size_t *off, const char **arg, size_t *alen)
{
	const char *nul;

	if (*off >= len)
		return false;
	*arg = buf + *off;
	nul = memchr(*arg, '\0', len - *off);
	*alen = nul ? (size_t)(nul - *arg) : len - *off;
	*off += *alen + 1;
	return true;
}
