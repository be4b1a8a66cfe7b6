/* sandgate: the command-line client and offline tools. One file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/log.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "status", cmd_status, "ask the daemon how it is (journal position, queue, errors)" },
	{ "reload", cmd_reload, "re-read the daemon's config and policies (refused if invalid)" },
	{ "verify", cmd_verify, "check a journal: chain, Merkle tree, signed checkpoints" },
	{ "nft", cmd_nft, "print the nftables ruleset the daemon installs" },
	{ "session", cmd_session, "create and drive sessions (start, pause, resume, ...)" },
	{ "run", cmd_run, "run a command inside a session" },
	{ "tool", cmd_tool, "record a tool invocation or model summary" },
	{ "detail", cmd_detail, "read a full tool input/output from the detail store" },
	{ "query", cmd_query, "search the journal through its index" },
	{ "reindex", cmd_reindex, "rebuild the query index from the journal" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: sandgate COMMAND [ARGS...]   (sandgate COMMAND --help)\n\n");
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
}

int main(int argc, char **argv)
{
	size_t i;

	log_init("sandgate", 0);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "sandgate: unknown command '%s' (sandgate --help lists them)\n", argv[1]);
	return 2;
}
