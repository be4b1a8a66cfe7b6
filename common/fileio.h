/*
 * File writes that survive crashes: the whole buffer or an error, and replace-by-rename
 * so a reader sees the old file or the new one, never a mix. Every state file sandgate
 * keeps (journal state, session registry, sink cursors, cold manifests) goes through here.
 */
#ifndef SANDGATE_COMMON_FILEIO_H
#define SANDGATE_COMMON_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* Writes all of p[0..len) to fd, retrying on EINTR. 0 or -errno (-EIO on a 0 write). */
int fd_write_all(int fd, const void *p, size_t len);

/* fsync of a directory, so a rename or create in it is durable. 0 or -errno. */
int dir_fsync(const char *dir);
/* dir_fsync of the directory that holds path. */
int dir_fsync_of(const char *path);

/*
 * Replaces path with data: writes path.tmp (mode), fsyncs it, renames it over path and
 * fsyncs the directory. On failure the temporary file is removed and path is untouched.
 * Returns 0 or -errno (-ENAMETOOLONG for a path that does not fit).
 */
int file_replace_atomic(const char *path, const void *data, size_t len, mode_t mode);

#endif
