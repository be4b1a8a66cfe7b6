#include "common/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *log_tag = "sandgate";
static int log_debug_on;

void log_init(const char *tag, int debug)
{
	log_tag = tag;
	log_debug_on = debug;
}

static void log_vline(const char *level, const char *err, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err)
		fprintf(stderr, "%s: %s%s: %s\n", log_tag, level, msg, err);
	else
		fprintf(stderr, "%s: %s%s\n", log_tag, level, msg);
}

#define LOG_BODY(level, err)                   \
	do {                                   \
		int saved = errno;             \
		va_list ap;                    \
		va_start(ap, fmt);             \
		log_vline(level, err, fmt, ap); \
		va_end(ap);                    \
		errno = saved;                 \
	} while (0)

void log_warn(const char *fmt, ...) { LOG_BODY("", strerror(errno)); }
void log_warnx(const char *fmt, ...) { LOG_BODY("", NULL); }
void log_info(const char *fmt, ...) { LOG_BODY("", NULL); }

void log_debug(const char *fmt, ...)
{
	if (log_debug_on)
		LOG_BODY("debug: ", NULL);
}

void log_errno(int err, const char *fmt, ...)
{
	LOG_BODY("", strerror(err < 0 ? -err : err));
}

void fatal(const char *fmt, ...)
{
	LOG_BODY("fatal: ", strerror(errno));
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	LOG_BODY("fatal: ", NULL);
	exit(1);
}
