/* sandgate status and reload: one call on the control socket each. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/client.h"
#include "cli/commands.h"

/*
 * Parses [--control PATH] (usage is printed for --help), calls method on the daemon and
 * hands its result (may be NULL) to on_ok. A failed call is printed as
 * "sandgate METHOD: FAIL_PREFIX<error>". Returns the exit status.
 */
static int control_simple(int argc, char **argv, const char *method, const char *usage,
			  const char *fail_prefix, int (*on_ok)(json_t *result))
{
	static const struct option longopts[] = {
		{ "control", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *control = NULL;
	json_t *result = NULL;
	char err[1024];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "C:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': control = optarg; break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default: return 2;
		}
	}
	if (client_call(client_socket_path(control), method, NULL, NULL, &result, err,
			sizeof(err))) {
		fprintf(stderr, "sandgate %s: %s%s\n", method, fail_prefix, err);
		return 1;
	}
	c = on_ok(result);
	json_decref(result);
	return c;
}

/*
 * The status as JSON; exit 1 when the daemon reports itself unhealthy (the reasons on
 * stderr too), so `sandgate status` works as a probe. A daemon too old to report
 * health counts as healthy.
 */
static int print_status(json_t *result)
{
	json_t *h = json_object_get(result, "health");
	json_t *ok = json_object_get(h, "ok");
	const char *why = json_string_value(json_object_get(h, "reasons"));

	json_dumpf(result, stdout, JSON_INDENT(2));
	putchar('\n');
	if (json_is_false(ok)) {
		fprintf(stderr, "sandgate status: unhealthy: %s\n", why ? why : "");
		return 1;
	}
	return 0;
}

static int print_reloaded(json_t *result)
{
	(void)result;
	printf("reloaded\n");
	return 0;
}

int cmd_status(int argc, char **argv)
{
	return control_simple(argc, argv, "status",
			      "usage: sandgate status [--control PATH]\n"
			      "Prints the daemon's status as JSON; exits 1 when the daemon is "
			      "unhealthy (its\nhealth.reasons also on stderr). PATH defaults to "
			      "$SANDGATE_CONTROL or " CLIENT_DEFAULT_SOCKET ".\n", "", print_status);
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
	return control_simple(argc, argv, "reload",
			      "usage: sandgate reload [--control PATH]\n"
			      "Makes the daemon re-read its config file (policies included). A "
			      "file with errors is refused\nand the running config stays.\n",
			      "refused: ", print_reloaded);
}
