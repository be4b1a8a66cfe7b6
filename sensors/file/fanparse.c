/*
 * fanotify read() buffers: event metadata followed by info records. Each length is
 * checked against what remains before anything is read; names must end inside their
 * record. Pointers in struct fan_rec point into the caller's buffer.
 * Also the sensitive-path test (audit.sensitive_paths) the sensor applies to each path.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <linux/fanotify.h>

#include "sensors/file/fanparse.h"

#ifndef FAN_EVENT_INFO_TYPE_MNT
#define FAN_EVENT_INFO_TYPE_MNT 7
#endif

#define INFO_HDR sizeof(struct fanotify_event_info_header)
#define FID_HDR sizeof(struct fanotify_event_info_fid)   /* header + fsid */
#define FH_HDR 8                                          /* handle_bytes + handle_type */

/* A fid record (rec[0..len), header included) into d. 0 or -EINVAL. */
static int parse_fid(const uint8_t *rec, size_t len, bool with_name, struct fan_dfid *d)
{
	uint32_t hbytes;
	int32_t fsid[2];
	const char *name;

	if (len < FID_HDR + FH_HDR)
		return -EINVAL;
	memcpy(fsid, rec + INFO_HDR, sizeof(fsid));
	memcpy(&hbytes, rec + FID_HDR, sizeof(hbytes));
	if (hbytes > len - FID_HDR - FH_HDR)
		return -EINVAL;
	d->set = true;
	d->fsid = (uint64_t)(uint32_t)fsid[0] << 32 | (uint32_t)fsid[1];
	d->handle = rec + FID_HDR;
	d->handle_len = FH_HDR + hbytes;
	d->name = NULL;
	if (!with_name)
		return 0;
	name = (const char *)rec + FID_HDR + FH_HDR + hbytes;
	if (!memchr(name, '\0', len - FID_HDR - FH_HDR - hbytes))
		return -EINVAL;
	d->name = name;
	return 0;
}

static int parse_info(const uint8_t *rec, size_t len, struct fan_rec *r)
{
	uint64_t mnt;

	switch (rec[0]) {
	case FAN_EVENT_INFO_TYPE_DFID_NAME:
		return parse_fid(rec, len, true, &r->dfid);
	case FAN_EVENT_INFO_TYPE_DFID:
		/* An event on a directory itself, or DFID without a name: keep the first. */
		return r->dfid.set ? 0 : parse_fid(rec, len, false, &r->dfid);
	case FAN_EVENT_INFO_TYPE_OLD_DFID_NAME:
		return parse_fid(rec, len, true, &r->old);
	case FAN_EVENT_INFO_TYPE_NEW_DFID_NAME:
		return parse_fid(rec, len, true, &r->new);
	case FAN_EVENT_INFO_TYPE_FID:
		return r->fid.set ? 0 : parse_fid(rec, len, false, &r->fid);
	case FAN_EVENT_INFO_TYPE_MNT:
		if (len < INFO_HDR + sizeof(mnt))
			return -EINVAL;
		memcpy(&mnt, rec + INFO_HDR, sizeof(mnt));
		r->mnt_id = mnt;
		r->has_mnt = true;
		return 0;
	default:
		/* pidfd, error, range: not needed. */
		return 0;
	}
}

static int parse_infos(const uint8_t *p, size_t len, struct fan_rec *r)
{
	struct fanotify_event_info_header h;

	while (len > 0) {
		if (len < INFO_HDR)
			return -EINVAL;
		memcpy(&h, p, sizeof(h));
		if (h.len < INFO_HDR || h.len > len)
			return -EINVAL;
		if (parse_info(p, h.len, r))
			return -EINVAL;
		p += h.len;
		len -= h.len;
	}
	return 0;
}

int fan_next(const uint8_t *buf, size_t len, size_t *off, struct fan_rec *r)
{
	struct fanotify_event_metadata m;

	if (*off >= len || len - *off < sizeof(m))
		return 0;
	memcpy(&m, buf + *off, sizeof(m));
	if (m.vers != FANOTIFY_METADATA_VERSION)
		return -EPROTO;
	if (m.event_len < sizeof(m) || m.metadata_len < sizeof(m) ||
	    m.metadata_len > m.event_len || m.event_len > len - *off)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->mask = m.mask;
	r->pid = m.pid;
	r->fd = m.fd;
	if (parse_infos(buf + *off + m.metadata_len, m.event_len - m.metadata_len, r))
		return -EINVAL;
	*off += m.event_len;
	return 1;
}

/* prefix "/x" matches path "/x" and "/x/...". */
static bool under(const char *path, const char *prefix, size_t plen)
{
	while (plen > 1 && prefix[plen - 1] == '/')
		plen--;
	if (strncmp(path, prefix, plen) != 0)
		return false;
	return path[plen] == '\0' || path[plen] == '/' || (plen == 1 && prefix[0] == '/');
}

/* "~/rest": rest below /root or below /home/USER. */
static bool under_home(const char *path, const char *rest)
{
	const char *p;

	if (strncmp(path, "/root/", 6) == 0)
		return under(path + 5, rest, strlen(rest));
	if (strncmp(path, "/home/", 6) != 0)
		return false;
	p = strchr(path + 6, '/');
	return p && p > path + 6 && under(p, rest, strlen(rest));
}

bool audit_path_sensitive(const char *path, char *const *prefixes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *p = prefixes[i];

		if (p[0] == '~' && p[1] == '/' && p[2] != '\0') {
			if (under_home(path, p + 1))
				return true;
		} else if (p[0] == '/' && under(path, p, strlen(p))) {
			return true;
		}
	}
	return false;
}
