/*
 * Session cgroups: the v2 directory (freeze, kill, events, the id nftables matches) and,
 * on hybrid hosts, one directory per v1 controller (memory, cpu, pids) holding the
 * limits, because the v2 tree there has no controllers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "attribution/attribution.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif

static const struct {
	unsigned bit;
	const char *name;
} controllers[] = { { CG_MEMORY, "memory" }, { CG_CPU, "cpu" }, { CG_PIDS, "pids" } };
#define NCTRL (sizeof(controllers) / sizeof(controllers[0]))

static int read_small(const char *path, char *buf, size_t len, size_t *got)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	*got = (size_t)n;
	return 0;
}

static int write_str(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0 || (size_t)n != len) {
		int ret = n < 0 ? -errno : -EIO;

		close(fd);
		return ret;
	}
	return close(fd) < 0 ? -errno : 0;
}

void cg_path(const struct cg_host *h, const char *rel, const char *file, char *out,
	     size_t len)
{
	snprintf(out, len, "%s%s%s%s", h->v2root, rel, *file ? "/" : "", file);
}

static void v1_path(const struct cg_host *h, const char *ctrl, const char *rel,
		    const char *file, char *out, size_t len)
{
	snprintf(out, len, "%s/%s%s%s%s", h->v1root, ctrl, rel, *file ? "/" : "", file);
}

int cg_host_detect(struct cg_host *h, const char *v2root)
{
	char path[512], buf[512];
	struct statfs sfs;
	size_t i, got;

	memset(h, 0, sizeof(*h));
	snprintf(h->v2root, sizeof(h->v2root), "%s", v2root);
	snprintf(h->v1root, sizeof(h->v1root), "/sys/fs/cgroup");
	for (i = 0; i < NCTRL; i++) {
		v1_path(h, controllers[i].name, "", "", path, sizeof(path));
		if (statfs(path, &sfs) == 0 && (unsigned long)sfs.f_type == CGROUP_SUPER_MAGIC)
			h->v1_mask |= controllers[i].bit;
	}
	cg_path(h, "", "cgroup.controllers", path, sizeof(path));
	if (read_small(path, buf, sizeof(buf), &got) < 0)
		return 0;   /* no controllers to offer: limits go to v1 or nowhere */
	for (i = 0; i < NCTRL; i++)
		if (strstr(buf, controllers[i].name))
			h->v2_mask |= controllers[i].bit;
	return 0;
}

/* mkdir -p for the parents of a cgroup path (they are shared between sessions). */
static int mkdir_parents(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			int ret = -errno;

			*p = '/';
			return ret;
		}
		*p = '/';
	}
	return 0;
}

static int mkdir_cg(char *path)
{
	int ret = mkdir_parents(path);

	if (ret == 0 && mkdir(path, 0755) < 0)
		ret = -errno;
	return ret;
}

/* Limits for one controller, as (file, value) pairs; v2 names when v2 is true. */
static int limit_files(unsigned ctrl, const struct session_limits *lim, bool v2,
		       char files[2][32], char vals[2][48])
{
	int n = 0;

	if (ctrl == CG_MEMORY && lim->memory > 0) {
		snprintf(files[n], 32, v2 ? "memory.max" : "memory.limit_in_bytes");
		snprintf(vals[n++], 48, "%lld", (long long)lim->memory);
	} else if (ctrl == CG_PIDS && lim->pids > 0) {
		snprintf(files[n], 32, "pids.max");
		snprintf(vals[n++], 48, "%lld", (long long)lim->pids);
	} else if (ctrl == CG_CPU && lim->millicpus > 0 && v2) {
		snprintf(files[n], 32, "cpu.max");
		snprintf(vals[n++], 48, "%lld 100000", (long long)lim->millicpus * 100);
	} else if (ctrl == CG_CPU && lim->millicpus > 0) {
		snprintf(files[n], 32, "cpu.cfs_period_us");
		snprintf(vals[n++], 48, "100000");
		snprintf(files[n], 32, "cpu.cfs_quota_us");
		snprintf(vals[n++], 48, "%lld", (long long)lim->millicpus * 100);
	}
	return n;
}

