/*
 * Cold segments in the zstd seekable format (zstd's contrib/seekable_format): the data
 * cut into independently compressed frames, then a skippable frame holding the seek
 * table (compressed and decompressed size per frame; no checksums) and its footer.
 * Any zstd tool decompresses the whole file; a reader that knows the table decompresses
 * only the frame holding the line it wants.
 */
#ifndef SANDGATE_JOURNAL_ZSEEK_H
#define SANDGATE_JOURNAL_ZSEEK_H

#include <stddef.h>
#include <stdint.h>

#define ZSEEK_FRAME_BYTES (1u << 20)   /* decompressed bytes per frame */

/*
 * Writes data[0..len) to path in the seekable format: written to path.tmp, fsync'd,
 * renamed. Returns 0, -ENOMEM, -EIO (compression), or -errno from the file calls.
 */
int zseek_write_file(const char *path, const void *data, size_t len, int level);

/*
 * Reads len bytes at decompressed offset off of the seekable file at path into out
 * (malloc'd, NUL-terminated). Returns 0, -ENOENT, -EBADMSG (not seekable / corrupt),
 * -ERANGE (beyond the end), -ENOMEM, -errno.
 */
int zseek_read_range(const char *path, uint64_t off, size_t len, char **out);

/*
 * Decompresses the whole seekable file at path (malloc'd into *out, *len bytes).
 * Returns 0, -EBADMSG, -ENOMEM, -errno.
 */
int zseek_read_all(const char *path, char **out, size_t *len);

#endif
