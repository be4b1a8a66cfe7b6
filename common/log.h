/*
 * One logging vocabulary for the daemon and the CLI (OpenBSD's log.h shape). Internal
 * functions return -errno and never log; the loop callback, the dispatcher or main()
 * logs once, with context. errno is preserved across every call.
 */
#ifndef SANDGATE_COMMON_LOG_H
#define SANDGATE_COMMON_LOG_H

#include <stdnoreturn.h>

#define LOG_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* tag prefixes every line ("sandgated", "sandgate"); debug enables log_debug. */
void log_init(const char *tag, int debug);

void log_warn(const char *fmt, ...) LOG_PRINTF(1, 2);   /* appends strerror(errno) */
void log_warnx(const char *fmt, ...) LOG_PRINTF(1, 2);
void log_info(const char *fmt, ...) LOG_PRINTF(1, 2);
void log_debug(const char *fmt, ...) LOG_PRINTF(1, 2);
/* Logs with strerror(-err) appended; for the -errno convention. */
void log_errno(int err, const char *fmt, ...) LOG_PRINTF(2, 3);
noreturn void fatal(const char *fmt, ...) LOG_PRINTF(1, 2);
noreturn void fatalx(const char *fmt, ...) LOG_PRINTF(1, 2);

#endif
