/*
 * sandgate run --session ID [--uid UID] [--cwd DIR] -- CMD [ARG...]
 *
 * The CLI forks. The child asks the daemon (session.attach) to move it into the
 * session's cgroups: the daemon only ever moves the caller itself, by its SO_PEERCRED
 * pid. From then on the child is inside the session (its network attribution, its
 * limits, and no access to the control socket); it changes directory and user and
 * execs CMD with the terminal's stdin/stdout/stderr untouched, so interactive commands
 * work. The parent stays outside, waits, reports the exit status
 * (session.report_exit) for the session.terminate event, and exits with CMD's status
 * (128+N when killed by signal N; 125 when sandgate itself could not start CMD).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli_util.h"
#include "cli/client.h"
#include "cli/commands.h"

#define RUN_FAILED 125

struct ropts {
	const char *session, *cwd, *user, *control, *actor;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: sandgate run --session ID [--uid UID|USER] [--cwd DIR] [--actor NAME]\n"
		   "           [--control PATH] -- CMD [ARG...]\n"
		   "Runs CMD inside the session's cgroup (the session must be running), as UID,\n"
		   "in DIR (default: the session's workdir, else the current directory), with\n"
		   "stdin/stdout/stderr passed through. Exits with CMD's status, 128+N if a\n"
		   "signal N killed it, 125 if CMD could not be started.\n");
}

static int parse(int argc, char **argv, struct ropts *o)
{
	static const struct option longopts[] = {
		{ "session", required_argument, NULL, 's' }, { "uid", required_argument, NULL, 'u' },
		{ "cwd", required_argument, NULL, 'c' }, { "actor", required_argument, NULL, 'a' },
		{ "control", required_argument, NULL, 'C' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
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

static const char *attach(const struct ropts *o, const char *argv0, char *err, size_t len)
{
	static char workdir[4096];
	json_t *args = json_pack("{s:s,s:s}", "id", o->session, "argv0", argv0), *res = NULL;
	const char *w;
	int ret;

	if (!args) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	ret = client_call(client_socket_path(o->control), "session.attach", args, o->actor,
			  &res, err, len);
	json_decref(args);
	if (ret)
		return NULL;
	w = json_string_value(json_object_get(res, "workdir"));
	snprintf(workdir, sizeof(workdir), "%s", w ? w : "");
	json_decref(res);
	return workdir;
}

static void child(const struct ropts *o, char **cmd, int okfd)
{
	const char *workdir, *dir;
	char err[1024];
	int ret;

	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	workdir = attach(o, cmd[0], err, sizeof(err));
	if (!workdir) {
		fprintf(stderr, "sandgate run: %s\n", err);
		_exit(RUN_FAILED);
	}
	/* Tell the parent we are in the session, so it reports our exit status. */
	if (write(okfd, "1", 1) != 1)
		_exit(RUN_FAILED);
	close(okfd);
	dir = o->cwd ? o->cwd : *workdir ? workdir : NULL;
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
	char ok = 0;
	pid_t pid;

	if (ret)
		return ret == 1 ? 0 : 2;
	if (pipe2(okp, O_CLOEXEC) < 0) {
		fprintf(stderr, "sandgate run: pipe: %s\n", strerror(errno));
		return RUN_FAILED;
	}
	/* Like system(): the terminal's ^C is for CMD; we wait for it to act on it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		child(&o, argv + optind, okp[1]);
	close(okp[1]);
	if (pid < 0) {
		fprintf(stderr, "sandgate run: fork: %s\n", strerror(errno));
		return RUN_FAILED;
	}
	if (read(okp[0], &ok, 1) != 1)
		ok = 0;
	close(okp[0]);
	if (wait_child(pid, &status) < 0)
		return RUN_FAILED;
	if (ok)
		report(&o, pid, status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
