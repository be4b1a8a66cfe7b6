/* fanotify read() buffers: event metadata and info records (FID, DFID_NAME, rename). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/file/fanparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void touch(const struct fan_dfid *d, const uint8_t *buf, size_t size)
{
	if (!d->set)
		return;
	if (d->handle < buf || d->handle + d->handle_len > buf + size)
		abort();
	if (d->name && strlen(d->name) > size)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fan_rec r;
	size_t off = 0;

	while (fan_next(data, size, &off, &r) > 0) {
		touch(&r.dfid, data, size);
		touch(&r.old, data, size);
		touch(&r.new, data, size);
		touch(&r.fid, data, size);
	}
	return 0;
}
