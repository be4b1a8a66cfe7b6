/* sandgated: the per-host daemon. Argument parsing only; daemon/daemon.c does the rest. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/paths.h"
#include "daemon/config.h"
#include "daemon/daemon.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sandgated [--config FILE] [--state-dir DIR] [--control PATH] [--debug]\n"
		"       sandgated --check-config FILE\n"
		"\n"
		"Runs in the foreground (systemd Type=notify). Without --config it runs on the\n"
		"embedded defaults: state in /var/lib/sandgate, control socket\n"
		"/run/sandgate/control.sock, metrics on 127.0.0.1:9477.\n"
		"  --check-config FILE  validate FILE; print every error as FILE:LINE; exit 0 if valid\n");
}

/* The shipped rules and data must be where the build put them (common/paths.h). */
static int check_install(FILE *f)
{
	const char *which;
	int ret = sg_paths_check(&which);

	if (ret)
		fprintf(f, "sandgated: %s: %s (the shipped rules and data: a broken install, or "
			"SANDGATE_DATA_DIR / SANDGATE_RULES_DIR naming a wrong directory)\n",
			which, strerror(-ret));
	return ret;
}

static int check_config(const char *path)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct sg_config *cfg = NULL;
	int ret;

	size_t n_rules = 0;

	if (check_install(stderr))
		return 1;
	ret = config_load_file(path, &cfg, &errs);
	/* The rules files the config names are part of it: checked the same way. */
	if (ret == 0)
		ret = daemon_detect_check(cfg, &errs, &n_rules);
	if (ret == 0) {
		printf("%s: configuration is valid (%zu polic%s, %zu detection rules)\n", path,
		       cfg->n_policies, cfg->n_policies == 1 ? "y" : "ies", n_rules);
	} else {
		config_errors_print(&errs, stderr);
		if (config_errors_count(&errs) == 0)
			fprintf(stderr, "%s: %s\n", path, strerror(-ret));
	}
	config_free(cfg);
	config_errors_free(&errs);
	return ret == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "control", required_argument, NULL, 'C' },
		{ "check-config", required_argument, NULL, 'k' },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct daemon_opts opts = { 0 };
	int c;

	log_init("sandgated", 0);
	while ((c = getopt_long(argc, argv, "c:s:C:k:dhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': opts.config_path = optarg; break;
		case 's': opts.state_dir = optarg; break;
		case 'C': opts.control_path = optarg; break;
		case 'k': return check_config(optarg);
		case 'd': opts.debug = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("sandgated %s\n", SANDGATE_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "sandgated: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	log_init("sandgated", opts.debug);
	if (check_install(stderr))
		return 1;
	return daemon_main(&opts);
}
