/* Parsers for kernel files: cgroup key-value files and /proc/PID/cgroup. */
#include <errno.h>
#include <string.h>

#include "attribution/attribution.h"
#include "attribution/cgmap.h"

int cg_parse_kv(const char *buf, size_t len, const char *key, uint64_t *val)
{
	size_t klen = strlen(key), i = 0;

	while (i < len) {
		const char *line = buf + i, *nl = memchr(line, '\n', len - i);
		size_t llen = nl ? (size_t)(nl - line) : len - i;

		if (llen > klen && memcmp(line, key, klen) == 0 && line[klen] == ' ')
			return proc_dec_u64(line + klen + 1, llen - klen - 1, val);
		i += llen + 1;
	}
	return -ENOENT;
}

bool session_id_valid(const char *id)
{
	size_t i, n = strlen(id);

	if (n == 0 || n > SESSION_ID_MAX || id[0] == '.')
		return false;
	for (i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

int session_id_from_cgpath(const char *path, size_t len, const char *prefix, char *id,
			   size_t idlen)
{
	size_t plen = strlen(prefix), n = 0;
	const char *p;

	if (len <= plen + 1 || memcmp(path, prefix, plen) != 0 || path[plen] != '/')
		return -ENOENT;
	p = path + plen + 1;
	while (p + n < path + len && p[n] != '/')
		n++;
	if (n == 0 || n > SESSION_ID_MAX || n >= idlen)
		return -ENOENT;
	memcpy(id, p, n);
	id[n] = '\0';
	if (!session_id_valid(id)) {
		id[0] = '\0';
		return -ENOENT;
	}
	return 0;
}

int proc_cgroup_v2(const char *buf, size_t len, char *out, size_t outlen)
{
	size_t i = 0;

	while (i < len) {
		const char *line = buf + i, *nl = memchr(line, '\n', len - i);
		size_t llen = nl ? (size_t)(nl - line) : len - i;

		if (llen >= 3 && memcmp(line, "0::", 3) == 0) {
			if (llen - 3 >= outlen)
				return -ENAMETOOLONG;
			memcpy(out, line + 3, llen - 3);
			out[llen - 3] = '\0';
			return 0;
		}
		i += llen + 1;
	}
	return -ENOENT;
}

int session_of_cgpath(const char *path, const char *prefix, char *id, size_t idlen)
{
	/* In the daemon: the sessions' registered cgroups, whatever their names. */
	if (cgmap_active())
		return cgmap_resolve(path, id, idlen);
	return session_id_from_cgpath(path, strlen(path), prefix, id, idlen);
}
