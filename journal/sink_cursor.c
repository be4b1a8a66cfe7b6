/* A sink's durable cursor file (journal/sink_impl.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "journal/sink_impl.h"

int sink_cursor_load(const char *path, struct follow_cursor *c)
{
	FILE *f = fopen(path, "re");
	int n;

	memset(c, 0, sizeof(*c));
	if (!f)
		return errno == ENOENT ? 0 : -errno;   /* a new sink starts at the beginning */
	n = fscanf(f, "%" SCNu64 " %" SCNu64 " %" SCNu64, &c->next_seq, &c->segment,
		   &c->offset);
	fclose(f);
	if (n != 3) {
		memset(c, 0, sizeof(*c));
		return -EINVAL;
	}
	return 0;
}

static int fsync_dir_of(const char *path)
{
	char copy[4096];
	int fd, ret = 0;

	snprintf(copy, sizeof(copy), "%s", path);
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Temporary file, fsync, rename, directory fsync: never a half-written cursor. */
int sink_cursor_save(const char *path, const struct follow_cursor *c)
{
	char tmp[4200], text[96];
	int fd, n, ret = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		     c->next_seq, c->segment, c->offset);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, text, (size_t)n) != n || fsync(fd) < 0)
		ret = errno ? -errno : -EIO;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret == 0)
		ret = fsync_dir_of(path);
	return ret;
}
