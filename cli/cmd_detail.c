/*
 * sandgate detail get HASH: prints a full tool input/output from the daemon's detail
 * store (verbosity `full`). The daemon records every read (event detail.read).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/client.h"
#include "cli/commands.h"

int cmd_detail(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "actor", required_argument, NULL, 'a' }, { "control", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *control = NULL, *actor = NULL, *content;
	json_t *args, *res = NULL;
	char err[1024];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': actor = optarg; break;
		case 'C': control = optarg; break;
		case 'h':
			printf("usage: sandgate detail get HASH [--actor NAME] [--control PATH]\n"
			       "Prints the full input or output stored under HASH (the sha256 in a\n"
			       "tool.invoke event's \"detail\"). The read is itself logged.\n");
			return 0;
		default: return 2;
		}
	}
	if (argc - optind != 2 || strcmp(argv[optind], "get") != 0) {
		fprintf(stderr, "sandgate detail: usage: sandgate detail get HASH\n");
		return 2;
	}
	args = json_pack("{s:s}", "hash", argv[optind + 1]);
	ret = args ? client_call(client_socket_path(control), "detail.get", args, actor, &res,
				 err, sizeof(err)) : -1;
	json_decref(args);
	if (ret) {
		fprintf(stderr, "sandgate detail: %s\n", args ? err : "out of memory");
		return 1;
	}
	content = json_string_value(json_object_get(res, "content"));
	if (content)
		fwrite(content, 1, json_string_length(json_object_get(res, "content")), stdout);
	json_decref(res);
	return content && fflush(stdout) == 0 ? 0 : 1;
}
