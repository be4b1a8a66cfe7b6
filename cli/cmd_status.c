/* sandgate status: the daemon's own view of itself, from the control socket. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/client.h"
#include "cli/commands.h"

int cmd_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "control", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *control = NULL;
	json_t *result = NULL;
	char err[512];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': control = optarg; break;
		case 'h':
			printf("usage: sandgate status [--control PATH]\n"
			       "Prints the daemon's status as JSON. PATH defaults to "
			       "$SANDGATE_CONTROL or " CLIENT_DEFAULT_SOCKET ".\n");
			return 0;
		default: return 2;
		}
	}
	ret = client_call(client_socket_path(control), "status", NULL, NULL, &result, err,
			  sizeof(err));
	if (ret) {
		fprintf(stderr, "sandgate status: %s\n", err);
		return 1;
	}
	json_dumpf(result, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(result);
	return 0;
}

int cmd_pending(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "sandgate %s: not built yet in this version\n", argv[0]);
	return 1;
}

/* sandgate reload: as SIGHUP; a config with errors is refused with its FILE:LINE. */
int cmd_reload(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "control", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *control = NULL;
	json_t *result = NULL;
	char err[1024];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': control = optarg; break;
		case 'h':
			printf("usage: sandgate reload [--control PATH]\n"
			       "Makes the daemon re-read its config file (policies included). A "
			       "file with errors is refused\nand the running config stays.\n");
			return 0;
		default: return 2;
		}
	}
	ret = client_call(client_socket_path(control), "reload", NULL, NULL, &result, err,
			  sizeof(err));
	if (ret) {
		fprintf(stderr, "sandgate reload: refused: %s\n", err);
		return 1;
	}
	json_decref(result);
	printf("reloaded\n");
	return 0;
}
