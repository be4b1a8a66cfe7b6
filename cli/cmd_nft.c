/*
 * sandgate nft render: print the nftables ruleset the daemon installs, as nft text.
 * sandgate nft remove: delete it (the package's removal: the ruleset outlives the daemon).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "daemon/config.h"
#include "nft/nft.h"

static void nft_usage(FILE *f)
{
	fprintf(f,
		"usage: sandgate nft render [--config FILE] [--queue auto|native|compat]\n"
		"                           [--cgroup-level N] [--fanout] [--fail-open]\n"
		"                           [--no-cgroup] [--no-iface]\n"
		"Prints table inet sandgate as the daemon installs it (docs/nft-ruleset.md).\n"
		"FILE gives gateway.netns, queue_base, queues, fail_open and mode, and the\n"
		"cgroup level from cgroup.parent; without it the\n"
		"embedded defaults apply. --queue auto (default) probes the kernel, which needs\n"
		"CAP_NET_ADMIN; without it the native form is printed and marked not probed.\n"
		"       sandgate nft remove [--config FILE]\n"
		"Deletes table inet sandgate from the daemon's namespace, or FILE's\n"
		"gateway.netns: session traffic is no longer dropped while no daemon runs.\n");
}

/* gateway.mode and the session cgroups' level; level_given: --cgroup-level wins. */
static void modes_from_config(const struct sg_config *c, struct nft_options *o,
			      bool level_given)
{
	if (c->gateway.mode == SG_GW_MODE_INTERFACE)
		o->cgroup_mode = false;
	if (c->gateway.mode == SG_GW_MODE_CGROUP)
		o->iface_mode = false;
	if (!level_given)
		o->cgroup_level = config_cgroup_level(c);
}

/* The gateway part of the daemon config, as nft options. */
static int options_from_config(const char *path, struct nft_options *o, char **netns,
			       bool level_given)
{
	struct config_errors errs = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;
	int ret = path ? config_load_file(path, &c, &errs) : 0;

	if (path == NULL)
		c = config_default();
	if (ret == 0 && c == NULL)
		ret = -ENOMEM;
	if (ret != 0) {
		char line[512];

		if (config_errors_count(&errs) > 0) {
			config_error_format(config_errors_at(&errs, 0), line, sizeof(line));
			fprintf(stderr, "sandgate nft: %s\n", line);
		} else {
			fprintf(stderr, "sandgate nft: %s: %s\n", path ? path : "defaults",
				strerror(-ret));
		}
		config_errors_free(&errs);
		return ret;
	}
	/* TODO(config): fanout and queue_impl are command-line only until daemon/config.h
	 * grows gateway keys for them. */
	modes_from_config(c, o, level_given);
	o->queue_base = (uint16_t)c->gateway.queue_base;
	o->queue_count = (uint16_t)c->gateway.queues;
	o->fail_open = c->gateway.fail_open;
	*netns = c->gateway.netns ? strdup(c->gateway.netns) : NULL;
	ret = c->gateway.netns != NULL && *netns == NULL ? -ENOMEM : 0;
	o->netns = *netns;
	config_free(c);
	return ret;
}

/* Which queue form to print: probe when asked, in the gateway's namespace. */
static enum nft_qimpl render_impl(const struct nft_options *o)
{
	struct nft_handle *h = NULL;
	enum nft_qimpl found = NFT_QIMPL_AUTO;

	if (o->qimpl != NFT_QIMPL_AUTO)
		return o->qimpl;
	/* Not fatal: render is also a tool for people without the privilege. */
	if (nft_open(o, &h) == 0 && nft_probe_queue(h, &found) != 0)
		found = NFT_QIMPL_AUTO;
	nft_close(h);
	return found;
}

static int parse_render_args(int argc, char **argv, const char **config,
			     struct nft_options *cli, unsigned *level_set)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "queue", required_argument, NULL, 'q' },
		{ "cgroup-level", required_argument, NULL, 'l' },
		{ "fanout", no_argument, NULL, 'F' },
		{ "fail-open", no_argument, NULL, 'O' },
		{ "no-cgroup", no_argument, NULL, 'G' },
		{ "no-iface", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:q:l:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': *config = optarg; break;
		case 'q':
			if (nft_qimpl_parse(optarg, &cli->qimpl) != 0) {
				fprintf(stderr, "sandgate nft: --queue: expected auto, native or compat\n");
				return 2;
			}
			break;
		case 'l':
			errno = 0;
			*level_set = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || *level_set == 0 || *level_set > 255) {
				fprintf(stderr, "sandgate nft: --cgroup-level: expected 1..255\n");
				return 2;
			}
			break;
		case 'F': cli->fanout = true; break;
		case 'O': cli->fail_open = true; break;
		case 'G': cli->cgroup_mode = false; break;
		case 'I': cli->iface_mode = false; break;
		case 'h': nft_usage(stdout); return -1;
		default: return 2;
		}
	}
	return 0;
}

static int nft_render_cmd(int argc, char **argv)
{
	const char *config = NULL;
	struct nft_options cli, o;
	unsigned level = 0;
	char *netns = NULL;
	int ret;

	nft_options_init(&cli);
	ret = parse_render_args(argc, argv, &config, &cli, &level);
	if (ret != 0)
		return ret < 0 ? 0 : ret;
	if (optind != argc) {
		fprintf(stderr, "sandgate nft render: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	o = cli;
	if (level != 0)
		o.cgroup_level = level;
	ret = options_from_config(config, &o, &netns, level != 0);
	if (ret != 0) {
		free(netns);
		return 1;
	}
	o.fail_open = o.fail_open || cli.fail_open;
	ret = nft_render(&o, render_impl(&o), stdout);
	free(netns);
	if (ret != 0) {
		fprintf(stderr, "sandgate nft render: %s\n", ret == -EINVAL ?
			"inconsistent options (no mode enabled?)" : strerror(-ret));
		return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

/*
 * The ruleset stays when the daemon stops (fail closed); once the package is removed no
 * daemon comes back, and cgroups left by sessions would stay cut off. Not there: 0.
 */
static int nft_remove_cmd(int argc, char **argv)
{
	const char *config = NULL;
	struct nft_handle *h = NULL;
	struct nft_options o;
	char *netns = NULL;
	int ret;

	if (argc == 3 && strcmp(argv[1], "--config") == 0)
		config = argv[2];
	else if (argc != 1) {
		nft_usage(stderr);
		return 2;
	}
	nft_options_init(&o);
	if (options_from_config(config, &o, &netns, false) != 0)
		return 1;
	ret = nft_open(&o, &h);
	if (ret == 0)
		ret = nft_uninstall(h);
	nft_close(h);
	if (ret == -ENOENT && netns)
		ret = 0;   /* the namespace is gone, and its table with it */
	if (ret)
		fprintf(stderr, "sandgate nft remove: table inet sandgate in %s: %s\n",
			netns ? netns : "this namespace", strerror(-ret));
	free(netns);
	return ret ? 1 : 0;
}

int cmd_nft(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		nft_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "render") == 0)
		return nft_render_cmd(argc - 1, argv + 1);
	if (strcmp(argv[1], "remove") == 0)
		return nft_remove_cmd(argc - 1, argv + 1);
	fprintf(stderr, "sandgate nft: unknown subcommand '%s' (render, remove)\n", argv[1]);
	return 2;
}
