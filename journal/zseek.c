/* The zstd seekable format, written and read (journal/zseek.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "journal/zseek.h"

#define SKIPPABLE_MAGIC 0x184D2A5Eu
#define SEEKABLE_MAGIC 0x8F92EAB1u
#define FOOTER_LEN 9u
#define MAX_FRAMES (1u << 20)

struct ztable {
	uint32_t n;
	uint32_t *csize, *dsize;
	uint64_t total;      /* decompressed bytes */
};

static void put_le32(struct buf *b, uint32_t v)
{
	unsigned char c[4] = { (unsigned char)v, (unsigned char)(v >> 8),
			       (unsigned char)(v >> 16), (unsigned char)(v >> 24) };

	buf_put(b, c, 4);
}

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Frames, then the seek table as one skippable frame. */
static int encode(struct buf *out, const char *data, size_t len, int level)
{
	struct buf table;
	uint32_t n = 0;

	buf_init(&table);
	for (size_t at = 0; at < len || (len == 0 && n == 0); n++) {
		size_t chunk = len - at < ZSEEK_FRAME_BYTES ? len - at : ZSEEK_FRAME_BYTES;
		size_t bound = ZSTD_compressBound(chunk), got;

		if (!buf_grow(out, bound))
			break;
		got = ZSTD_compress(out->data + out->len, bound, data + at, chunk, level);
		if (ZSTD_isError(got)) {
			buf_free(&table);
			return -EIO;
		}
		out->len += got;
		put_le32(&table, (uint32_t)got);
		put_le32(&table, (uint32_t)chunk);
		at += chunk;
	}
	put_le32(out, SKIPPABLE_MAGIC);
	put_le32(out, (uint32_t)(table.len + FOOTER_LEN));
	buf_put(out, table.data, table.len);
	put_le32(out, n);
	buf_putc(out, 0);   /* descriptor: no checksums */
	put_le32(out, SEEKABLE_MAGIC);
	buf_free(&table);
	return out->oom ? -ENOMEM : 0;
}

int zseek_write_file(const char *path, const void *data, size_t len, int level)
{
	char tmp[4200];
	struct buf out;
	int fd, ret;

	buf_init(&out);
	ret = encode(&out, data, len, level);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = ret ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (ret == 0 && fd < 0)
		ret = -errno;
	if (ret == 0)
		ret = fd_write_all(fd, out.data, out.len);
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (fd >= 0 && close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret && fd >= 0)
		(void)unlink(tmp);
	buf_free(&out);
	return ret;
}

static int read_file(const char *path, unsigned char **data, size_t *len)
{
	struct stat st;
	unsigned char *p;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)(FOOTER_LEN + 8)) {
		close(fd);
		return -EBADMSG;
	}
	p = malloc((size_t)st.st_size);
	if (!p)
		ret = -ENOMEM;
	else if ((got = pread(fd, p, (size_t)st.st_size, 0)) != st.st_size)
		ret = got < 0 ? -errno : -EIO;
	close(fd);
	if (ret) {
		free(p);
		return ret;
	}
	*data = p;
	*len = (size_t)st.st_size;
	return 0;
}

/* The seek table, checked against the file's size. */
static int parse_table(const unsigned char *f, size_t len, struct ztable *t)
{
	const unsigned char *foot = f + len - FOOTER_LEN, *e;
	uint64_t csum = 0;
	size_t tlen;

	memset(t, 0, sizeof(*t));
	t->n = get_le32(foot);
	if (get_le32(foot + 5) != SEEKABLE_MAGIC || foot[4] != 0 || t->n > MAX_FRAMES)
		return -EBADMSG;
	tlen = (size_t)t->n * 8;
	if (len < tlen + FOOTER_LEN + 8)
		return -EBADMSG;
	e = foot - tlen;
	if (get_le32(e - 8) != SKIPPABLE_MAGIC || get_le32(e - 4) != tlen + FOOTER_LEN)
		return -EBADMSG;
	t->csize = calloc(t->n + 1, sizeof(uint32_t));
	t->dsize = calloc(t->n + 1, sizeof(uint32_t));
	if (!t->csize || !t->dsize)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		t->csize[i] = get_le32(e + 8 * i);
		t->dsize[i] = get_le32(e + 8 * i + 4);
		csum += t->csize[i];
		t->total += t->dsize[i];
	}
	return csum == (uint64_t)(e - 8 - f) ? 0 : -EBADMSG;
}

static void table_free(struct ztable *t)
{
	free(t->csize);
	free(t->dsize);
}

/* Decompresses frames covering [off, off+len) into out. */
static int extract(const unsigned char *f, const struct ztable *t, uint64_t off, size_t len,
		   char *out)
{
	uint64_t coff = 0, doff = 0;
	size_t done = 0;
	char *frame = NULL;
	int ret = 0;

	for (uint32_t i = 0; i < t->n && done < len && ret == 0; i++) {
		uint64_t dend = doff + t->dsize[i];

		if (dend > off + done) {
			size_t from = (size_t)(off + done - doff), n;
			size_t got;

			frame = realloc(frame, t->dsize[i] ? t->dsize[i] : 1);
			if (!frame)
				return -ENOMEM;
			got = ZSTD_decompress(frame, t->dsize[i], f + coff, t->csize[i]);
			if (ZSTD_isError(got) || got != t->dsize[i])
				ret = -EBADMSG;
			n = t->dsize[i] - from < len - done ? t->dsize[i] - from : len - done;
			if (ret == 0)
				memcpy(out + done, frame + from, n);
			done += n;
		}
		coff += t->csize[i];
		doff = dend;
	}
	free(frame);
	return ret;
}

int zseek_read_range(const char *path, uint64_t off, size_t len, char **out)
{
	unsigned char *f = NULL;
	struct ztable t = { 0 };
	size_t flen;
	char *buf = NULL;
	int ret = read_file(path, &f, &flen);

	if (ret == 0)
		ret = parse_table(f, flen, &t);
	if (ret == 0 && (off > t.total || len > t.total - off))
		ret = -ERANGE;
	if (ret == 0 && !(buf = malloc(len + 1)))
		ret = -ENOMEM;
	if (ret == 0)
		ret = extract(f, &t, off, len, buf);
	table_free(&t);
	free(f);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

int zseek_read_all(const char *path, char **out, size_t *len)
{
	unsigned char *f = NULL;
	struct ztable t = { 0 };
	size_t flen;
	int ret = read_file(path, &f, &flen);

	if (ret == 0)
		ret = parse_table(f, flen, &t);
	table_free(&t);
	free(f);
	if (ret)
		return ret;
	*len = (size_t)t.total;
	return zseek_read_range(path, 0, (size_t)t.total, out);
}