static int apply_limits(const char *dir, unsigned ctrl, const struct session_limits *lim,
			bool v2, char *err, size_t errlen)
{
	char files[2][32], vals[2][48], path[600];
	int i, n = limit_files(ctrl, lim, v2, files, vals), ret;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		ret = write_str(path, vals[i]);
		if (ret) {
			snprintf(err, errlen, "%s: cannot write %s: %s", path, vals[i],
				 strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* On pure v2 the parents must delegate the controllers down to the session. */
static int v2_enable_controllers(const struct cg_host *h, const char *rel)
{
	char path[600], ctl[64] = "", *p;
	size_t i;

	for (i = 0; i < NCTRL; i++)
		if (h->v2_mask & controllers[i].bit)
			snprintf(ctl + strlen(ctl), sizeof(ctl) - strlen(ctl), "+%s ",
				 controllers[i].name);
	if (!ctl[0])
		return 0;
	snprintf(path, sizeof(path), "%s%s", h->v2root, rel);
	for (p = path + strlen(h->v2root); (p = strchr(p + 1, '/'));) {
		char file[700];
		int ret;

		*p = '\0';
		snprintf(file, sizeof(file), "%s/cgroup.subtree_control", path);
		*p = '/';
		ret = write_str(file, ctl);
		if (ret)
			return ret;
	}
	return 0;
}

static int create_v1(const struct cg_host *h, const char *rel,
		     const struct session_limits *lim, unsigned *made, char *err, size_t errlen)
{
	char path[600];
	size_t i;
	int ret;

	for (i = 0; i < NCTRL; i++) {
		if (!(h->v1_mask & controllers[i].bit))
			continue;
		v1_path(h, controllers[i].name, rel, "", path, sizeof(path));
		ret = mkdir_cg(path);
		if (ret) {
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
			return ret;
		}
		*made |= controllers[i].bit;
		ret = apply_limits(path, controllers[i].bit, lim, false, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static int create_v2(const struct cg_host *h, const char *rel,
		     const struct session_limits *lim, char *err, size_t errlen)
{
	char path[600];
	size_t i;
	int ret;

	cg_path(h, rel, "", path, sizeof(path));
	ret = mkdir_cg(path);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path,
			 ret == -EEXIST ? "cgroup already exists" : strerror(-ret));
		return ret;
	}
	ret = v2_enable_controllers(h, rel);
	if (ret) {
		snprintf(err, errlen, "%s: cannot delegate controllers: %s", path, strerror(-ret));
		return ret;
	}
	for (i = 0; i < NCTRL && ret == 0; i++)
		if ((h->v2_mask & controllers[i].bit) && !(h->v1_mask & controllers[i].bit))
			ret = apply_limits(path, controllers[i].bit, lim, true, err, errlen);
	return ret;
}

int cg_create(const struct cg_host *h, const char *rel, const struct session_limits *lim,
	      unsigned *v1_created, char *err, size_t errlen)
{
	unsigned made = 0;
	int ret;

	ret = create_v2(h, rel, lim, err, errlen);
	if (ret == -EEXIST)
		return ret;
	if (ret == 0)
		ret = create_v1(h, rel, lim, &made, err, errlen);
	if (ret) {
		cg_remove(h, rel, made, false);
		return ret;
	}
	*v1_created = made;
	return 0;
}

int cg_remove(const struct cg_host *h, const char *rel, unsigned v1_mask, bool keep_v2)
{
	char path[600];
	size_t i;
	int ret = 0;

	for (i = 0; i < NCTRL; i++) {
		if (!(v1_mask & controllers[i].bit))
			continue;
		v1_path(h, controllers[i].name, rel, "", path, sizeof(path));
		if (rmdir(path) < 0 && errno != ENOENT && ret == 0)
			ret = -errno;
	}
	cg_path(h, rel, "", path, sizeof(path));
	if (!keep_v2 && rmdir(path) < 0 && errno != ENOENT && ret == 0)
		ret = -errno;
	return ret;
}

int cg_attach(const struct cg_host *h, const char *rel, unsigned v1_mask, pid_t pid)
{
	char path[600], val[24];
	size_t i;
	int ret;

	snprintf(val, sizeof(val), "%d", (int)pid);
	/* v1 first: the v2 move is what makes the process count as "in the session". */
	for (i = 0; i < NCTRL; i++) {
		if (!(v1_mask & controllers[i].bit))
			continue;
		v1_path(h, controllers[i].name, rel, "cgroup.procs", path, sizeof(path));
		ret = write_str(path, val);
		if (ret)
			return ret;
	}
	cg_path(h, rel, "cgroup.procs", path, sizeof(path));
	return write_str(path, val);
}

int cg_events(const struct cg_host *h, const char *rel, bool *populated, bool *frozen)
{
	char path[600], buf[256];
	uint64_t v = 0;
	size_t got = 0;
	int ret;

	cg_path(h, rel, "cgroup.events", path, sizeof(path));
	ret = read_small(path, buf, sizeof(buf), &got);
	if (ret)
		return ret;
	if (cg_parse_kv(buf, got, "populated", &v) < 0)
		return -EINVAL;
	*populated = v != 0;
	/* "frozen" exists since 5.2; older kernels cannot freeze in v2 at all. */
	*frozen = cg_parse_kv(buf, got, "frozen", &v) == 0 && v != 0;
	return 0;
}

int cg_freeze(const struct cg_host *h, const char *rel, bool on, int timeout_ms)
{
	struct timespec pause = { 0, 1000000 };
	char path[600];
	bool populated, frozen;
	int ret, waited;

	cg_path(h, rel, "cgroup.freeze", path, sizeof(path));
	ret = write_str(path, on ? "1" : "0");
	if (ret)
		return ret;
	/* The write only asks; the kernel says "frozen 1" once every task has stopped. */
	for (waited = 0; waited <= timeout_ms; waited++) {
		ret = cg_events(h, rel, &populated, &frozen);
		if (ret)
			return ret;
		if (frozen == on)
			return 0;
		nanosleep(&pause, NULL);
	}
	return -ETIMEDOUT;
}

int cg_pids(const struct cg_host *h, const char *rel, pid_t **pids, size_t *n)
{
	char path[600], line[32];
	pid_t *v = NULL, *grown;
	size_t cnt = 0, cap = 0;
	FILE *f;

	cg_path(h, rel, "cgroup.procs", path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown) {
				free(v);
				fclose(f);
				return -ENOMEM;
			}
			v = grown;
		}
		v[cnt++] = (pid_t)atoi(line);
	}
	fclose(f);
	*pids = v;
	*n = cnt;
	return 0;
}

int cg_kill(const struct cg_host *h, const char *rel)
{
	char path[600];
	pid_t *pids = NULL;
	size_t i, n = 0;
	int ret;

	cg_path(h, rel, "cgroup.kill", path, sizeof(path));
	ret = write_str(path, "1");
	if (ret != -ENOENT)
		return ret;
	/* Before 5.14: signal each pid; new forks race us, so callers retry on populated. */
	ret = cg_pids(h, rel, &pids, &n);
	for (i = 0; ret == 0 && i < n; i++)
		kill(pids[i], SIGKILL);
	free(pids);
	return ret;
}

int cg_id(const struct cg_host *h, const char *rel, uint64_t *id)
{
	char path[600];
	struct stat st;

	cg_path(h, rel, "", path, sizeof(path));
	if (stat(path, &st) < 0)
		return -errno;
	*id = (uint64_t)st.st_ino;
	return 0;
}

int cg_oom_kills(const struct cg_host *h, const char *rel, unsigned v1_mask, uint64_t *n)
{
	char path[600], buf[1024];
	size_t got = 0;
	int ret;

	if (v1_mask & CG_MEMORY)
		v1_path(h, "memory", rel, "memory.oom_control", path, sizeof(path));
	else
		cg_path(h, rel, "memory.events", path, sizeof(path));
	ret = read_small(path, buf, sizeof(buf), &got);
	if (ret)
		return ret;
	return cg_parse_kv(buf, got, "oom_kill", n);
}
