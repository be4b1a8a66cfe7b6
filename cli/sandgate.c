/*
 * sandgate: the command-line client and offline tools. One file per subcommand.
 * Global options come before the subcommand (as git, docker and systemctl take them)
 * or after it, in the subcommand's own options; the later one wins.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/log.h"
#include "common/version.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	bool state_dir;              /* takes --state-dir DIR */
};

static const struct subcommand subcommands[] = {
	{ "status", cmd_status, "ask the daemon how it is (journal position, queue, errors)", false },
	{ "reload", cmd_reload, "re-read the daemon's config and policies (refused if invalid)", false },
	{ "verify", cmd_verify, "check a journal: chain, Merkle tree, signed checkpoints", false },
	{ "nft", cmd_nft, "print the nftables ruleset the daemon installs", false },
	{ "session", cmd_session, "create and drive sessions (start, pause, resume, ...)", false },
	{ "run", cmd_run, "run a command inside a session", false },
	{ "tool", cmd_tool, "record a tool invocation or model summary", false },
	{ "detail", cmd_detail, "read a full tool input/output from the detail store", false },
	{ "query", cmd_query, "search the journal through its index", true },
	{ "reindex", cmd_reindex, "rebuild the query index from the journal", true },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: sandgate [--control PATH] [--state-dir DIR] COMMAND [ARGS...]\n"
		   "       sandgate --version | --help   (sandgate COMMAND --help)\n\n");
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(f, "\nglobal options (before or after COMMAND):\n"
		   "  --control PATH   the daemon's control socket (default $SANDGATE_CONTROL or "
		   "/run/sandgate/control.sock)\n"
		   "  --state-dir DIR  the daemon's state directory, for query and reindex "
		   "(default /var/lib/sandgate)\n");
}

struct globals {
	const char *control, *state_dir;
	int next;                    /* argv index of the subcommand */
};

/* "--opt VALUE" or "--opt=VALUE" at argv[*i]: 1 taken, 0 not this option, -1 no value. */
static int take(char **argv, int argc, int *i, const char *opt, const char **val)
{
	size_t n = strlen(opt);

	if (strncmp(argv[*i], opt, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*val = argv[*i] + n + 1;
		return **val ? 1 : -1;
	}
	if (argv[*i][n] != '\0')
		return 0;
	if (*i + 1 >= argc || !argv[*i + 1][0])
		return -1;
	*val = argv[++*i];
	return 1;
}

/* The options before the subcommand. 0, or 2 (usage error, said on stderr). */
static int parse_globals(int argc, char **argv, struct globals *g)
{
	int i, r;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if ((r = take(argv, argc, &i, "--control", &g->control)) == 0)
			r = take(argv, argc, &i, "--state-dir", &g->state_dir);
		if (r < 0) {
			fprintf(stderr, "sandgate: %s needs a value\n", argv[i]);
			return 2;
		}
		if (r == 0)
			break;       /* --help, --version or unknown: main says */
	}
	g->next = i;
	return 0;
}

/* Runs sc with the globals: --control through the environment every client reads
 * (cli/client.c), --state-dir as the subcommand's first option. */
static int run(const struct subcommand *sc, const struct globals *g, int argc, char **argv)
{
	char **av;
	int n = 0, ret;

	if (g->control && setenv("SANDGATE_CONTROL", g->control, 1) != 0) {
		perror("sandgate: setenv");
		return 1;
	}
	if (!g->state_dir || !sc->state_dir)
		return sc->fn(argc, argv);
	av = calloc((size_t)argc + 3, sizeof(*av));
	if (!av) {
		fprintf(stderr, "sandgate: out of memory\n");
		return 1;
	}
	av[n++] = argv[0];
	av[n++] = (char *)"--state-dir";
	av[n++] = (char *)g->state_dir;
	for (int i = 1; i < argc; i++)
		av[n++] = argv[i];
	ret = sc->fn(n, av);
	free(av);
	return ret;
}

int main(int argc, char **argv)
{
	struct globals g = { 0 };
	const char *cmd;
	size_t i;
	int rc;

	log_init("sandgate", 0);
	if ((rc = parse_globals(argc, argv, &g)) != 0)
		return rc;
	if (g.next >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[g.next];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 ||
	    strcmp(cmd, "version") == 0) {
		printf("sandgate %s\n", sandgate_version());
		return 0;
	}
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(cmd, subcommands[i].name) == 0)
			return run(&subcommands[i], &g, argc - g.next, argv + g.next);
	fprintf(stderr, "sandgate: unknown %s '%s' (sandgate --help lists them)\n",
		cmd[0] == '-' ? "option" : "command", cmd);
	return 2;
}
