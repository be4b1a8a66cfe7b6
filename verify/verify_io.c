/*
 * Reading for the verifier: segment listing, the buffered line reader, the look-ahead
 * that tells a deleted line from a moved one, and the checkpoint files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verify/verify_impl.h"

#define READ_BUF (4u << 20)
#define LINE_LIMIT (64u << 20)   /* the writer never comes near; a hostile file may */
#define EXT_FILE_LIMIT (256u << 20)
#define SEG_DIGITS 20
#define EM_DASH_SP "\xe2\x80\x94 "

struct reader {
	int fd;
	char *buf;
	size_t cap, start, end;
	uint64_t off;       /* file offset of buf[start] */
	bool eof;
};

static int reader_fill(struct reader *r)
{
	ssize_t n;

	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->end == r->cap) {
		char *nb = r->cap >= LINE_LIMIT ? NULL : realloc(r->buf, r->cap * 2);

		if (!nb)
			return r->cap >= LINE_LIMIT ? -EFBIG : -ENOMEM;
		r->buf = nb;
		r->cap *= 2;
	}
	do
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		r->eof = true;
	r->end += (size_t)n;
	return 0;
}

/* Next complete line (without '\n'): 1, 0 at end of file, or -errno. */
static int reader_next(struct reader *r, const char **line, size_t *len, uint64_t *off)
{
	for (;;) {
		char *p = r->buf + r->start;
		char *nl = memchr(p, '\n', r->end - r->start);
		int ret;

		if (nl) {
			*line = p;
			*len = (size_t)(nl - p);
			*off = r->off;
			r->start += *len + 1;
			r->off += *len + 1;
			return 1;
		}
		if (r->eof)
			return 0;
		ret = reader_fill(r);
		if (ret < 0)
			return ret;
	}
}

static int reader_open(struct reader *r, const char *path, uint64_t off)
{
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->start = r->end = 0;
	r->off = off;
	r->eof = false;
	/* Only a hint: the scan is one sequential pass. */
	(void)posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (off && lseek(r->fd, (off_t)off, SEEK_SET) < 0) {
		int ret = -errno;

		close(r->fd);
		r->fd = -1;
		return ret;
	}
	return 0;
}

