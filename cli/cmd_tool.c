/*
 * sandgate tool: records a tool invocation (tool.invoke) or, with --model instead of
 * --name, a model input/output summary (model.summary), as reported by the orchestrator.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_util.h"
#include "cli/client.h"
#include "cli/commands.h"

#define TEXT_FILE_MAX (200 * 1024)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sandgate tool --session ID --name NAME --status success|error|timeout\n"
		"           [--input-summary TEXT] [--output-summary TEXT] [--call-id ID]\n"
		"           [--duration-ms N] [--input TEXT|--input-file F]\n"
		"           [--output TEXT|--output-file F] [--actor NAME] [--control PATH]\n"
		"       sandgate tool --session ID --model MODEL [--input-summary TEXT]\n"
		"           [--output-summary TEXT] [--input-tokens N] [--output-tokens N] ...\n"
		"Summaries are redacted and cut to 1 KiB by the daemon; the policy's verbosity\n"
		"decides what is kept (minimal: name and status; full: the whole input and\n"
		"output go to the detail store, see `sandgate detail get`).\n");
}

static int read_text(const char *path, json_t *args, const char *key)
{
	char *buf = malloc(TEXT_FILE_MAX + 1);
	FILE *f = fopen(path, "re");
	size_t n = 0;
	int ret = 0;

	if (!buf || !f) {
		ret = buf ? -errno : -ENOMEM;
		goto out;
	}
	n = fread(buf, 1, TEXT_FILE_MAX, f);
	if (ferror(f) || !feof(f)) {
		ret = ferror(f) ? -EIO : -EFBIG;
		goto out;
	}
	/* jansson wants valid UTF-8; the daemon's limit is TEXT_FILE_MAX. */
	if (json_object_set_new(args, key, json_stringn(buf, n)))
		ret = -EINVAL;
out:
	if (f)
		fclose(f);
	free(buf);
	return ret;
}

static int take(json_t *args, int c, const char *val)
{
	static const char *const keys[] = { "session_id", "name", "status", "input_summary",
		"output_summary", "call_id", "input", "output", "model" };
	int64_t n;

	if (c >= 0 && c < 9)
		return json_object_set_new(args, keys[c], json_string(val)) ? -EINVAL : 0;
	if (c == 9 || c == 12 || c == 13) {
		if (cli_parse_uint(val, &n) < 0)
			return -EINVAL;
		return json_object_set_new(args, c == 9 ? "duration_ms" : c == 12 ?
					   "input_tokens" : "output_tokens", json_integer(n));
	}
	if (c == 10 || c == 11)
		return read_text(val, args, c == 10 ? "input" : "output");
	return -EINVAL;
}

int cmd_tool(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "session", required_argument, NULL, 0 }, { "name", required_argument, NULL, 1 },
		{ "status", required_argument, NULL, 2 },
		{ "input-summary", required_argument, NULL, 3 },
		{ "output-summary", required_argument, NULL, 4 },
		{ "call-id", required_argument, NULL, 5 }, { "input", required_argument, NULL, 6 },
		{ "output", required_argument, NULL, 7 }, { "model", required_argument, NULL, 8 },
		{ "duration-ms", required_argument, NULL, 9 },
		{ "input-file", required_argument, NULL, 10 },
		{ "output-file", required_argument, NULL, 11 },
		{ "input-tokens", required_argument, NULL, 12 },
		{ "output-tokens", required_argument, NULL, 13 },
		{ "actor", required_argument, NULL, 'a' }, { "control", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *control = NULL, *actor = NULL;
	json_t *args = json_object();
	int c, idx, ret = 0;

	optind = 1;
	while (args && ret == 0 && (c = getopt_long(argc, argv, "h", longopts, &idx)) != -1) {
		if (c == 'h') { usage(stdout); json_decref(args); return 0; }
		if (c == 'a') actor = optarg;
		else if (c == 'C') control = optarg;
		else if (c == '?') ret = 2;
		else if (take(args, c, optarg) < 0) {
			fprintf(stderr, "sandgate tool: bad value for --%s: '%s'\n",
				longopts[idx].name, optarg);
			ret = 2;
		}
	}
	if (ret == 0 && (optind < argc || !json_object_get(args, "session_id"))) {
		fprintf(stderr, "sandgate tool: --session is required (and no extra arguments)\n");
		ret = 2;
	}
	if (ret == 0)
		ret = cli_call_print("tool", control,
				     json_object_get(args, "model") ? "model.summary" : "tool.invoke",
				     args, actor);
	json_decref(args);
	return args ? ret : 1;
}
