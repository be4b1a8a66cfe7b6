/* sandgated: the per-host daemon. Argument parsing only; daemon/daemon.c does the rest. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/paths.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "policy/policy.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sandgated [--config FILE] [--state-dir DIR] [--control PATH] [--debug]\n"
		"       sandgated --check-config FILE\n"
		"\n"
		"Runs in the foreground (systemd Type=notify). Without --config it runs on the\n"
		"embedded defaults: state in /var/lib/sandgate, control socket\n"
		"/run/sandgate/control.sock, metrics on 127.0.0.1:9477.\n"
		"  --check-config FILE  validate FILE (and the rules, GeoIP database and DoH list\n"
		"                       it names); print every error as FILE:LINE, whether the\n"
		"                       gateway is on, the effective resolvers; exit 0 if valid\n");
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

/* Whether the gateway runs (on unless the file says otherwise, 18.6), and how. */
static void print_gateway(const struct sg_config *cfg)
{
	static const char *const modes[] = { "both", "cgroup", "interface" };
	const struct sg_gateway_config *g = &cfg->gateway;

	if (!g->enabled) {
		printf("gateway.enabled: false (session traffic is not classified or enforced)\n");
		return;
	}
	printf("gateway.enabled: true (%s, mode %s, network namespace %s)\n",
	       g->enforce ? "enforcing" : "observing only", modes[g->mode],
	       g->netns ? g->netns : "the daemon's own");
}

/* The effective resolvers: the file's, or the host's and where they came from. */
static int print_resolvers(struct sg_config *cfg)
{
	char from[256] = "the config file", addr[64];
	int ret = cfg->gateway.resolvers_set ? 0
		: config_host_resolvers(&cfg->gateway, CONFIG_RESOLV_CONF, CONFIG_RESOLVED_CONF, from,
					sizeof(from));

	if (ret) {
		fprintf(stderr, "gateway.resolvers: %s: %s\n", from, strerror(-ret));
		return ret;
	}
	printf("gateway.resolvers (from %s):", from);
	for (size_t i = 0; i < cfg->gateway.n_resolvers; i++) {
		const struct sg_resolver *r = &cfg->gateway.resolvers[i];

		inet_ntop(r->addr.family, r->addr.bytes, addr, sizeof(addr));
		printf(r->addr.family == AF_INET6 ? " [%s]:%u" : " %s:%u", addr, r->port);
	}
	printf("%s\n", cfg->gateway.n_resolvers ? "" : " none (sessions get no DNS)");
	return 0;
}

/*
 * What the file names must exist: the GeoIP database, the DoH list (the policies are
 * compiled with it, as at start) and the control group. A missing file is an error;
 * an unknown group a warning (the socket is then root-only, as at start).
 */
static int check_refs(const struct sg_config *cfg, struct config_errors *errs)
{
	struct policy_set *set = NULL;
	int ret = 0;

	if (cfg->gateway.geoip_db && access(cfg->gateway.geoip_db, R_OK) < 0) {
		fprintf(stderr, "gateway.geoip_db: %s: %s\n", cfg->gateway.geoip_db,
			strerror(errno));
		ret = -ENOENT;
	}
	if (daemon_policy_build(cfg, &set, errs) != 0 && ret == 0)
		ret = -EINVAL;
	policy_set_unref(set);
	if (cfg->control_group && !getgrnam(cfg->control_group))
		fprintf(stderr, "warning: control_group: no group named '%s': the control socket "
			"will be root-only\n", cfg->control_group);
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
	if (ret == 0)
		ret = check_refs(cfg, &errs);
	if (ret == 0) {
		print_gateway(cfg);
		ret = print_resolvers(cfg);
	}
	if (ret == 0) {
		printf("%s: configuration is valid (%zu polic%s, %zu detection rules)\n", path,
		       cfg->n_policies, cfg->n_policies == 1 ? "y" : "ies", n_rules);
	} else {
		config_errors_print(&errs, stderr);
		if (config_errors_count(&errs) == 0 && ret != -ENOENT)
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
