/* /proc/stat's aggregate CPU line (common/cpuload.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "common/cpuload.h"

/* The next unsigned decimal of text[*i..len), after spaces. False: none there. */
static bool next_u64(const char *text, size_t len, size_t *i, uint64_t *v)
{
	bool any = false;

	while (*i < len && text[*i] == ' ')
		(*i)++;
	*v = 0;
	while (*i < len && text[*i] >= '0' && text[*i] <= '9') {
		if (*v > (UINT64_MAX - 9) / 10)
			return false;
		*v = *v * 10 + (uint64_t)(text[*i] - '0');
		(*i)++;
		any = true;
	}
	return any;
}

int cpu_sample_parse(const char *text, size_t len, struct cpu_sample *out)
{
	/* user nice system idle iowait irq softirq steal; guest time is inside user. */
	uint64_t f[8];
	size_t i = 4;

	if (len < 5 || memcmp(text, "cpu ", 4) != 0)
		return -EINVAL;
	for (size_t k = 0; k < 8; k++)
		if (!next_u64(text, len, &i, &f[k]))
			return -EINVAL;
	out->idle = f[3] + f[4];
	out->total = 0;
	for (size_t k = 0; k < 8; k++) {
		if (out->total > UINT64_MAX - f[k])
			return -EINVAL;
		out->total += f[k];
	}
	return 0;
}

int cpu_sample_read(struct cpu_sample *out)
{
	char buf[512];
	ssize_t n;
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	ret = n < 0 ? -errno : cpu_sample_parse(buf, (size_t)n, out);
	close(fd);
	return ret;
}

int cpu_idle_pct(const struct cpu_sample *a, const struct cpu_sample *b, uint64_t own_ticks)
{
	uint64_t dt, di;

	if (b->total <= a->total || b->idle < a->idle)
		return -1;
	dt = b->total - a->total;
	di = b->idle - a->idle + own_ticks;
	if (di > dt)
		di = dt;
	return (int)(di * 100 / dt);
}
