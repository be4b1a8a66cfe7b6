/* A sink's durable cursor file (sinks/sink_impl.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "sinks/sink_impl.h"

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

/* Temporary file, fsync, rename, directory fsync: never a half-written cursor. */
int sink_cursor_save(const char *path, const struct follow_cursor *c)
{
	char text[96];
	int n;

	n = snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		     c->next_seq, c->segment, c->offset);
	return file_replace_atomic(path, text, (size_t)n, 0600);
}
