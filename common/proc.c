/* A process's start time from /proc/PID/stat (common/proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "common/proc.h"

int proc_dec_u64(const char *p, size_t n, uint64_t *val)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 20)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		unsigned d;

		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		d = (unsigned)(p[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*val = v;
	return 0;
}

int proc_stat_starttime(const char *buf, size_t len, uint64_t *start)
{
	const char *p = NULL, *end = buf + len, *tok;
	size_t i;
	int field = 2;

	/* comm is "(...)" and may itself contain ") ": the last ')' closes it. */
	for (i = len; i > 0; i--) {
		if (buf[i - 1] == ')') {
			p = buf + i;
			break;
		}
	}
	if (!p)
		return -EINVAL;
	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		tok = p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		if (p == tok)
			return -EINVAL;
		if (++field == 22)
			return proc_dec_u64(tok, (size_t)(p - tok), start);
	}
	return -EINVAL;
}

int proc_starttime(pid_t pid, uint64_t *start)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	return proc_stat_starttime(buf, (size_t)n, start);
}
