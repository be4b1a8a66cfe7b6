/* Session by cgroup (attribution/cgmap.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attribution/attribution.h"
#include "attribution/cgmap.h"

struct cgmap_ent {
	char sid[SESSION_ID_MAX + 1];
	char *path;
	size_t len;
	uint64_t id;
};

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct cgmap_ent *v;
static size_t n, cap;
static char root[256];
static bool active;

void cgmap_activate(const char *v2root)
{
	pthread_rwlock_wrlock(&lock);
	snprintf(root, sizeof(root), "%s", v2root);
	active = true;
	pthread_rwlock_unlock(&lock);
}

bool cgmap_active(void)
{
	bool a;

	pthread_rwlock_rdlock(&lock);
	a = active;
	pthread_rwlock_unlock(&lock);
	return a;
}

static void del_locked(const char *sid)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].sid, sid) == 0) {
			free(v[i].path);
			v[i] = v[--n];
			return;
		}
	}
}

int cgmap_put(const char *sid, const char *path, uint64_t id)
{
	size_t len = strlen(path);
	char *p;
	int ret = 0;

	/* "/" (the root) would take every process of the host. */
	if (strlen(sid) > SESSION_ID_MAX || path[0] != '/' || len < 2 || path[len - 1] == '/')
		return -EINVAL;
	p = strdup(path);
	if (!p)
		return -ENOMEM;
	pthread_rwlock_wrlock(&lock);
	del_locked(sid);
	if (n == cap) {
		size_t c = cap ? cap * 2 : 64;
		struct cgmap_ent *g = realloc(v, c * sizeof(*g));

		if (!g) {
			ret = -ENOMEM;
			goto out;
		}
		v = g;
		cap = c;
	}
	snprintf(v[n].sid, sizeof(v[n].sid), "%s", sid);
	v[n].path = p;
	v[n].len = len;
	v[n].id = id;
	n++;
	p = NULL;
out:
	pthread_rwlock_unlock(&lock);
	free(p);
	return ret;
}

void cgmap_del(const char *sid)
{
	pthread_rwlock_wrlock(&lock);
	del_locked(sid);
	pthread_rwlock_unlock(&lock);
}

/* a is b or below it ("/x/y" is below "/x", "/xy" is not). */
static bool under(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen >= blen && memcmp(a, b, blen) == 0 && (alen == blen || a[blen] == '/');
}

/* The path still names the cgroup the session recorded (its inode). */
static bool same_cgroup(const struct cgmap_ent *e)
{
	char full[4400];
	struct stat st;

	if (!e->id)
		return true;   /* recorded without an id: the path is all there is */
	if ((size_t)snprintf(full, sizeof(full), "%s%s", root, e->path) >= sizeof(full))
		return false;
	return stat(full, &st) == 0 && (uint64_t)st.st_ino == e->id;
}

int cgmap_resolve(const char *path, char *sid, size_t sidlen)
{
	size_t len = strlen(path), best_len = 0;
	const struct cgmap_ent *best = NULL;
	int ret = -ENOENT;

	if (sidlen)
		sid[0] = '\0';
	pthread_rwlock_rdlock(&lock);
	for (size_t i = 0; i < n; i++)
		if (v[i].len > best_len && under(path, len, v[i].path, v[i].len)) {
			best = &v[i];
			best_len = v[i].len;
		}
	if (best && same_cgroup(best)) {
		ret = strlen(best->sid) < sidlen ? 0 : -ENAMETOOLONG;
		if (ret == 0)
			memcpy(sid, best->sid, strlen(best->sid) + 1);
	}
	pthread_rwlock_unlock(&lock);
	return ret;
}

int cgmap_overlap(const char *path, char *sid, size_t sidlen)
{
	size_t len = strlen(path);
	int ret = -ENOENT;

	pthread_rwlock_rdlock(&lock);
	for (size_t i = 0; i < n && ret; i++)
		if (under(path, len, v[i].path, v[i].len) || under(v[i].path, v[i].len, path, len)) {
			snprintf(sid, sidlen, "%s", v[i].sid);
			ret = 0;
		}
	pthread_rwlock_unlock(&lock);
	return ret;
}

/* A cgroup a session adopted (a container's scope), whatever its name (cgmap.h). */
static bool in_adopted(const char *p, size_t plen)
{
	char path[4096], sid[80];

	if (plen == 0 || plen >= sizeof(path))
		return plen != 0;        /* a path too long to check: refuse */
	memcpy(path, p, plen);
	path[plen] = '\0';
	return cgmap_resolve(path, sid, sizeof(sid)) == 0;
}

/*
 * /proc/PID/cgroup has "0::/path" for the v2 hierarchy. A session's processes sit at
 * or below session_prefix ("/sandgate" must not match "/sandgate-other"), or in a
 * cgroup a session adopted.
 */
int cgmap_proc_in_session(const char *proc_cgroup, size_t len, const char *session_prefix)
{
	size_t plen = strlen(session_prefix), i = 0;

	while (i < len) {
		const char *line = proc_cgroup + i, *nl = memchr(line, '\n', len - i);
		size_t llen = nl ? (size_t)(nl - line) : len - i;

		if (llen >= 3 && memcmp(line, "0::", 3) == 0) {
			const char *p = line + 3;
			size_t pn = llen - 3;

			if (pn >= plen && memcmp(p, session_prefix, plen) == 0 &&
			    (pn == plen || p[plen] == '/'))
				return -EACCES;
			if (in_adopted(p, pn))
				return -EACCES;
		}
		i += llen + 1;
	}
	return 0;
}
