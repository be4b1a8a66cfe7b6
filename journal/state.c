/* Reading back what the syncer persisted: the state file and the last published note. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hex.h"
#include "journal/journal_impl.h"

static int parse_range(char *val, uint8_t (*hashes)[MERKLE_HASH_LEN], int *count)
{
	char *save = NULL, *tok;

	*count = 0;
	for (tok = strtok_r(val, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (*count >= MERKLE_MAX_HEIGHT ||
		    hex_decode(tok, strlen(tok), hashes[*count], MERKLE_HASH_LEN))
			return -EINVAL;
		(*count)++;
	}
	return 0;
}

static int state_line(struct journal_state *st, char *key, char *val,
		      uint8_t (*hashes)[MERKLE_HASH_LEN], int *count, unsigned *seen)
{
	char *end;

	if (strcmp(key, "version") == 0)
		return strcmp(val, "1") == 0 ? (*seen |= 1, 0) : -EINVAL;
	if (strcmp(key, "size") == 0) {
		st->pos.size = strtoull(val, &end, 10);
		return *end ? -EINVAL : (*seen |= 2, 0);
	}
	if (strcmp(key, "segment") == 0) {
		if (strlen(val) != SEGMENT_NAME_LEN)
			return -EINVAL;
		memcpy(st->segment, val, SEGMENT_NAME_LEN + 1);
		return *seen |= 4, 0;
	}
	if (strcmp(key, "offset") == 0) {
		st->offset = strtoull(val, &end, 10);
		return *end ? -EINVAL : (*seen |= 8, 0);
	}
	if (strcmp(key, "leaf") == 0)
		return hex_decode(val, strlen(val), st->pos.leaf, MERKLE_HASH_LEN) ? -EINVAL
										: (*seen |= 16, 0);
	if (strcmp(key, "range") == 0)
		return parse_range(val, hashes, count) ? -EINVAL : (*seen |= 32, 0);
	return -EINVAL;
}

/* Returns 0, -ENOENT when there is no state yet, -EINVAL when it is malformed. */
int state_load(const char *dir, struct journal_state *st)
{
	uint8_t hashes[MERKLE_MAX_HEIGHT][MERKLE_HASH_LEN];
	char path[JOURNAL_PATH_MAX], line[MERKLE_MAX_HEIGHT * 65 + 64];
	unsigned seen = 0;
	int count = 0, ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/state", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	memset(st, 0, sizeof(*st));
	while (ret == 0 && fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		line[strcspn(line, "\n")] = '\0';
		if (!sp) {
			ret = strcmp(line, "range") == 0 ? (seen |= 32, 0) : -EINVAL;
			continue;
		}
		*sp = '\0';
		ret = state_line(st, line, sp + 1, hashes, &count, &seen);
	}
	fclose(f);
	if (ret == 0 && seen != 63)
		ret = -EINVAL;
	if (ret == 0)
		ret = merkle_range_load(&st->pos.range, st->pos.size,
					(const uint8_t(*)[MERKLE_HASH_LEN])hashes, count);
	return ret;
}

/* The last note in the checkpoints file (notes end with a blank line), or NULL. */
int checkpoints_read_last(const char *dir, char **note)
{
	char path[JOURNAL_PATH_MAX];

	*note = NULL;
	snprintf(path, sizeof(path), "%s/checkpoints", dir);
	return notes_read_last(path, note);
}

int notes_read_last(const char *path, char **note)
{
	char *data = NULL, *start, *end;
	struct stat sb;
	size_t off;
	int fd, ret = 0;

	*note = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &sb) < 0) {
		ret = -errno;
		goto out;
	}
	off = sb.st_size > NOTE_MAX_LEN * 2 ? (size_t)sb.st_size - NOTE_MAX_LEN * 2 : 0;
	data = calloc(1, NOTE_MAX_LEN * 2 + 1);
	if (!data) {
		ret = -ENOMEM;
		goto out;
	}
	if (pread(fd, data, (size_t)sb.st_size - off, (off_t)off) != (ssize_t)(sb.st_size - (off_t)off)) {
		ret = -EIO;
		goto out;
	}
	/* A note is "body\n\nsignatures\n" and is followed by one blank line. */
	end = data + strlen(data);
	if (end - data < 2 || strcmp(end - 2, "\n\n") != 0)
		goto out;
	end -= 1;
	*end = '\0';
	start = end;
	{
		int blanks = 0;

		while (start > data && blanks < 2) {
			start--;
			if (start > data && start[0] == '\n' && start[-1] == '\n')
				blanks++;
		}
		if (blanks == 2)
			start++;
	}
	*note = strdup(start);
	if (!*note)
		ret = -ENOMEM;
out:
	free(data);
	close(fd);
	return ret;
}
