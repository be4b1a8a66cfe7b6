/*
 * One logging vocabulary for the daemon and the CLI (OpenBSD's log.h shape). Internal
 * functions return -errno and never log; the loop callback, the dispatcher or main()
 * logs once, with context. errno is preserved across every call.
 *
 * Each line carries its level: "TAG: LEVEL: message" (LEVEL error, warning, info or
 * debug). Under systemd (JOURNAL_STREAM set: stderr is the journal) the line starts with
 * the sd-daemon priority prefix ("<3>" .. "<7>") too, so `journalctl -p warning` works.
 */
#ifndef SANDGATE_COMMON_LOG_H
#define SANDGATE_COMMON_LOG_H

#include <stdnoreturn.h>

#define LOG_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* The levels, most severe first; a line is written when its level <= the set one. */
enum log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

/* tag prefixes every line ("sandgated", "sandgate"); debug sets the level to debug,
 * otherwise it is info. */
void log_init(const char *tag, int debug);

/* The configured level (config log_level; --debug wins over it). */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

void log_warn(const char *fmt, ...) LOG_PRINTF(1, 2);   /* warning, appends strerror(errno) */
void log_warnx(const char *fmt, ...) LOG_PRINTF(1, 2);  /* warning */
void log_info(const char *fmt, ...) LOG_PRINTF(1, 2);
void log_debug(const char *fmt, ...) LOG_PRINTF(1, 2);
/* Logs at warning with strerror(-err) appended; for the -errno convention. */
void log_errno(int err, const char *fmt, ...) LOG_PRINTF(2, 3);
/* Logs at error (always written), then exit(1). */
noreturn void fatal(const char *fmt, ...) LOG_PRINTF(1, 2);
noreturn void fatalx(const char *fmt, ...) LOG_PRINTF(1, 2);

#endif
