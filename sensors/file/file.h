/* The file sensor (fanotify) as the module (audit/audit.c) starts and stops it. */
#ifndef SANDGATE_SENSORS_FILE_FILE_H
#define SANDGATE_SENSORS_FILE_FILE_H

struct audit;
struct audit_settings;
struct fanmon;

/* Opens fanotify, marks the filesystems, starts its thread. 0 or -errno. */
int fanmon_start(struct fanmon **out, struct audit *a, const struct audit_settings *s);
/* Session sid's workdir (its reads are logged like a sensitive prefix's); NULL or ""
 * forgets it. Thread-safe. */
void fanmon_workdir(struct fanmon *f, const char *sid, const char *path);
void fanmon_stop(struct fanmon *f);

#endif
