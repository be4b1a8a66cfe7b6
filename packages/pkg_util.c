/* File reads, hashes and a run's environment for the package collectors. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/hex.h"
#include "packages/pkg_int.h"

/* ctime is taken from the kernel's coarse clock: up to a tick behind the exec time. */
#define PKG_CLOCK_SLACK_NS 20000000

int pkg_read_file(const char *path, size_t max, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	size_t cap = 4096, n = 0;
	char *b = NULL, *nb;
	ssize_t got;
	int ret = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		if (n + 1 >= cap || !b) {
			if (b)
				cap *= 2;
			if (cap > max + 1)
				cap = max + 1;
			nb = realloc(b, cap);
			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			b = nb;
		}
		if (n + 1 >= cap) {
			ret = -EFBIG;
			break;
		}
		got = read(fd, b + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = -errno;
			break;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (ret) {
		free(b);
		return ret;
	}
	b[n] = '\0';
	*out = b;
	*len = n;
	return 0;
}

int pkg_sha256_file(const char *path, char hex[65])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	EVP_MD_CTX *md;
	unsigned char buf[65536], out[32];
	unsigned olen = 0;
	ssize_t got;
	int ret = 0;

	if (fd < 0)
		return -errno;
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		ret = -ENOMEM;
	while (ret == 0 && (got = read(fd, buf, sizeof(buf))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			ret = -errno;
		else if (EVP_DigestUpdate(md, buf, (size_t)got) != 1)
			ret = -EIO;
	}
	if (ret == 0 && (EVP_DigestFinal_ex(md, out, &olen) != 1 || olen != 32))
		ret = -EIO;
	EVP_MD_CTX_free(md);
	close(fd);
	if (ret == 0)
		hex_encode(out, 32, hex);
	return ret;
}

bool pkg_changed_since(const char *path, const struct timespec *t)
{
	struct stat st;
	int64_t c, s;

	if (stat(path, &st) != 0)
		return false;
	c = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	s = (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
	return c + PKG_CLOCK_SLACK_NS >= s;
}

const char *pkg_run_env(const struct pkg_run *r, const char *name)
{
	size_t nl = strlen(name), off = 0;

	while (r->env && off < r->envlen) {
		const char *v = r->env + off;
		size_t l = strnlen(v, r->envlen - off);

		if (l > nl && strncmp(v, name, nl) == 0 && v[nl] == '=' && off + l < r->envlen)
			return v + nl + 1;
		off += l + 1;
	}
	return NULL;
}

void pkg_run_path(const struct pkg_run *r, const char *path, char *out, size_t len)
{
	if (strncmp(path, "file://", 7) == 0)
		path += 7;
	else if (strncmp(path, "file:", 5) == 0)
		path += 5;
	if (path[0] == '/')
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "%s/%s", r->cwd, path);
}

void pkg_run_home(const struct pkg_run *r, char *out, size_t len)
{
	const char *h = pkg_run_env(r, "HOME");
	struct passwd pw, *res = NULL;
	char buf[2048];

	if (h && h[0] == '/') {
		snprintf(out, len, "%s", h);
		return;
	}
	out[0] = '\0';
	if (r->uid_known && getpwuid_r(r->uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		snprintf(out, len, "%s", res->pw_dir);
}
