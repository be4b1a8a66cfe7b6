/*
 * sandgate run --session ID [--uid UID] [--cwd DIR] [--privileged] -- CMD [ARG...]
 *
 * The CLI forks. The child opens one connection to the daemon and asks session.contain
 * for the session's holder; it joins the holder's mount, cgroup, IPC and PID namespaces
 * and gives up the capabilities a session may not hold (contain/contain.h), then asks
 * session.attach on the same connection to move it into the session's cgroups: the
 * daemon checks the containment from /proc and only ever moves the caller itself, by
 * its SO_PEERCRED pid. From then on the child is inside the session (its network
 * attribution, its limits, and no access to the control socket); it forks CMD into the
 * session's PID namespace, which changes directory and user and execs CMD with the
 * terminal's stdin/stdout/stderr untouched, so interactive commands work, and leaves:
 * the parent, a child subreaper, inherits CMD. The parent stays outside, waits, reports
 * the exit status (session.report_exit) for the
 * session.terminate event, and exits with CMD's status (128+N when killed by signal N;
 * 125 when sandgate itself could not start CMD). --privileged (or a session created so)
 * skips containment: CMD runs in the session's cgroups only, with every capability.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli_util.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "contain/contain.h"

#define RUN_FAILED 125

struct ropts {
	const char *session, *cwd, *user, *control, *actor;
	bool privileged;
};

static char start_dir[4096];   /* our cwd, by path: joining a mount namespace resets it */

static void usage(FILE *f)
{
	fprintf(f, "usage: sandgate run --session ID [--uid UID|USER] [--cwd DIR] [--actor NAME]\n"
		   "           [--privileged] [--control PATH] -- CMD [ARG...]\n"
		   "Runs CMD inside the session's cgroup (the session must be running), as UID,\n"
		   "in DIR (default: the session's workdir, else the current directory), with\n"
		   "stdin/stdout/stderr passed through. Exits with CMD's status, 128+N if a\n"
		   "signal N killed it, 125 if CMD could not be started.\n"
		   "CMD is contained: the session's PID, mount, cgroup and IPC namespaces,\n"
		   "no capability that reaches past them, no_new_privs, no real-time priority\n"
		   "(docs/threat-model.md). --privileged runs it uncontained (recorded).\n");
}

static int parse(int argc, char **argv, struct ropts *o)
{
	static const struct option longopts[] = {
		{ "session", required_argument, NULL, 's' }, { "uid", required_argument, NULL, 'u' },
		{ "cwd", required_argument, NULL, 'c' }, { "actor", required_argument, NULL, 'a' },
		{ "control", required_argument, NULL, 'C' }, { "help", no_argument, NULL, 'h' },
		{ "privileged", no_argument, NULL, 'P' }, { NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	/* '+': stop at CMD, so CMD's own options are left alone. */
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->session = optarg; break;
		case 'u': o->user = optarg; break;
		case 'c': o->cwd = optarg; break;
		case 'a': o->actor = optarg; break;
		case 'C': o->control = optarg; break;
		case 'P': o->privileged = true; break;
		case 'h': usage(stdout); return 1;
		default: return 2;
		}
	}
	if (!o->session || optind >= argc) {
		fprintf(stderr, "sandgate run: --session and a command are required\n");
		return 2;
	}
	return 0;
}

/* Drops to user (a name or a number): groups first, while we still may. */
static int become(const char *user)
{
	struct passwd *pw = getpwnam(user);
	int64_t uid;
	gid_t gid;

	if (!pw && cli_parse_uint(user, &uid) == 0)
		pw = getpwuid((uid_t)uid);
	if (!pw && cli_parse_uint(user, &uid) < 0)
		return -EINVAL;
	gid = pw ? pw->pw_gid : (gid_t)uid;
	if ((pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) < 0 || setgid(gid) < 0 ||
	    setuid(pw ? pw->pw_uid : (uid_t)uid) < 0)
		return -errno;
	return 0;
}

static const char *attach(int fd, const struct ropts *o, const char *argv0, char *err,
			  size_t len)
{
	static char workdir[4096];
	json_t *args = json_pack("{s:s,s:s,s:b}", "id", o->session, "argv0", argv0,
				 "privileged", o->privileged), *res = NULL;
	const char *w;
	int ret;

	if (!args) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	ret = client_call_fd(fd, "session.attach", args, o->actor, &res, err, len);
	json_decref(args);
	if (ret)
		return NULL;
	w = json_string_value(json_object_get(res, "workdir"));
	snprintf(workdir, sizeof(workdir), "%s", w ? w : "");
	json_decref(res);
	return workdir;
}

/* Joins the session's holder and drops what a session may not hold. *privileged is set
 * when the session runs uncontained. 0 or -errno with err. */
