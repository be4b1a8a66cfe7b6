/*
 * Starting and stopping the sensors (sensors/process/, sensors/kaudit/, sensors/file/) and
 * the package tracker (packages/) around the pid table they share; the module's face
 * (audit/audit.h) over them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "audit/audit.h"
#include "packages/pkgtrack.h"
#include "sensors/file/file.h"
#include "sensors/file/mountwatch.h"
#include "sensors/kaudit/kaudit.h"
#include "sensors/process/execpend.h"
#include "sensors/process/process.h"
#include "sensors/shared/procparse.h"
#include "sensors/shared/proctab.h"
#include "sensors/shared/sensor.h"
#include "sensors/kaudit/auditsrc_int.h"
#include "common/log.h"
#include "common/timeutil.h"

static void add_off(char *off, size_t len, const char *what)
{
	size_t n = strlen(off);

	snprintf(off + n, len - n, "%s%s", n ? "," : "", what);
}

static void audit_free_shared(struct audit *a)
{
	pkgtrack_free(a->pk);
	mntwatch_free(a->mw);
	execpend_free(a->pend);
	pthread_mutex_destroy(&a->sync_mu);
	pthread_cond_destroy(&a->sync_cv);
	close(a->poke_fd);
	ptab_free(a->tab);
	free(a);
}

/*
 * The file sensor's hook (struct audit's exec_release): pid's execs still held for their
 * audit record are claimed by it within EXECPEND_RELEASE_WAIT_NS, or emitted now by the
 * connector's account, before the file sensor writes a line of what pid did. Free when
 * nothing of pid is held.
 */
static void release_held_execs(struct audit *a, pid_t pid)
{
	struct execpend_item *l = NULL;

	if (!execpend_may_hold(a->pend, pid))
		return;
	execpend_release_pid(a->pend, pid, EXECPEND_RELEASE_WAIT_NS, time_mono_ns(), &l);
	as_emit_items(l);
}

int audit_start(struct audit **out, const struct audit_settings *s, char *off, size_t offlen)
{
	struct audit *a = calloc(1, sizeof(*a));
	int ret, rp = -ENOENT, rf = -ENOENT;

	if (offlen)
		off[0] = '\0';
	if (!a)
		return -ENOMEM;
	ret = ptab_new(&a->tab);
	if (ret == 0 && (a->poke_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		ret = -errno;
	if (ret) {
		ptab_free(a->tab);
		free(a);
		return ret;
	}
	pthread_mutex_init(&a->sync_mu, NULL);
	pthread_cond_init(&a->sync_cv, NULL);
	snprintf(a->prefix, sizeof(a->prefix), "%s", s->session_prefix);
	if (s->proc)
		exeid_init();   /* the well-known programs, hashed once before any exec */
	a->self = getpid();
	a->proc_rcvbuf = s->proc_rcvbuf && s->proc_rcvbuf <= (1u << 30) ? (int)s->proc_rcvbuf
								       : 32 << 20;
	/* Mounts are polled by the fanotify thread from what the connector notes. */
	if (s->proc && s->files && mntwatch_new(&a->mw) != 0)
		a->mw = NULL;
	/* Installs are seen at exec and exit: the tracker rides on the connector. */
	if (s->proc && s->packages && pkgtrack_new(&a->pk, a->tab, s->package_alerts) != 0) {
		a->pk = NULL;
		add_off(off, offlen, "packages");
	}
	/* The table the connector holds execs in for the audit source: made before the
	 * connector runs, taken into use (activated) by the source once it runs. */
	if (s->proc && s->exec_audit && execpend_new(&a->pend) != 0)
		a->pend = NULL;
	if (a->pend)
		a->exec_release = release_held_execs;
	if (s->proc && (rp = procconn_start(&a->pc, a)) != 0)
		add_off(off, offlen, "proc");
	if (a->pc && s->exec_audit) {
		/* Set first: an exec in between is reported twice rather than not at all. */
		atomic_store(&a->exec_audit, true);
		ret = auditsrc_start(&a->as, a);
		if (ret) {
			char why[160];

			atomic_store(&a->exec_audit, false);
			log_errno(ret, "audit: the audit exec source could not start (execs from "
				  "the proc connector)");
			add_off(off, offlen, "exec_audit");
			snprintf(why, sizeof(why), "the audit exec source could not start (%s)",
				 strerror(-ret));
			audit_emit_exec_source("proc_connector", why);
		} else {
			audit_emit_exec_source("audit", "arguments from the kernel's EXECVE records");
		}
	}
	if (s->files && (rf = fanmon_start(&a->fm, a, s)) != 0)
		add_off(off, offlen, "files");
	if (!a->pc && !a->fm) {
		audit_free_shared(a);
		return rp != -ENOENT ? rp : rf;
	}
	*out = a;
	return 0;
}

int audit_seed(struct audit *a, pid_t pid, const char *sid)
{
	struct ptab_ent pe = { .pid = pid, .ppid = -1 };
	struct proc_stat_info st;
	char path[32], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || proc_stat_parse(buf, (size_t)n, &st) != 0)
		return -ESRCH;
	pe.ppid = st.ppid;
	pe.start_ns = ticks_to_mono_ns(st.start_ticks);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
	if (fd >= 0)
		close(fd);
	pe.ids_known = n > 0 && proc_status_uids(buf, (size_t)n, &pe.uid, &pe.euid) == 0;
	snprintf(pe.sid, sizeof(pe.sid), "%s", sid);
	return ptab_put(a->tab, &pe);
}

void audit_stop(struct audit *a)
{
	if (!a)
		return;
	/* Files first: its late events still find exited processes in the table. */
	fanmon_stop(a->fm);
	auditsrc_stop(a->as);   /* waits on the connector's pid table: stopped before it */
	procconn_stop(a->pc);
	audit_free_shared(a);   /* the package worker finishes the runs already over */
}

int audit_session_policy(struct audit *a, const char *sid, const char *const *approved,
			 size_t n, bool block)
{
	return a && a->pk ? pkgtrack_policy(a->pk, sid, approved, n, block) : 0;
}

void audit_pkg_enforced(struct audit *a, bool on)
{
	if (a && a->pk)
		pkgtrack_enforced(a->pk, on);
}

void audit_pkg_net_seen(struct audit *a, const char *sid, pid_t pid,
			const char *const *names, size_t n)
{
	if (a && a->pk)
		pkgtrack_net_seen(a->pk, sid, pid, names, n);
}

bool audit_pkg_blocking(struct audit *a, const char *sid)
{
	return a && a->pk && pkgtrack_blocking(a->pk, sid);
}

int audit_pkg_hosts(struct audit *a, const char *sid, pid_t pid, char *out, size_t stride,
		    size_t max)
{
	return a && a->pk ? pkgtrack_hosts(a->pk, sid, pid, out, stride, max) : -ENOENT;
}

void audit_session_workdir(struct audit *a, const char *sid, const char *path)
{
	if (a)
		fanmon_workdir(a->fm, sid, path);
}

const char *audit_exec_probe(bool want_audit, char *why, size_t len)
{
	return auditsrc_probe(want_audit, why, len);
}
