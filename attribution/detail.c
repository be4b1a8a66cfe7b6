/*
 * The detail store behind verbosity `full`: full tool inputs and outputs, kept out of
 * the journal (which is streamed to SIEMs and kept for years) in STATE_DIR/detail/, one
 * 0600 file per content, named by its SHA-256 so the journal can reference it and a
 * reader can check it was not altered.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attribution/attribution.h"
#include "common/hex.h"

#define DETAIL_MAX (16u << 20)

static bool hex_ok(const char *hex)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (hex_digit(hex[i]) < 0)
			return false;
	return hex[64] == '\0';
}

static int write_file(const char *path, const void *data, size_t len)
{
	const char *p = data;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), ret = 0;

	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;   /* same hash: same bytes already there */
	while (len > 0 && ret == 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			ret = n < 0 ? -errno : -EIO;
		else {
			p += n;
			len -= (size_t)n;
		}
	}
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int detail_put(const char *dir, const void *data, size_t len, char hex[65])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char path[1024], tmp[1100];
	int ret;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	SHA256(data, len, md);
	hex_encode(md, sizeof(md), hex);
	snprintf(path, sizeof(path), "%s/%s", dir, hex);
	if (access(path, F_OK) == 0)
		return 0;
	/* Written under a temporary name so a reader never sees a partial file. */
	snprintf(tmp, sizeof(tmp), "%s/.%s.%d", dir, hex, (int)getpid());
	unlink(tmp);
	ret = write_file(tmp, data, len);
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int detail_get(const char *dir, const char *hex, char **data, size_t *len)
{
	char path[1024], *buf;
	struct stat st;
	ssize_t n;
	int fd, ret = 0;

	if (strlen(hex) != 64 || !hex_ok(hex))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", dir, hex);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size > DETAIL_MAX) {
		ret = st.st_size > DETAIL_MAX ? -EFBIG : -errno;
		close(fd);
		return ret;
	}
	buf = malloc((size_t)st.st_size + 1);
	n = buf ? read(fd, buf, (size_t)st.st_size) : -1;
	close(fd);
	if (n != st.st_size) {
		free(buf);
		return buf ? -EIO : -ENOMEM;
	}
	buf[n] = '\0';
	*data = buf;
	*len = (size_t)n;
	return 0;
}
