/*
 * What the previous run left at the end of the journal, read once at open (after a torn
 * tail was cut, before this run writes): its last seq and time, the time of its last
 * heartbeat or checkpoint (the journal's own signs of life), and whether it stopped
 * cleanly. A clean stop writes `daemon.stop` and then only the final checkpoint, so the
 * last event that is not the journal's own (journal.*) is `daemon.stop`; anything else,
 * including a kill -9 or a torn tail, is unclean. Only the last PREV_TAIL bytes of the
 * last segment are read: a clean stop's lines are always its last few.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal_impl.h"
#include "journal/envelope.h"

#define PREV_TAIL (1u << 20)
#define TS_LEN 27

static bool event_is(const struct line_envelope *env, const char *name)
{
	return env->event_len == strlen(name) && memcmp(env->event, name, env->event_len) == 0;
}

static bool journal_own(const struct line_envelope *env)
{
	return env->event_len > 8 && memcmp(env->event, "journal.", 8) == 0;
}

/* One complete line of the previous run. */
static void prev_line(struct journal_prev *p, const char *line, size_t len)
{
	struct line_envelope env;

	if (line_envelope_parse_strict(line, len, &env) < 0)
		return;
	p->exists = true;
	p->last_seq = env.seq;
	memcpy(p->last_ts, line + 7, TS_LEN);   /* {"ts":" is 7 bytes */
	p->last_ts[TS_LEN] = '\0';
	if (event_is(&env, "journal.heartbeat") || event_is(&env, "journal.checkpoint") ||
	    event_is(&env, "journal.open") || event_is(&env, "journal.segment"))
		memcpy(p->last_heartbeat, p->last_ts, TS_LEN + 1);
	if (!journal_own(&env))
		p->clean = event_is(&env, "daemon.stop");
	else if (event_is(&env, "journal.open") || event_is(&env, "journal.recovery"))
		p->clean = false;   /* a start with no stop after it */
}

static void prev_scan(struct journal_prev *p, char *buf, size_t len, bool from_start)
{
	char *s = buf, *end = buf + len, *nl;

	if (!from_start) {   /* the window starts mid-line: skip to the next one */
		nl = memchr(s, '\n', len);
		s = nl ? nl + 1 : end;
	}
	while (s < end && (nl = memchr(s, '\n', (size_t)(end - s)))) {
		prev_line(p, s, (size_t)(nl - s));
		s = nl + 1;
	}
}

static int prev_read(const char *path, struct journal_prev *p)
{
	struct stat sb;
	size_t len;
	off_t off;
	char *buf = NULL;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0) {
		ret = -errno;
		goto out;
	}
	off = sb.st_size > (off_t)PREV_TAIL ? sb.st_size - (off_t)PREV_TAIL : 0;
	len = (size_t)(sb.st_size - off);
	buf = malloc(len + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	if (pread(fd, buf, len, off) != (ssize_t)len) {
		ret = -EIO;
		goto out;
	}
	prev_scan(p, buf, len, off == 0);
out:
	free(buf);
	close(fd);
	return ret;
}

int journal_prev_read(struct journal *j)
{
	char (*names)[SEGMENT_NAME_LEN + 1] = NULL;
	char path[JOURNAL_PATH_MAX + SEGMENT_NAME_LEN + 2];
	size_t n = 0;
	int ret;

	memset(&j->prev, 0, sizeof(j->prev));
	ret = segment_list(j->dir, &names, &n);
	if (ret == 0 && n > 0) {
		snprintf(path, sizeof(path), "%s/%s", j->dir, names[n - 1]);
		ret = prev_read(path, &j->prev);
	}
	free(names);
	/* A torn tail was cut at this open: the previous run did not stop cleanly. */
	if (j->open_recovery_cut)
		j->prev.clean = false;
	return ret;
}

void journal_previous_run(const struct journal *j, struct journal_prev *out)
{
	*out = j->prev;
}
