/*
 * process.exec / process.exit / process.uid_change events from what the connector said
 * and what /proc still held. What is unknown is null; nothing is guessed.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sensors/process/proc_int.h"
#include "common/timeutil.h"
#include "journal/event.h"

static void set_time(struct event *e, uint64_t mono_ns)
{
	struct timespec wall;

	time_mono_to_real(mono_ns, &wall);
	event_set_time(e, &wall);
}

/* cmd (argv[0]) and args (argv[1..]); both null when nothing was read. */
static void put_argv(struct event *e, const struct exec_info *x)
{
	const char *arg;
	size_t off = 0, alen;

	if (!x->cmdline || x->cmdlen == 0) {
		event_null(e, "cmd");
		event_null(e, "args");
		return;
	}
	if (cmdline_next(x->cmdline, x->cmdlen, &off, &arg, &alen))
		event_strn(e, "cmd", arg, alen);
	event_array_begin(e, "args");
	while (cmdline_next(x->cmdline, x->cmdlen, &off, &arg, &alen))
		event_strn(e, NULL, arg, alen);
	event_array_end(e);
}

static void put_uint_or_null(struct event *e, const char *key, bool known, uint64_t v)
{
	if (known)
		event_uint(e, key, v);
	else
		event_null(e, key);
}

/*
 * What fd 0 or 1 was at exec: "pipe:[N]" (the pipe's inode, so both ends of a pipeline
 * can be paired), "socket", "tty", "file:/path", "other" (anon inodes...), or null when
 * it could not be read (closed, or the process was gone).
 */
static void put_fd(struct event *e, const char *key, bool known, const char *link)
{
	char buf[PATH_MAX + 8];

	if (!known) {
		event_null(e, key);
	} else if (strncmp(link, "pipe:[", 6) == 0) {
		event_str(e, key, link);
	} else if (strncmp(link, "socket:[", 8) == 0) {
		event_str(e, key, "socket");
	} else if (strncmp(link, "/dev/pts/", 9) == 0 || strncmp(link, "/dev/tty", 8) == 0 ||
		   strcmp(link, "/dev/console") == 0) {
		event_str(e, key, "tty");
	} else if (link[0] == '/') {
		snprintf(buf, sizeof(buf), "file:%s", link);
		event_str(e, key, buf);
	} else {
		event_str(e, key, "other");
	}
}

/*
 * program: the file that runs, keyed on what the caller cannot choose (exe; for the
 * dynamic loader the program it loads); exe_known_as: a well-known downloader, shell or
 * interpreter that file is, under whatever name (exeid.c); exe_checked: whether that
 * file could be read for it. Detection keys on these.
 */
static void put_program(struct event *e, pid_t pid, const struct exec_info *x)
{
	char path[PATH_MAX];
	const char *arg, *known;
	size_t alen;
	bool loader, checked;

	if (!x->has_exe) {
		event_null(e, "program");
		event_null(e, "exe_known_as");
		event_null(e, "exe_checked");
		return;
	}
	snprintf(path, sizeof(path), "%s", x->exe);
	known = exeid_exe(pid, x->has_exe_fd ? x->exe_fd : -1, x->exe, &loader, &checked);
	if (loader && x->cmdline &&
	    (arg = exeid_loaded(x->cmdline, x->cmdlen, &alen)) != NULL && alen < PATH_MAX / 2) {
		/* An absolute argument of a chroot'ed loader is under its root too. */
		if (arg[0] == '/' && x->root_len && x->root_len < PATH_MAX / 2)
			snprintf(path, sizeof(path), "%.*s%.*s", (int)x->root_len, x->exe,
				 (int)alen, arg);
		else if (arg[0] == '/' || !x->has_cwd)
			snprintf(path, sizeof(path), "%.*s", (int)alen, arg);
		else
			snprintf(path, sizeof(path), "%.*s/%.*s", PATH_MAX / 2 - 1, x->cwd,
				 (int)alen, arg);
		known = exeid_known_as(pid, path, false, &checked);
	}
	event_str(e, "program", path);
	event_str(e, "exe_known_as", known);
	/* false: the file could not be read (the program exited, its file gone, and it was
	 * not pinned): a null exe_known_as is then "not known", not "none of them" */
	event_bool(e, "exe_checked", checked);
}

int procemit_exec(const struct cn_event *ev, const struct ptab_ent *pe,
		  const struct exec_info *x)
{
	struct event *e = event_new("process.exec", pe->sid, EVENT_SRC_KERNEL);

	if (!e)
		return -ENOMEM;
	set_time(e, ev->ts_ns);
	event_int(e, "pid", ev->pid);
	if (x->has_stat && x->st.ppid > 0)
		event_int(e, "ppid", x->st.ppid);
	else if (pe->ppid > 0)
		event_int(e, "ppid", pe->ppid);
	else
		event_null(e, "ppid");
	/* An exec keeps the real uid (setuid() calls are reported and tracked); the
	 * effective one may change with a set-user-ID binary, so it is only as read. */
	put_uint_or_null(e, "uid", x->has_ids || pe->ids_known, x->has_ids ? x->uid : pe->uid);
	put_uint_or_null(e, "euid", x->has_ids, x->euid);
	event_str(e, "cwd", x->has_cwd ? x->cwd : NULL);
	event_str(e, "exe", x->has_exe ? x->exe : NULL);
	put_argv(e, x);
	event_bool(e, "argv_complete", x->argv_complete);
	event_bool(e, "args_truncated", x->argv_truncated);
	/* "proc": read from /proc/PID/cmdline after the exec, which the process (or a
	 * launcher racing us) can rewrite first: complete as read, not proven unforged. */
	event_str(e, "args_source", x->cmdline ? (x->args_kernel ? "kernel" : "proc") : NULL);
	event_str(e, "comm", x->has_stat ? x->st.comm : NULL);
	put_program(e, ev->pid, x);
	put_fd(e, "stdin", x->has_fd0, x->fd0);
	put_fd(e, "stdout", x->has_fd1, x->fd1);
	return event_emit(e);
}

int procemit_exit(const struct cn_event *ev, const struct ptab_ent *pe)
{
	struct event *e = event_new("process.exit", pe->sid, EVENT_SRC_KERNEL);
	int code, sig;

	if (!e)
		return -ENOMEM;
	set_time(e, ev->ts_ns);
	cn_exit_decode(ev->exit_code, &code, &sig);
	event_int(e, "pid", ev->pid);
	if (pe->ppid > 0)
		event_int(e, "ppid", pe->ppid);
	else
		event_null(e, "ppid");
	if (code >= 0)
		event_int(e, "exit_code", code);
	else
		event_null(e, "exit_code");
	if (sig > 0)
		event_int(e, "signal", sig);
	else
		event_null(e, "signal");
	event_bool(e, "core_dumped", sig > 0 && (ev->exit_code & 0x80));
	if (pe->start_ns && ev->ts_ns >= pe->start_ns)
		event_uint(e, "duration_us", (ev->ts_ns - pe->start_ns) / 1000);
	else
		event_null(e, "duration_us");
	return event_emit(e);
}

int procemit_uid(const struct cn_event *ev, const struct ptab_ent *pe)
{
	struct event *e = event_new("process.uid_change", pe->sid, EVENT_SRC_KERNEL);

	if (!e)
		return -ENOMEM;
	set_time(e, ev->ts_ns);
	event_int(e, "pid", ev->pid);
	event_uint(e, "uid", ev->ruid);
	event_uint(e, "euid", ev->euid);
	return event_emit(e);
}
