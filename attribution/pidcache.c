/*
 * pid -> session, keyed by (pid, start time): a pid the kernel has reused has another
 * start time, so it misses and is looked up afresh instead of inheriting the old
 * process's session. Open addressing; when full the table is emptied (a cache: misses
 * only cost a /proc read).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attribution/attribution.h"

struct pc_entry {
	pid_t pid;                 /* 0: empty */
	uint64_t start;
	char id[SESSION_ID_MAX + 1];   /* "" : in no session */
};

struct pidcache {
	struct pc_entry *v;
	size_t cap, n;             /* cap is a power of two */
};

int pidcache_new(struct pidcache **out, size_t cap)
{
	struct pidcache *c = calloc(1, sizeof(*c));
	size_t want = 64;

	while (want < cap * 2)
		want *= 2;
	if (c)
		c->v = calloc(want, sizeof(*c->v));
	if (!c || !c->v) {
		free(c);
		return -ENOMEM;
	}
	c->cap = want;
	*out = c;
	return 0;
}

void pidcache_free(struct pidcache *c)
{
	if (!c)
		return;
	free(c->v);
	free(c);
}

static size_t slot_of(const struct pidcache *c, pid_t pid)
{
	size_t i = ((size_t)pid * 2654435761u) & (c->cap - 1);

	while (c->v[i].pid != 0 && c->v[i].pid != pid)
		i = (i + 1) & (c->cap - 1);
	return i;
}

static void put(struct pidcache *c, pid_t pid, uint64_t start, const char *id)
{
	size_t i;

	if (c->n * 2 >= c->cap) {
		memset(c->v, 0, c->cap * sizeof(*c->v));
		c->n = 0;
	}
	i = slot_of(c, pid);
	if (c->v[i].pid == 0)
		c->n++;
	c->v[i].pid = pid;
	c->v[i].start = start;
	snprintf(c->v[i].id, sizeof(c->v[i].id), "%s", id);
}

static int read_proc(pid_t pid, const char *file, char *buf, size_t len, size_t *got)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, len);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	*got = (size_t)n;
	return 0;
}

/* From /proc: the v2 cgroup, matched against the session prefix. */
static int resolve(const char *prefix, pid_t pid, char *id, size_t idlen)
{
	char buf[4096], cg[4096];
	size_t got = 0;
	int ret = read_proc(pid, "cgroup", buf, sizeof(buf), &got);

	if (ret == 0)
		ret = proc_cgroup_v2(buf, got, cg, sizeof(cg));
	if (ret)
		return ret == -ENOENT ? -ESRCH : ret;
	if (session_of_cgpath(cg, prefix, id, idlen) < 0)
		id[0] = '\0';
	return 0;
}

int pidcache_lookup(struct pidcache *c, const char *prefix, pid_t pid, char *id,
		    size_t idlen)
{
	uint64_t start, again;
	size_t i;
	int ret;

	if (pid <= 0)
		return -EINVAL;
	ret = proc_starttime(pid, &start);
	if (ret)
		return ret;
	i = slot_of(c, pid);
	if (c->v[i].pid == pid && c->v[i].start == start) {
		snprintf(id, idlen, "%s", c->v[i].id);
		return 0;
	}
	ret = resolve(prefix, pid, id, idlen);
	/* The pid may have died and been reused between the two reads: check again. */
	if (ret == 0 && (proc_starttime(pid, &again) < 0 || again != start))
		ret = -ESRCH;
	if (ret == 0)
		put(c, pid, start, id);
	return ret;
}

int pidcache_fork(struct pidcache *c, const char *prefix, pid_t parent, pid_t child)
{
	char id[SESSION_ID_MAX + 1];
	uint64_t start;
	int ret;

	(void)parent;
	/* A child may be moved right after fork: its own cgroup is the truth. */
	ret = proc_starttime(child, &start);
	if (ret == 0)
		ret = resolve(prefix, child, id, sizeof(id));
	if (ret == 0)
		put(c, child, start, id);
	return ret;
}

void pidcache_forget(struct pidcache *c, pid_t pid)
{
	size_t i = slot_of(c, pid), j;

	if (c->v[i].pid != pid)
		return;
	/* Re-insert the rest of the probe run so lookups keep finding them. */
	c->v[i].pid = 0;
	c->n--;
	for (j = (i + 1) & (c->cap - 1); c->v[j].pid != 0; j = (j + 1) & (c->cap - 1)) {
		struct pc_entry e = c->v[j];

		c->v[j].pid = 0;
		c->n--;
		put(c, e.pid, e.start, e.id);
	}
}

void pidcache_forget_session(struct pidcache *c, const char *id)
{
	size_t i;

	/* Rare (cleanup), so rebuilding is simpler than deleting in place. */
	for (i = 0; i < c->cap; i++) {
		if (c->v[i].pid != 0 && strcmp(c->v[i].id, id) == 0) {
			memset(c->v, 0, c->cap * sizeof(*c->v));
			c->n = 0;
			return;
		}
	}
}
