/*
 * What the daemon asks of the sensors (filled from the `audit:` section by
 * daemon/audit_glue.c, handed to audit_start, read by each sensor as it starts).
 */
#ifndef SANDGATE_SENSORS_SHARED_SETTINGS_H
#define SANDGATE_SENSORS_SHARED_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct audit_settings {
	const char *session_prefix;      /* sessions' v2 cgroup parent, "/sandgate" */
	bool proc;                       /* run the proc connector sensor */
	bool files;                      /* run the fanotify sensor */
	bool file_modify;                /* FAN_MODIFY: writes seen before the close */
	char *const *marks;              /* mount points to mark (filesystem marks) */
	size_t n_marks;
	char *const *sensitive;          /* read-logged prefixes; "~/x" = any home's x */
	size_t n_sensitive;
	bool packages;                   /* package.install from installer runs (proc) */
	bool package_alerts;             /* and an alert for an unapproved source: off when
					  * detection's rule raises it instead */
	bool exec_audit;                 /* process.exec from the audit subsystem (proc) */
	uint64_t proc_rcvbuf;            /* connector socket buffer, bytes; 0: 32 MiB */
	bool file_mounts;                /* mark every writable filesystem, now and mounted */
	uint64_t read_repeat_ms;         /* repeated reads summed up this often; 0: 60 s */
};

#endif
