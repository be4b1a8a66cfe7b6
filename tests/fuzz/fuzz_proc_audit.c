/* /proc/PID/stat, status, cmdline and mountinfo bytes as the sensors read them. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/file/fanparse.h"
#include "sensors/file/mountwatch.h"
#include "sensors/process/proc_int.h"
#include "sensors/shared/procparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *prefixes[] = { "/etc", "~/.ssh", "/" };
	const char *b = (const char *)data, *arg;
	struct proc_stat_info st;
	struct mount_entry m;
	size_t off = 0, alen, total = 0;
	uint32_t r, e;
	char *path;

	(void)proc_stat_parse(b, size, &st);
	(void)proc_status_uids(b, size, &r, &e);
	(void)mountinfo_line(b, size, &m);
	while (cmdline_next(b, size, &off, &arg, &alen))
		total += alen;
	if (total > size)
		abort();   /* arguments never extend past the buffer */
	/* the dynamic loader's cmdline: the program it loads lies inside the buffer */
	arg = exeid_loaded(b, size, &alen);
	if (arg && (arg < b || alen > size || arg + alen > b + size))
		abort();
	path = malloc(size + 1);
	if (path) {
		memcpy(path, data, size);
		path[size] = '\0';
		(void)audit_path_sensitive(path, prefixes, 3);
		free(path);
	}
	return 0;
}
