/*
 * /proc/PID/{stat,status,cmdline} bytes (sensors/shared/procparse.c; pure, fuzzed in
 * tests/fuzz/fuzz_proc_audit.c and fuzz_proc_stat.c): the process sensor reads an exec's,
 * the file sensor a closer's, the module a seeded or escaped process's.
 */
#ifndef SANDGATE_SENSORS_SHARED_PROCPARSE_H
#define SANDGATE_SENSORS_SHARED_PROCPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUDIT_ARGV_MAX (160 * 1024)   /* cmdline bytes kept: JSON-escaped, fits a line */
#define AUDIT_COMM_MAX 64

struct proc_stat_info {
	char comm[AUDIT_COMM_MAX];   /* printable copy of the comm field */
	int32_t ppid;
	uint64_t start_ticks;        /* field 22: clock ticks since boot */
};

/* Parses /proc/PID/stat bytes (comm may hold ')' and spaces). 0 or -EINVAL. */
int proc_stat_parse(const char *buf, size_t len, struct proc_stat_info *st);

/* Real and effective uid from /proc/PID/status bytes ("Uid:" line). 0 or -EINVAL. */
int proc_status_uids(const char *buf, size_t len, uint32_t *ruid, uint32_t *euid);

/*
 * Steps through NUL-separated /proc/PID/cmdline bytes: from *off, sets *arg and *alen to the
 * next argument (a last one without its NUL included) and advances *off. Returns true
 * while there is an argument.
 */
bool cmdline_next(const char *buf, size_t len, size_t *off, const char **arg, size_t *alen);

#endif
