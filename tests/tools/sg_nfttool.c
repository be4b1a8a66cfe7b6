/*
 * sg_nfttool: drives nft/ for tests/integration/t_nft_ruleset.sh.
 *   sg_nfttool [OPTIONS] probe|install|uninstall
 *   sg_nfttool [OPTIONS] add|del --id N [--cgroup ID] [--iface NAME]... [--rate BYTES]
 *   sg_nfttool [OPTIONS] drops   every session's rate-limit drops: "N counters", then
 *                                "MARK PKTS BYTES" lines (nft_rate_drops_all)
 *   sg_nfttool mark N          prints the session mark of id N (0x...)
 * OPTIONS: --netns NAME --queue-base B --queues N --level L --fail-open --fanout
 *          --qimpl auto|native|compat --no-cgroup --no-iface
 * install also takes --id/--cgroup/--iface to include one session in the same batch.
 * Prints one line saying what happened; exit 0 on success, 1 with the error on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nft/nft.h"

struct tool_args {
	struct nft_options o;
	uint32_t id;
	uint64_t cgroup;
	uint64_t rate;
	const char *ifnames[8];
	size_t n_ifnames;
};

static int parse_num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || *end || *v > max) ? -EINVAL : 0;
}

static int parse_opt(struct tool_args *a, int c, const char *arg)
{
	uint64_t v = 0;
	int r = 0;

	switch (c) {
	case 'n': a->o.netns = arg; break;
	case 'b': r = parse_num(arg, 65535, &v); a->o.queue_base = (uint16_t)v; break;
	case 'q': r = parse_num(arg, 65535, &v); a->o.queue_count = (uint16_t)v; break;
	case 'l': r = parse_num(arg, 255, &v); a->o.cgroup_level = (uint32_t)v; break;
	case 'O': a->o.fail_open = true; break;
	case 'F': a->o.fanout = true; break;
	case 'm': r = nft_qimpl_parse(arg, &a->o.qimpl); break;
	case 'G': a->o.cgroup_mode = false; break;
	case 'I': a->o.iface_mode = false; break;
	case 'i': r = parse_num(arg, NFT_SESSION_ID_MAX, &v); a->id = (uint32_t)v; break;
	case 'c': r = parse_num(arg, UINT64_MAX, &a->cgroup); break;
	case 'r': r = parse_num(arg, NFT_RATE_MAX, &a->rate); break;
	case 'f':
		if (a->n_ifnames >= sizeof(a->ifnames) / sizeof(a->ifnames[0]))
			return -E2BIG;
		a->ifnames[a->n_ifnames++] = arg;
		break;
	default: return -EINVAL;
	}
	return r;
}

static int parse_args(int argc, char **argv, struct tool_args *a)
{
	static const struct option longopts[] = {
		{ "netns", required_argument, NULL, 'n' },
		{ "queue-base", required_argument, NULL, 'b' },
		{ "queues", required_argument, NULL, 'q' },
		{ "level", required_argument, NULL, 'l' },
		{ "fail-open", no_argument, NULL, 'O' },
		{ "fanout", no_argument, NULL, 'F' },
		{ "qimpl", required_argument, NULL, 'm' },
		{ "no-cgroup", no_argument, NULL, 'G' },
		{ "no-iface", no_argument, NULL, 'I' },
		{ "id", required_argument, NULL, 'i' },
		{ "cgroup", required_argument, NULL, 'c' },
		{ "iface", required_argument, NULL, 'f' },
		{ "rate", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	nft_options_init(&a->o);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
		if (parse_opt(a, c, optarg) != 0)
			return -EINVAL;
	return optind < argc ? 0 : -EINVAL;
}

static int print_drops(struct nft_handle *h)
{
	struct nft_rate_drops *v;
	size_t n;
	int r = nft_rate_drops_all(h, &v, &n);

	if (r != 0)
		return r;
	printf("%zu counters\n", n);
	for (size_t i = 0; i < n; i++)
		printf("0x%08" PRIx32 " %" PRIu64 " %" PRIu64 "\n", v[i].mark, v[i].pkts,
		       v[i].bytes);
	free(v);
	return 0;
}

static int run(struct nft_handle *h, const char *cmd, const struct tool_args *a)
{
	struct nft_session s = { nft_mark_make(a->id), a->cgroup, a->ifnames, a->n_ifnames,
				 a->rate };
	enum nft_qimpl impl;
	int r;

	if (strcmp(cmd, "probe") == 0) {
		r = nft_probe_queue(h, &impl);
		if (r == 0)
			printf("queue: %s\n", nft_qimpl_name(impl));
		return r;
	}
	if (strcmp(cmd, "install") == 0) {
		r = nft_install(h, &s, a->id ? 1 : 0);
		if (r == 0)
			printf("installed: queue %s\n", nft_qimpl_name(nft_installed_qimpl(h)));
		return r;
	}
	if (strcmp(cmd, "uninstall") == 0)
		return nft_uninstall(h);
	if (strcmp(cmd, "add") == 0)
		return nft_session_add(h, &s);
	if (strcmp(cmd, "del") == 0)
		return nft_session_del(h, &s);
	if (strcmp(cmd, "drops") == 0)
		return print_drops(h);
	return -EINVAL;
}

int main(int argc, char **argv)
{
	struct tool_args a;
	struct nft_handle *h = NULL;
	uint64_t id;
	int r;

	memset(&a, 0, sizeof(a));
	if (argc == 3 && strcmp(argv[1], "mark") == 0) {
		if (parse_num(argv[2], NFT_SESSION_ID_MAX, &id) != 0 || id == 0)
			return 1;
		printf("0x%08" PRIx32 "\n", nft_mark_make((uint32_t)id));
		return 0;
	}
	if (parse_args(argc, argv, &a) != 0) {
		fprintf(stderr, "sg_nfttool: bad arguments (see the comment in sg_nfttool.c)\n");
		return 2;
	}
	r = nft_open(&a.o, &h);
	if (r == 0)
		r = run(h, argv[optind], &a);
	nft_close(h);
	if (r != 0) {
		fprintf(stderr, "sg_nfttool %s: %s\n", argv[optind], strerror(-r));
		return 1;
	}
	return 0;
}
