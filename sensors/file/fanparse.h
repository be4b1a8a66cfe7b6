/*
 * fanotify event records and the sensitive-path test (sensors/file/fanparse.c; pure,
 * fuzzed in tests/fuzz/fuzz_fanotify.c).
 */
#ifndef SANDGATE_SENSORS_FILE_FANPARSE_H
#define SANDGATE_SENSORS_FILE_FANPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A directory file handle plus entry name, as FAN_REPORT_DFID_NAME reports them. */
struct fan_dfid {
	bool set;
	uint64_t fsid;               /* the two fsid words as one value */
	const uint8_t *handle;       /* struct file_handle bytes (header included) */
	size_t handle_len;
	const char *name;            /* NUL-terminated inside the buffer; NULL: none */
};

struct fan_rec {
	uint64_t mask;
	int32_t pid;
	int32_t fd;
	struct fan_dfid dfid;        /* DFID_NAME (or DFID): the object's parent + name */
	struct fan_dfid old, new;    /* FAN_RENAME: where from, where to */
	struct fan_dfid fid;         /* FID: the object itself (name NULL), its identity */
	uint64_t mnt_id;             /* mount events */
	bool has_mnt;
};

/*
 * Reads the event at *off of a fanotify read() buffer and advances *off. Returns 1 with
 * r filled, 0 at the end, -EINVAL on a malformed record (stop reading this buffer) or
 * -EPROTO on a metadata version this code does not know.
 */
int fan_next(const uint8_t *buf, size_t len, size_t *off, struct fan_rec *r);

/*
 * Whether path (absolute) lies under one of the sensitive prefixes: "/etc" covers
 * "/etc" and "/etc/x"; "~/.ssh" covers ".ssh" in /root and in any /home/USER.
 */
bool audit_path_sensitive(const char *path, char *const *prefixes, size_t n);

#endif
