/*
 * Reading the limit counters of a session's cgroup: which directory holds each
 * controller (the v1 hierarchy on hybrid hosts, the v2 directory on pure v2 hosts), the
 * file names of each version, and the size of a session's scratch directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attribution/attribution.h"

static int read_file(const char *dir, const char *file, char *buf, size_t len, size_t *got)
{
	char path[700];
	ssize_t n;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		ret = -errno;
	close(fd);
	if (ret)
		return ret;
	buf[n] = '\0';
	*got = (size_t)n;
	return 0;
}

int cg_open_ctrl(const struct cg_host *h, const char *rel, unsigned v1_mask, unsigned ctrl,
		 const char *file)
{
	char dir[600], path[700];
	int ret = cg_ctrl_dir(h, rel, v1_mask, ctrl, dir, sizeof(dir)), fd;

	if (ret < 0)
		return ret;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int cg_pread(int fd, char *buf, size_t len, size_t *got)
{
	/* cgroup files are seq_files: a read at offset 0 renders them afresh. */
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	*got = (size_t)n;
	return 0;
}

int cg_parse_value(const char *buf, size_t len, uint64_t *v)
{
	char line[64] = "v ";

	while (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > sizeof(line) - 3)
		return -EINVAL;
	memcpy(line + 2, buf, len);
	/* As a "key value" line, so cg_parse_kv's checked u64 reading applies. */
	return cg_parse_kv(line, len + 2, "v", v);
}

/* One decimal value file (memory.failcnt, pids.current): 0 or -errno. */
static int read_u64(const char *dir, const char *file, uint64_t *v)
{
	char buf[64];
	size_t got = 0;
	int ret = read_file(dir, file, buf, sizeof(buf), &got);

	return ret ? ret : cg_parse_value(buf, got, v);
}

int cg_ctrl_dir(const struct cg_host *h, const char *rel, unsigned v1_mask, unsigned ctrl,
		char *out, size_t len)
{
	const char *name = ctrl == CG_MEMORY ? "memory" : ctrl == CG_CPU ? "cpu" : "pids";

	if (v1_mask & ctrl) {
		snprintf(out, len, "%s/%s%s", h->v1root, name, rel);
		return 1;
	}
	if ((h->v2_mask & ctrl) && !(h->v1_mask & ctrl)) {
		cg_path(h, rel, "", out, len);
		return 0;
	}
	return -ENOENT;
}

int cg_read_memory(const struct cg_host *h, const char *rel, unsigned v1_mask,
		   struct cg_mem_counters *c)
{
	char dir[600], buf[1024];
	size_t got = 0;
	int v1 = cg_ctrl_dir(h, rel, v1_mask, CG_MEMORY, dir, sizeof(dir)), ret;

	if (v1 < 0)
		return v1;
	memset(c, 0, sizeof(*c));
	if (v1) {
		ret = read_file(dir, "memory.oom_control", buf, sizeof(buf), &got);
		if (ret == 0)
			ret = cg_parse_kv(buf, got, "oom_kill", &c->oom_kill);
		if (ret == 0)
			ret = read_u64(dir, "memory.failcnt", &c->max_hits);
		return ret;
	}
	ret = read_file(dir, "memory.events", buf, sizeof(buf), &got);
	return ret ? ret : cg_parse_memory_events(buf, got, c);
}

int cg_read_peak(const struct cg_host *h, const char *rel, unsigned v1_mask, unsigned ctrl,
		 uint64_t *peak)
{
	char dir[600];
	int v1 = cg_ctrl_dir(h, rel, v1_mask, ctrl, dir, sizeof(dir));

	if (v1 < 0)
		return v1;
	if (ctrl == CG_PIDS)   /* pids.peak since 6.12 */
		return read_u64(dir, "pids.peak", peak) == 0 ? 0
							    : read_u64(dir, "pids.current", peak);
	if (v1)
		return read_u64(dir, "memory.max_usage_in_bytes", peak);
	/* memory.peak since 5.19; memory.current otherwise (less telling, still true). */
	return read_u64(dir, "memory.peak", peak) == 0 ? 0
						      : read_u64(dir, "memory.current", peak);
}

int cg_read_cpu(const struct cg_host *h, const char *rel, unsigned v1_mask,
		struct cg_cpu_counters *c)
{
	char dir[600], buf[1024];
	size_t got = 0;
	int ret = cg_ctrl_dir(h, rel, v1_mask, CG_CPU, dir, sizeof(dir));

	if (ret < 0)
		return ret;
	ret = read_file(dir, "cpu.stat", buf, sizeof(buf), &got);
	return ret ? ret : cg_parse_cpu_stat(buf, got, c);
}

int cg_read_pids(const struct cg_host *h, const char *rel, unsigned v1_mask,
		 struct cg_pids_counters *c)
{
	char dir[600], buf[256];
	size_t got = 0;
	int ret = cg_ctrl_dir(h, rel, v1_mask, CG_PIDS, dir, sizeof(dir));

	if (ret < 0)
		return ret;
	ret = read_file(dir, "pids.events", buf, sizeof(buf), &got);
	return ret ? ret : cg_parse_pids_events(buf, got, &c->max_hits);
}

/* nftw has no context argument; the daemon walks from one thread at a time. */
static _Thread_local struct {
	uint64_t bytes;
	size_t entries, max;
	bool truncated;
} walk;

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)path;
	(void)f;
	if (++walk.entries > walk.max) {
		walk.truncated = true;
		return FTW_STOP;
	}
	if (type != FTW_NS)
		walk.bytes += (uint64_t)st->st_blocks * 512u;
	return FTW_CONTINUE;
}

int dir_usage(const char *dir, size_t max_entries, uint64_t *bytes, bool *truncated)
{
	int ret;

	walk.bytes = 0;
	walk.entries = 0;
	walk.max = max_entries;
	walk.truncated = false;
	ret = nftw(dir, walk_one, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
	if (ret < 0)
		return errno ? -errno : -EIO;
	*bytes = walk.bytes;
	*truncated = walk.truncated;
	return 0;
}
