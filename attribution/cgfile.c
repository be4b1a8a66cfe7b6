/* Parsers for kernel files: cgroup key-value files, /proc/PID/stat, /proc/PID/cgroup. */
#include <errno.h>
#include <string.h>

#include "attribution/attribution.h"
#include "attribution/cgmap.h"

static int parse_u64(const char *p, size_t n, uint64_t *val)
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

int cg_parse_kv(const char *buf, size_t len, const char *key, uint64_t *val)
{
	size_t klen = strlen(key), i = 0;

	while (i < len) {
		const char *line = buf + i, *nl = memchr(line, '\n', len - i);
		size_t llen = nl ? (size_t)(nl - line) : len - i;

		if (llen > klen && memcmp(line, key, klen) == 0 && line[klen] == ' ')
			return parse_u64(line + klen + 1, llen - klen - 1, val);
		i += llen + 1;
	}
	return -ENOENT;
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
			return parse_u64(tok, (size_t)(p - tok), start);
	}
	return -EINVAL;
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
