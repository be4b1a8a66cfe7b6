#include "common/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *log_tag = "sandgate";
static enum log_level log_level = LOG_LEVEL_INFO;
static int log_forced_debug;

static const char *const level_name[] = { "error", "warning", "info", "debug" };
/* sd-daemon(3) priorities: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG. */
static const int level_prio[] = { 3, 4, 6, 7 };

void log_init(const char *tag, int debug)
{
	log_tag = tag;
	log_forced_debug = debug;
	log_level = debug ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO;
}

void log_set_level(enum log_level level)
{
	if (level > LOG_LEVEL_DEBUG)
		level = LOG_LEVEL_DEBUG;
	log_level = log_forced_debug ? LOG_LEVEL_DEBUG : level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

static void log_vline(enum log_level lvl, const char *err, const char *fmt, va_list ap)
{
	char msg[1024], prio[8] = "";

	if (lvl > log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* stderr is the journal under systemd: give it the priority too. */
	if (getenv("JOURNAL_STREAM"))
		snprintf(prio, sizeof(prio), "<%d>", level_prio[lvl]);
	if (err)
		fprintf(stderr, "%s%s: %s: %s: %s\n", prio, log_tag, level_name[lvl], msg, err);
	else
		fprintf(stderr, "%s%s: %s: %s\n", prio, log_tag, level_name[lvl], msg);
}

#define LOG_BODY(lvl, err)                   \
	do {                                 \
		int saved = errno;           \
		va_list ap;                  \
		va_start(ap, fmt);           \
		log_vline(lvl, err, fmt, ap); \
		va_end(ap);                  \
		errno = saved;               \
	} while (0)

void log_warn(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_WARN, strerror(errno)); }
void log_warnx(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_WARN, NULL); }
void log_info(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_INFO, NULL); }
void log_debug(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_DEBUG, NULL); }

void log_errno(int err, const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_WARN, strerror(err < 0 ? -err : err));
}

void fatal(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_ERROR, strerror(errno));
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_ERROR, NULL);
	exit(1);
}
