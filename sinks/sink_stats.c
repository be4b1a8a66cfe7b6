/*
 * A sink's figures for /metrics and its stall watch (issue 18.5). A sink that keeps
 * failing (no successful step for stall_ms) or falls stall_bytes of journal behind is
 * stalled: STATE/sinks/NAME.stalled exists (retention then stops waiting for its cursor,
 * so the disk stays protected: what retention moves on is skipped by the sink, and the
 * sink.stalled line says from when) and sink.stalled is recorded once; sink.recovered
 * when it is back under both bounds and delivering.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/event.h"
#include "journal/journal_impl.h"
#include "sinks/sink_impl.h"

#define MEASURE_MS 1000   /* the backlog is a directory listing: at most once a second */

int sink_stats_init(struct sink *k, const char *state_dir)
{
	struct stat st;

	char path[sizeof(k->stalled_path)];

	if ((size_t)snprintf(path, sizeof(path), "%s/sinks/%s.stalled", state_dir, k->name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	if (pthread_mutex_init(&k->st_lock, NULL))
		return -ENOMEM;
	memcpy(k->stalled_path, path, sizeof(path));   /* set: the mutex exists (fini) */
	k->ok_ms = k->idle_ms = sink_now_ms();
	/* Stalled before a restart: stays so until it delivers again (no second event). */
	k->st.stalled = stat(k->stalled_path, &st) == 0;
	return 0;
}

void sink_stats_fini(struct sink *k)
{
	if (k->stalled_path[0])
		pthread_mutex_destroy(&k->st_lock);
}

void sink_get_stats(struct sink *k, struct sink_stats *out)
{
	pthread_mutex_lock(&k->st_lock);
	*out = k->st;
	pthread_mutex_unlock(&k->st_lock);
}

/* Journal bytes after the durable cursor: the rest of its segment and every later one. */
static int backlog(const struct sink *k, uint64_t *bytes)
{
	char (*names)[SEGMENT_NAME_LEN + 1] = NULL, path[8192];
	size_t n = 0;
	struct stat st;
	int ret = segment_list(k->journal_dir, &names, &n);

	*bytes = 0;
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++) {
		uint64_t first = strtoull(names[i], NULL, 10);

		if (first < k->committed.segment)
			continue;
		snprintf(path, sizeof(path), "%s/%s", k->journal_dir, names[i]);
		if (stat(path, &st) < 0)
			continue;   /* moved by retention meanwhile */
		*bytes += (uint64_t)st.st_size;
		if (first == k->committed.segment)
			*bytes -= k->committed.offset < (uint64_t)st.st_size
					  ? k->committed.offset : (uint64_t)st.st_size;
	}
	free(names);
	return 0;
}

static void record(struct sink *k, const char *type, const char *why)
{
	struct event *e = event_new(type, NULL, EVENT_SRC_SANDGATE);

	if (!e)
		return;
	event_str(e, "sink", k->name);
	event_str(e, "reason", why);
	event_uint(e, "resume_seq", k->committed.next_seq);
	event_uint(e, "backlog_bytes", k->st.backlog_bytes);
	event_uint(e, "failing_ms", k->st.failing_ms);
	event_uint(e, "failures", k->st.failures);
	if (why && k->err_detail[0])
		event_str(e, "error", k->err_detail);
	if (why)
		event_str(e, "retention", "no longer waits for this sink: lines it moves "
					  "out of the hot tier are not sent");
	(void)event_emit(e);   /* the journal's own loss accounting covers a failure */
}

/* Marks or unmarks the sink as stalled: the file retention looks for, then the event. */
static void set_stalled(struct sink *k, bool on, const char *why)
{
	int fd;

	if (on) {
		fd = open(k->stalled_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dprintf(fd, "%s\n", why);
			close(fd);
		}
	} else {
		(void)unlink(k->stalled_path);
	}
	pthread_mutex_lock(&k->st_lock);
	k->st.stalled = on;
	pthread_mutex_unlock(&k->st_lock);
	record(k, on ? "sink.stalled" : "sink.recovered", on ? why : NULL);
}

static const char *stall_reason(const struct sink *k, const struct sink_stats *s)
{
	if (k->s.stall_bytes && s->backlog_bytes >= k->s.stall_bytes)
		return "backlog_bytes";
	if (k->s.stall_ms && s->failing_ms >= k->s.stall_ms)
		return "failing_for";
	return NULL;
}

void sink_track(struct sink *k, int ret, size_t progressed)
{
	uint64_t now = sink_now_ms(), bytes;
	struct sink_stats s;
	const char *why;

	(void)progressed;
	if (ret == 0)
		k->ok_ms = now;
	if (k->idle)
		k->idle_ms = now;
	pthread_mutex_lock(&k->st_lock);
	k->st.committed_seq = k->committed.next_seq;
	k->st.lines_sent = k->lines_sent;
	k->st.failures = k->reconnects;
	k->st.failing_ms = now - k->ok_ms;
	k->st.behind_ms = now - k->idle_ms;
	s = k->st;
	pthread_mutex_unlock(&k->st_lock);
	if (now - k->measured_ms < MEASURE_MS && !k->idle)
		return;
	k->measured_ms = now;
	if (k->idle)
		bytes = 0;
	else if (backlog(k, &bytes))
		bytes = s.backlog_bytes;
	pthread_mutex_lock(&k->st_lock);
	s.backlog_bytes = k->st.backlog_bytes = bytes;
	pthread_mutex_unlock(&k->st_lock);
	why = stall_reason(k, &s);
	if (why && !s.stalled)
		set_stalled(k, true, why);
	else if (!why && s.stalled && ret == 0)
		set_stalled(k, false, NULL);
}