static int contain(int fd, const struct ropts *o, bool *privileged, char *err, size_t len)
{
	json_t *args = json_pack("{s:s}", "id", o->session), *res = NULL;
	json_int_t holder, start, keep;
	struct stat net;
	int ret = 0;

	*privileged = o->privileged;
	if (o->privileged)
		goto out;
	ret = args ? client_call_fd(fd, "session.contain", args, o->actor, &res, err, len)
		   : -ENOMEM;
	if (ret)
		goto out;
	*privileged = json_is_true(json_object_get(res, "privileged"));
	holder = json_integer_value(json_object_get(res, "holder_pid"));
	start = json_integer_value(json_object_get(res, "holder_start"));
	keep = json_integer_value(json_object_get(res, "keep"));
	if (*privileged)
		goto out;
	if (!getcwd(start_dir, sizeof(start_dir)))
		start_dir[0] = '\0';
	if (stat("/proc/self/ns/net", &net) < 0)
		net.st_ino = 0;
	ret = contain_enter((pid_t)holder, (uint64_t)start);
	if (ret == -EPERM && geteuid() != 0)
		snprintf(err, len, "cannot join the session's namespaces: a contained run is "
			 "started by root (--uid drops to another user), or run with --privileged");
	else if (ret)
		snprintf(err, len, "cannot join the session's namespaces: %s", strerror(-ret));
	if (ret == 0 && net.st_ino && (ret = contain_netns_etc(net.st_ino, net.st_dev)) < 0)
		snprintf(err, len, "cannot bind /etc/netns files: %s", strerror(-ret));
	if (ret == 0 && (ret = contain_drop_self((uint64_t)keep)) < 0)
		snprintf(err, len, "cannot drop privileges: %s", strerror(-ret));
out:
	json_decref(args);
	json_decref(res);
	return o->privileged ? 0 : ret;
}

static void __attribute__((noreturn)) exec_cmd(const struct ropts *o, char **cmd,
					       const char *workdir)
{
	const char *dir = o->cwd ? o->cwd : *workdir ? workdir : *start_dir ? start_dir : NULL;
	int ret;

	if (dir && chdir(dir) < 0) {
		fprintf(stderr, "sandgate run: cannot enter %s: %s\n", dir, strerror(errno));
		_exit(RUN_FAILED);
	}
	if (o->user && (ret = become(o->user)) < 0) {
		fprintf(stderr, "sandgate run: cannot become %s: %s\n", o->user,
			ret == -EINVAL ? "no such user" : strerror(-ret));
		_exit(RUN_FAILED);
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "sandgate run: %s: %s\n", cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* The contained child stays outside the PID namespace (setns moves only its children):
 * it forks CMD in, tells the parent CMD's pid and leaves; the parent, a child subreaper,
 * inherits CMD and waits for it. The session's cgroup then holds CMD alone, as before. */
static void __attribute__((noreturn)) run_inside(const struct ropts *o, char **cmd,
						 const char *workdir, int okfd)
{
	pid_t pid = fork();

	if (pid < 0) {
		fprintf(stderr, "sandgate run: fork: %s\n", strerror(errno));
		_exit(RUN_FAILED);
	}
	if (pid == 0) {
		close(okfd);
		exec_cmd(o, cmd, workdir);
	}
	if (write(okfd, &pid, sizeof(pid)) != (ssize_t)sizeof(pid))
		kill(pid, SIGKILL);
	_exit(0);
}

static void child(const struct ropts *o, char **cmd, int okfd)
{
	const char *workdir = NULL;
	bool privileged = false;
	char err[1024];
	pid_t mypid;
	int fd;

	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	fd = client_open(client_socket_path(o->control), err, sizeof(err));
	if (fd >= 0 && contain(fd, o, &privileged, err, sizeof(err)) == 0)
		workdir = attach(fd, o, cmd[0], err, sizeof(err));
	if (!workdir) {
		fprintf(stderr, "sandgate run: %s\n", err);
		_exit(RUN_FAILED);
	}
	close(fd);
	if (!privileged)
		run_inside(o, cmd, workdir, okfd);
	/* Tell the parent we are in the session (and CMD is us), so it reports our status. */
	mypid = getpid();
	if (write(okfd, &mypid, sizeof(mypid)) != (ssize_t)sizeof(mypid))
		_exit(RUN_FAILED);
	close(okfd);
	exec_cmd(o, cmd, workdir);
}

static void report(const struct ropts *o, pid_t pid, int status)
{
	json_t *args = json_pack("{s:s,s:i}", "id", o->session, "pid", (int)pid), *res = NULL;
	char err[256];

	if (!args)
		return;
	if (WIFEXITED(status))
		json_object_set_new(args, "exit_code", json_integer(WEXITSTATUS(status)));
	else
		json_object_set_new(args, "signal", json_integer(WTERMSIG(status)));
	/* Best effort: the session may already have been cleaned up. */
	if (client_call(client_socket_path(o->control), "session.report_exit", args, o->actor,
			&res, err, sizeof(err)) == 0)
		json_decref(res);
	json_decref(args);
}

static int wait_child(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct ropts o = { 0 };
	int ret = parse(argc, argv, &o), status = 0, okp[2];
	pid_t pid, cmd = 0;

	if (ret)
		return ret == 1 ? 0 : 2;
	if (pipe2(okp, O_CLOEXEC) < 0) {
		fprintf(stderr, "sandgate run: pipe: %s\n", strerror(errno));
		return RUN_FAILED;
	}
	/* Like system(): the terminal's ^C is for CMD; we wait for it to act on it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	/* A contained CMD is our grandchild: it becomes our child when the child leaves. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		child(&o, argv + optind, okp[1]);
	close(okp[1]);
	if (pid < 0) {
		fprintf(stderr, "sandgate run: fork: %s\n", strerror(errno));
		return RUN_FAILED;
	}
	if (read(okp[0], &cmd, sizeof(cmd)) != (ssize_t)sizeof(cmd))
		cmd = 0;
	close(okp[0]);
	if (wait_child(pid, &status) < 0)
		return RUN_FAILED;
	/* The child left CMD to us: its status is CMD's. */
	if (cmd > 0 && cmd != pid && wait_child(cmd, &status) < 0)
		return RUN_FAILED;
	if (cmd > 0)
		report(&o, cmd, status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
