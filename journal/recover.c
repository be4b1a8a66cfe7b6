/*
 * Opening an existing journal: re-read what the last durable state does not cover,
 * check that it chains, and cut a torn tail (a crash mid-write) so the chain continues.
 * The cut bytes are kept beside the journal, never silently discarded.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "journal/journal_impl.h"

#define SCAN_CHUNK (1 << 20)

struct scan {
	struct chain_pos pos;
	uint64_t good_len;       /* bytes of complete, chaining lines */
	bool torn;
	uint64_t kept;           /* lines after the state's position */
};

/* Scans one segment from offset; stops at the first line that does not chain. */
static int scan_segment(int fd, uint64_t offset, struct scan *sc)
{
	char *chunk = malloc(SCAN_CHUNK), *p, *nl;
	size_t have = 0, start;
	ssize_t n;
	int ret = 0;

	if (!chunk)
		return -ENOMEM;
	sc->good_len = offset;
	for (;;) {
		n = pread(fd, chunk + have, SCAN_CHUNK - have, (off_t)(offset + have));
		if (n < 0) {
			ret = -errno;
			break;
		}
		have += (size_t)n;
		start = 0;
		while ((nl = memchr(chunk + start, '\n', have - start))) {
			p = chunk + start;
			if (!line_chains(&sc->pos, p, (size_t)(nl - p))) {
				sc->torn = true;
				goto out;
			}
			ret = chain_append(&sc->pos, p, (size_t)(nl - p));
			if (ret)
				goto out;
			sc->kept++;
			start = (size_t)(nl - chunk) + 1;
			sc->good_len = offset + start;
		}
		if (n == 0 || (start == 0 && have == SCAN_CHUNK)) {
			/* EOF with a partial line, or a "line" longer than any we write. */
			sc->torn = have > start;
			break;
		}
		memmove(chunk, chunk + start, have - start);
		have -= start;
		offset += start;
	}
out:
	free(chunk);
	return ret;
}

/* Moves the bytes after good_len to torn-<seq>.bin and truncates the segment. */
static int cut_tail(struct journal *j, int fd, const char *seg, uint64_t good_len, uint64_t seq)
{
	struct stat sb;
	char *tail;
	int out, ret = 0;

	if (fstat(fd, &sb) < 0)
		return -errno;
	j->open_recovery_cut = (uint64_t)sb.st_size - good_len;
	snprintf(j->open_recovery_file, sizeof(j->open_recovery_file), "%s/torn-%" PRIu64 "-%s.bin",
		 j->dir, seq, seg);
	tail = malloc(j->open_recovery_cut ? j->open_recovery_cut : 1);
	if (!tail)
		return -ENOMEM;
	if (pread(fd, tail, j->open_recovery_cut, (off_t)good_len) != (ssize_t)j->open_recovery_cut) {
		ret = -EIO;
		goto out;
	}
	out = open(j->open_recovery_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		ret = -errno;
		goto out;
	}
	if (write(out, tail, j->open_recovery_cut) != (ssize_t)j->open_recovery_cut || fsync(out) < 0)
		ret = -EIO;
	close(out);
	if (ret == 0 && (ftruncate(fd, (off_t)good_len) < 0 || fsync(fd) < 0))
		ret = -errno;
out:
	free(tail);
	return ret;
}

static int open_segment(struct journal *j, const char *name, int *fd)
{
	char path[JOURNAL_PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", j->dir, name);
	*fd = open(path, O_RDWR | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

/* Segments after a torn one cannot belong to the chain: set them aside, not delete. */
static int set_aside(struct journal *j, const char *name)
{
	char from[JOURNAL_PATH_MAX], to[JOURNAL_PATH_MAX + 16];

	snprintf(from, sizeof(from), "%s/%s", j->dir, name);
	snprintf(to, sizeof(to), "%s/orphan-%s", j->dir, name);
	return rename(from, to) < 0 ? -errno : 0;
}

static int first_index(struct journal *j, char (*names)[SEGMENT_NAME_LEN + 1], size_t n,
		       struct journal_state *st, bool have_state, size_t *idx, char *err,
		       size_t errlen)
{
	size_t i;

	*idx = 0;
	if (!have_state)
		return 0;
	for (i = 0; i < n; i++) {
		if (strcmp(names[i], st->segment) == 0) {
			*idx = i;
			return 0;
		}
	}
	snprintf(err, errlen, "%s/%s: segment named by the journal state is missing "
		 "(lines covered by a published checkpoint are gone; run sandgate verify)",
		 j->dir, st->segment);
	return -EBADMSG;
}

static int scan_all(struct journal *j, char (*names)[SEGMENT_NAME_LEN + 1], size_t n,
		    size_t first, struct journal_state *st, struct scan *sc, char *err,
		    size_t errlen)
{
	struct stat sb;
	size_t i;
	int fd, ret = 0;

	for (i = first; i < n && ret == 0; i++) {
		if (sc->torn) {
			ret = set_aside(j, names[i]);
			continue;
		}
		ret = open_segment(j, names[i], &fd);
		if (ret)
			break;
		if (i == first && fstat(fd, &sb) == 0 && (uint64_t)sb.st_size < st->offset) {
			snprintf(err, errlen, "%s/%s: shorter (%jd bytes) than its last durable "
				 "checkpoint says (%" PRIu64 "); run sandgate verify", j->dir,
				 names[i], (intmax_t)sb.st_size, st->offset);
			close(fd);
			return -EBADMSG;
		}
		ret = scan_segment(fd, i == first ? st->offset : 0, sc);
		if (ret == 0 && sc->torn) {
			j->open_recovery_seq = sc->pos.size;
			ret = cut_tail(j, fd, names[i], sc->good_len, sc->pos.size);
		}
		close(fd);
	}
	if (ret && !*err)
		snprintf(err, errlen, "%s: recovery failed: %s", j->dir, strerror(-ret));
	return ret;
}

int journal_recover(struct journal *j, char *err, size_t errlen)
{
	char (*names)[SEGMENT_NAME_LEN + 1] = NULL;
	struct journal_state st;
	struct scan sc;
	bool have_state;
	size_t n = 0, first;
	int ret;

	ret = segment_list(j->dir, &names, &n);
	if (ret) {
		snprintf(err, errlen, "%s: cannot list: %s", j->dir, strerror(-ret));
		return ret;
	}
	ret = state_load(j->dir, &st);
	have_state = ret == 0;
	if (ret && ret != -ENOENT) {
		snprintf(err, errlen, "%s/state: malformed; move it aside to rescan the journal",
			 j->dir);
		goto out;
	}
	if (!have_state) {
		memset(&st, 0, sizeof(st));
		merkle_range_init(&st.pos.range);
	}
	ret = first_index(j, names, n, &st, have_state, &first, err, errlen);
	if (ret)
		goto out;
	memset(&sc, 0, sizeof(sc));
	sc.pos = st.pos;
	ret = scan_all(j, names, n, first, &st, &sc, err, errlen);
	if (ret)
		goto out;
	j->pos = sc.pos;
	j->last_cp_size = st.pos.size;
	j->open_recovery_kept = sc.kept;
	ret = checkpoints_read_last(j->dir, &j->last_note);
	if (ret)
		snprintf(err, errlen, "%s/checkpoints: cannot read: %s", j->dir, strerror(-ret));
out:
	free(names);
	return ret;
}