static bool segment_name(const char *n)
{
	size_t i;

	for (i = 0; i < SEG_DIGITS; i++)
		if (n[i] < '0' || n[i] > '9')
			return false;
	return strcmp(n + SEG_DIGITS, ".jsonl") == 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_segment(struct vstate *vs, const char *name, size_t *cap)
{
	char **ns;

	if (vs->nsegs == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		ns = realloc(vs->segs, *cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		vs->segs = ns;
	}
	if (asprintf(&vs->segs[vs->nsegs], "%s/%s", vs->o->journal_dir, name) < 0)
		return -ENOMEM;
	vs->nsegs++;
	return 0;
}

int vs_list_segments(struct vstate *vs)
{
	DIR *d = opendir(vs->o->journal_dir);
	struct dirent *de;
	size_t cap = 0;
	int ret = 0;

	if (!d)
		return -errno;
	while (ret == 0 && (de = readdir(d)))
		if (segment_name(de->d_name))
			ret = add_segment(vs, de->d_name, &cap);
	closedir(d);
	if (ret == 0 && vs->nsegs > 1)
		/* Fixed-width names: text order is seq order. */
		qsort(vs->segs, vs->nsegs, sizeof(*vs->segs), cmp_path);
	return ret;
}

/* Reads one segment through vs_line. 1 when the verdict is known, 0 or -errno. */
static int read_segment(struct vstate *vs, struct reader *r, size_t idx)
{
	const char *line;
	size_t len;
	int ret = reader_open(r, vs->segs[idx], 0);

	if (ret < 0)
		return ret;
	vs->cur_seg = idx;
	while ((ret = reader_next(r, &line, &len, &vs->cur_off)) == 1)
		if (vs_line(vs, line, len) < 0)
			break;
	if (ret == 0 && r->end > r->start) {
		if (idx + 1 == vs->nsegs)
			vs_fail(vs, VERIFY_TRUNCATED, vs->range.size,
				"the last line is incomplete (cut off)");
		else
			vs_fail(vs, VERIFY_MODIFIED, vs->range.size,
				"segment %s ends inside a line", vs->segs[idx]);
	}
	close(r->fd);
	if (ret < 0)
		return ret;
	return vs->failed ? 1 : 0;
}

int vs_read_segments(struct vstate *vs)
{
	struct reader r = { .fd = -1, .cap = READ_BUF };
	size_t i;
	int ret = 0;

	r.buf = malloc(r.cap);
	if (!r.buf)
		return -ENOMEM;
	for (i = 0; i < vs->nsegs && ret == 0; i++)
		ret = read_segment(vs, &r, i);
	free(r.buf);
	return ret < 0 ? ret : 0;
}

/* Scans one segment from off for a line with the seq; skips the line at off. */
static int find_in_segment(struct reader *r, const char *path, uint64_t off, bool skip,
			   uint64_t seq)
{
	struct line_envelope env;
	const char *line;
	size_t len;
	uint64_t loff;
	int ret = reader_open(r, path, off);

	if (ret < 0)
		return ret;
	while ((ret = reader_next(r, &line, &len, &loff)) == 1) {
		if (skip) {
			skip = false;
			continue;
		}
		if (line_envelope_parse_strict(line, len, &env) == 0 && env.seq == seq)
			break;
	}
	close(r->fd);
	return ret;
}

int vs_lookahead(struct vstate *vs, uint64_t seq)
{
	struct reader r = { .fd = -1, .cap = 1u << 20 };
	size_t i;
	int ret = 0;

	r.buf = malloc(r.cap);
	if (!r.buf)
		return -ENOMEM;
	for (i = vs->cur_seg; i < vs->nsegs && ret == 0; i++)
		ret = find_in_segment(&r, vs->segs[i], i == vs->cur_seg ? vs->cur_off : 0,
				      i == vs->cur_seg, seq);
	free(r.buf);
	return ret;
}

static int cmp_ext(const void *a, const void *b)
{
	const struct ext_cp *x = a, *y = b;

	return x->size < y->size ? -1 : x->size > y->size;
}

static int add_note(struct vstate *vs, const char *note, size_t len, const char *what)
{
	struct checkpoint cp;
	enum note_status st;

	memset(&cp, 0, sizeof(cp));
	st = note_open_checkpoint(vs->o->key, note, len, &cp);
	if (st == NOTE_MALFORMED) {
		vs_fail(vs, VERIFY_BAD_SIGNATURE, cp.size, "%s is malformed", what);
		return 0;
	}
	if (st != NOTE_OK)
		vs_fail(vs, st == NOTE_UNKNOWN_KEY ? VERIFY_UNKNOWN_KEY : VERIFY_BAD_SIGNATURE,
			cp.size, "%s of size %llu: %s", what, (unsigned long long)cp.size,
			note_status_str(st));
	if (vs->next == vs->cap) {
		size_t nc = vs->cap ? vs->cap * 2 : 64;
		struct ext_cp *ne = realloc(vs->ext, nc * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		vs->ext = ne;
		vs->cap = nc;
	}
	vs->ext[vs->next].size = cp.size;
	memcpy(vs->ext[vs->next].root, cp.root, MERKLE_HASH_LEN);
	vs->ext[vs->next].st = st;
	vs->ext[vs->next].given = vs->loading_given;
	if (vs->loading_given && st == NOTE_OK && cp.size > vs->res->witnessed_max)
		vs->res->witnessed_max = cp.size;
	vs->ext[vs->next++].what = what;
	return 0;
}

/* Notes one after another, each followed by one blank line. */
static int split_notes(struct vstate *vs, const char *d, size_t len, const char *what)
{
	size_t p = 0, q;
	int ret = 0;

	while (p < len && ret == 0) {
		const char *split;

		if (d[p] == '\n') {
			p++;
			continue;
		}
		split = memmem(d + p, len - p, "\n\n", 2);
		q = split ? (size_t)(split - d) + 2 : len;
		while (q + 4 <= len && memcmp(d + q, EM_DASH_SP, 4) == 0) {
			const char *nl = memchr(d + q, '\n', len - q);

			q = nl ? (size_t)(nl - d) + 1 : len;
		}
		ret = add_note(vs, d + p, q - p, what);
		p = q;
	}
	return ret;
}

/* Reads a whole (small) file. -ENOENT when missing. */
static int slurp(const char *path, char **data, size_t *len)
{
	FILE *f = fopen(path, "re");
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int ret = 0;

	if (!f)
		return -errno;
	while (ret == 0) {
		if (n == cap) {
			char *nb = cap >= EXT_FILE_LIMIT ? NULL : realloc(buf, cap ? cap * 2 : 65536);

			if (!nb) {
				ret = cap >= EXT_FILE_LIMIT ? -EFBIG : -ENOMEM;
				break;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			ret = ferror(f) ? -EIO : 1;
	}
	fclose(f);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	*data = buf;
	*len = n;
	return 0;
}

static int load_file(struct vstate *vs, const char *path, const char *what, bool optional)
{
	char *data = NULL;
	size_t len = 0;
	int ret = slurp(path, &data, &len);

	if (ret == -ENOENT && optional)
		return 0;
	if (ret < 0)
		return ret;
	ret = split_notes(vs, data, len, what);
	free(data);
	return ret;
}

int vs_load_external(struct vstate *vs)
{
	char *path = NULL;
	int ret;

	if (asprintf(&path, "%s/checkpoints", vs->o->journal_dir) < 0)
		return -ENOMEM;
	ret = load_file(vs, path, "checkpoints file note", true);
	free(path);
	vs->loading_given = true;
	if (ret == 0 && vs->o->checkpoint_file)
		ret = load_file(vs, vs->o->checkpoint_file, "given checkpoint", false);
	if (ret == 0 && vs->o->witness_file)
		ret = load_file(vs, vs->o->witness_file, "witnessed checkpoint", false);
	vs->loading_given = false;
	if (ret == 0 && vs->next > 1)
		qsort(vs->ext, vs->next, sizeof(*vs->ext), cmp_ext);
	return ret;
}

void vs_free(struct vstate *vs)
{
	size_t i;

	for (i = 0; i < vs->nsegs; i++)
		free(vs->segs[i]);
	free(vs->segs);
	free(vs->ext);
}
