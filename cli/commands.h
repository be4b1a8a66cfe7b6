/*
 * The `sandgate` subcommands, one file each (cli/cmd_<name>.c). Each takes the
 * arguments after its own name (argv[0] is the subcommand name), prints its --help,
 * and returns the process exit status: 0 on success; on failure it has printed one
 * line on stderr naming what was wrong.
 */
#ifndef SANDGATE_CLI_COMMANDS_H
#define SANDGATE_CLI_COMMANDS_H

int cmd_verify(int argc, char **argv);
int cmd_session(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_tool(int argc, char **argv);
int cmd_detail(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_reindex(int argc, char **argv);
int cmd_nft(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_reload(int argc, char **argv);
/* For the contract's commands whose issue has not landed: says so, exits 1. */
int cmd_pending(int argc, char **argv);

#endif
