/*
 * Session escape (issue 15): a process whose fork-tree ancestry lies in a session but
 * that runs outside that session's cgroup: moved out (`echo $$ > X/cgroup.procs` through
 * a cgroup2 mount of its own), or into another session's cgroup. The proc connector
 * reports forks, not cgroup moves, so the table of session processes the fork tree built
 * (sensors/shared/proctab.c) is checked against /proc/PID/cgroup once a second.
 *
 * The ancestry wins: a process keeps the session its fork tree gives it wherever its
 * cgroup is now. After a restart the table is seeded from the session cgroups, so a
 * process that had moved into another session's cgroup is seeded as that session's; the
 * pass first re-attributes every entry to the session of its top-most ancestor in the
 * table (a moved process whose parent is still alive in its first session), then reports.
 * Each escape is reported once per process: `session.escape` with the pid and both
 * cgroups; the built-in rule `session-escape` raises the critical alert.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "sensors/process/process.h"
#include "sensors/shared/procparse.h"
#include "sensors/shared/proctab.h"
#include "sensors/shared/sensor.h"
#include "journal/event.h"

#define ESC_SEEN 1024            /* escapes remembered (a ring): reported once each */
#define ESC_CHAIN_MAX 64         /* ancestors followed */
#define ESC_START_SLACK_NS 50000000ull   /* fork event vs /proc start time (ticks) */

struct audit_escape {
	struct { pid_t pid; uint64_t start_ns; } seen[ESC_SEEN];
	size_t next;
	struct ptab_ent *snap;       /* PTAB_CAP entries */
	uint64_t reported;
};

int audit_escape_new(struct audit_escape **out)
{
	struct audit_escape *e = calloc(1, sizeof(*e));

	if (e)
		e->snap = calloc(PTAB_CAP, sizeof(*e->snap));
	if (!e || !e->snap) {
		free(e);
		return -ENOMEM;
	}
	*out = e;
	return 0;
}

void audit_escape_free(struct audit_escape *e)
{
	if (!e)
		return;
	free(e->snap);
	free(e);
}

static bool seen(struct audit_escape *e, const struct ptab_ent *pe)
{
	for (size_t i = 0; i < ESC_SEEN; i++)
		if (e->seen[i].pid == pe->pid && e->seen[i].start_ns == pe->start_ns)
			return true;
	e->seen[e->next].pid = pe->pid;
	e->seen[e->next].start_ns = pe->start_ns;
	e->next = (e->next + 1) % ESC_SEEN;
	return false;
}

/* The session of pe's top-most ancestor the table knows ("" when pe is its own root). */
static void ancestry_sid(struct audit *a, const struct ptab_ent *pe, char *sid, size_t len)
{
	struct ptab_ent cur = *pe, up;

	sid[0] = '\0';
	for (int i = 0; i < ESC_CHAIN_MAX && cur.ppid > 0 && cur.ppid != cur.pid; i++) {
		if (!ptab_get(a->tab, cur.ppid, false, &up) || up.sid[0] == '\0')
			break;
		snprintf(sid, len, "%s", up.sid);
		cur = up;
	}
}

/* file of the /proc/PID directory dir into buf (NUL-terminated). 0 or -errno. */
static int read_in(int dir, const char *file, char *buf, size_t len, size_t *got)
{
	int fd = openat(dir, file, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	*got = (size_t)n;
	return 0;
}

static bool same_process(const struct ptab_ent *pe, uint64_t proc_start)
{
	uint64_t d = pe->start_ns > proc_start ? pe->start_ns - proc_start
					       : proc_start - pe->start_ns;

	return d <= ESC_START_SLACK_NS;
}

static void emit(struct audit *a, const struct ptab_ent *pe, const char *now_sid,
		 const char *cg, const char *seeded_as)
{
	struct event *ev = event_new("session.escape", pe->sid, EVENT_SRC_KERNEL);
	char want[512];

	if (!ev)
		return;
	snprintf(want, sizeof(want), "%s/%s", a->prefix, pe->sid);
	event_int(ev, "pid", pe->pid);
	event_int(ev, "ppid", pe->ppid);
	event_str(ev, "session_cgroup", want);
	event_str(ev, "cgroup", cg);
	event_str(ev, "moved_to_session", now_sid[0] ? now_sid : NULL);
	event_str(ev, "seeded_as", seeded_as);
	event_str(ev, "attributed_to", pe->sid);
	(void)event_emit(ev);
}

/* One live entry: re-attribute by ancestry, then compare with its cgroup now. */
static bool check_one(struct audit *a, struct audit_escape *e, struct ptab_ent *pe)
{
	char anc[SESSION_ID_MAX + 1], now_sid[SESSION_ID_MAX + 1], cg[4096], buf[4096];
	char seeded[SESSION_ID_MAX + 1];
	const char *seeded_as = NULL;
	struct proc_stat_info st;
	size_t got = 0;
	int dir;

	ancestry_sid(a, pe, anc, sizeof(anc));
	if (anc[0] && strcmp(anc, pe->sid) != 0 && ptab_set_sid(a->tab, pe->pid, pe->start_ns, anc)) {
		snprintf(seeded, sizeof(seeded), "%s", pe->sid);
		seeded_as = seeded[0] ? seeded : NULL;   /* the ancestry wins */
		snprintf(pe->sid, sizeof(pe->sid), "%s", anc);
	}
	snprintf(buf, sizeof(buf), "/proc/%d", (int)pe->pid);
	dir = open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return false;
	got = 0;
	if (read_in(dir, "stat", buf, sizeof(buf), &got) != 0 ||
	    proc_stat_parse(buf, got, &st) != 0 ||
	    !same_process(pe, ticks_to_mono_ns(st.start_ticks)) ||
	    read_in(dir, "cgroup", buf, sizeof(buf), &got) != 0 ||
	    proc_cgroup_v2(buf, got, cg, sizeof(cg)) != 0) {
		close(dir);
		return false;
	}
	close(dir);
	if (session_id_from_cgpath(cg, strlen(cg), a->prefix, now_sid, sizeof(now_sid)) < 0)
		now_sid[0] = '\0';
	if (strcmp(now_sid, pe->sid) == 0 || seen(e, pe))
		return false;
	emit(a, pe, now_sid, cg, seeded_as);
	return true;
}

size_t audit_escape_scan(struct audit *a, struct audit_escape *e)
{
	size_t n, found = 0;

	if (!a || !a->tab || !e)
		return 0;
	n = ptab_live(a->tab, e->snap, PTAB_CAP);
	for (size_t i = 0; i < n; i++)
		if (e->snap[i].sid[0] && e->snap[i].pid != a->self && check_one(a, e, &e->snap[i]))
			found++;
	e->reported += found;
	return found;
}
