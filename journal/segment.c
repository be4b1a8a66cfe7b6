/* Segment files, the state file and the checkpoints file: the journal's disk I/O. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/timeutil.h"
#include "journal/journal_impl.h"

uint64_t journal_now_ms(void)
{
	return (uint64_t)time_mono_ms();
}

void segment_name(uint64_t first_seq, char out[SEGMENT_NAME_LEN + 1])
{
	snprintf(out, SEGMENT_NAME_LEN + 1, "%020" PRIu64 ".jsonl", first_seq);
}

static bool is_segment_name(const char *n)
{
	size_t i;

	if (strlen(n) != SEGMENT_NAME_LEN || strcmp(n + 20, ".jsonl") != 0)
		return false;
	for (i = 0; i < 20; i++)
		if (n[i] < '0' || n[i] > '9')
			return false;
	return true;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Names sort as numbers: fixed width. */
int segment_list(const char *dir, char (**names)[SEGMENT_NAME_LEN + 1], size_t *n)
{
	char (*list)[SEGMENT_NAME_LEN + 1] = NULL, (*grown)[SEGMENT_NAME_LEN + 1];
	size_t count = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	int ret = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!is_segment_name(de->d_name))
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(list, cap * sizeof(*list));
			if (!grown) {
				ret = -ENOMEM;
				goto out;
			}
			list = grown;
		}
		memcpy(list[count++], de->d_name, SEGMENT_NAME_LEN + 1);
	}
	if (count)
		qsort(list, count, sizeof(*list), name_cmp);
out:
	closedir(d);
	if (ret) {
		free(list);
		return ret;
	}
	*names = list;
	*n = count;
	return 0;
}

int segment_open_new(struct journal *j, uint64_t first_seq)
{
	char path[JOURNAL_PATH_MAX];
	int fd;

	segment_name(first_seq, j->seg_name);
	snprintf(path, sizeof(path), "%s/%s", j->dir, j->seg_name);
	/* An empty file of this name is a segment created just before a crash: reuse it. */
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_END) != 0) {
		close(fd);
		return -EEXIST;
	}
	if (j->seg_fd >= 0)
		close(j->seg_fd);
	j->seg_fd = fd;
	j->seg_len = 0;
	j->seg_opened_ms = journal_now_ms();
	return dir_fsync(j->dir);
}

/*
 * Writes the pending lines. On failure the segment is cut back to its last complete
 * line, so a full disk never leaves half a line behind, and the lines stay buffered.
 */
int journal_flush(struct journal *j)
{
	size_t done = 0;
	ssize_t n;
	int ret = 0;

	while (done < j->out.len) {
		n = write(j->seg_fd, j->out.data + done, j->out.len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -ENOSPC;
			break;
		}
		done += (size_t)n;
	}
	if (ret) {
		if (ftruncate(j->seg_fd, (off_t)j->seg_len) < 0 && ret == 0)
			ret = -errno;
		return ret;
	}
	j->seg_len += done;
	pthread_mutex_lock(&j->stats_lock);
	j->stats.bytes_written += done;
	j->stats.events_written += j->lines_unpublished;
	j->lines_unpublished = 0;
	pthread_mutex_unlock(&j->stats_lock);
	buf_reset(&j->out);
	if (j->cfg.fsync == JOURNAL_FSYNC_ALWAYS && fdatasync(j->seg_fd) < 0)
		return -errno;
	return 0;
}

static void state_format(struct buf *b, const struct journal_state *st)
{
	int i;

	buf_printf(b, "version 1\nsize %" PRIu64 "\nsegment %s\noffset %" PRIu64 "\nleaf ",
		   st->pos.size, st->segment, st->offset);
	buf_put_hex(b, st->pos.leaf, MERKLE_HASH_LEN);
	buf_puts(b, "\nrange");
	for (i = 0; i < st->pos.range.count; i++) {
		buf_putc(b, ' ');
		buf_put_hex(b, st->pos.range.range[i], MERKLE_HASH_LEN);
	}
	buf_putc(b, '\n');
}

/* Atomic replace: a crash leaves the old state or the new one, never a mix. */
int state_save(const char *dir, const struct journal_state *st)
{
	char path[JOURNAL_PATH_MAX];
	struct buf b;
	int ret;

	buf_init(&b);
	state_format(&b, st);
	snprintf(path, sizeof(path), "%s/state", dir);
	ret = b.oom ? -ENOMEM : file_replace_atomic(path, b.data, b.len, 0600);
	buf_free(&b);
	return ret;
}
