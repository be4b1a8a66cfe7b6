/*
 * sandgate session create|start|pause|resume|terminate|cleanup|list|show: each is one
 * control request (sessions/session_verbs.c); the result is printed as one JSON line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_util.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "contain/contain.h"
#include "nft/nft.h"

static const char usage_text[] =
	"usage: sandgate session create --id ID [--tenant T] [--user U] [--template NAME]\n"
	"           [--policy NAME] [--memory BYTES] [--cpus N] [--pids N] [--disk BYTES]\n"
	"           [--timeout SECONDS] [--iface IFNAME]... [--cgroup PATH] [--workdir DIR]\n"
	"           [--net-rate RATE]   (needs the gateway; e.g. 1mbit, 100kbytes: units\n"
	"           bit kbit mbit gbit, bytes kbytes mbytes gbytes; both directions)\n"
	"           [--end-when-empty]  (end the session when its last process exits;\n"
	"           by default it runs until terminate, its timeout or a limit ends it)\n"
	"           [--privileged | --cap-add CAP[,CAP...]]   (its commands run without\n"
	"           containment, or keep these capabilities too: docs/threat-model.md)\n"
	"       sandgate session start|pause|resume|terminate|cleanup ID [--reason R]\n"
	"           [--fs preserved|deleted|snapshot]   (cleanup)\n"
	"       sandgate session list\n"
	"       sandgate session show ID\n"
	"Common options: --actor NAME (recorded with the caller's uid and pid),\n"
	"  --control PATH (default $SANDGATE_CONTROL or " CLIENT_DEFAULT_SOCKET ").\n"
	"pause reasons: api (default), timeout, auto. terminate reasons: api (default),\n"
	"  policy_violation, timeout, normal, signal, oom. BYTES takes K, M, G suffixes.\n";

enum { O_ID = 256, O_TENANT, O_USER, O_TEMPLATE, O_POLICY, O_MEMORY, O_CPUS, O_PIDS,
       O_DISK, O_TIMEOUT, O_IFACE, O_CGROUP, O_WORKDIR, O_REASON, O_FS, O_ACTOR, O_CONTROL,
       O_NET_RATE, O_END_WHEN_EMPTY, O_PRIVILEGED, O_CAP_ADD };

static const struct option longopts[] = {
	{ "id", required_argument, NULL, O_ID }, { "tenant", required_argument, NULL, O_TENANT },
	{ "user", required_argument, NULL, O_USER },
	{ "template", required_argument, NULL, O_TEMPLATE },
	{ "policy", required_argument, NULL, O_POLICY },
	{ "memory", required_argument, NULL, O_MEMORY },
	{ "cpus", required_argument, NULL, O_CPUS }, { "pids", required_argument, NULL, O_PIDS },
	{ "disk", required_argument, NULL, O_DISK },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "iface", required_argument, NULL, O_IFACE },
	{ "cgroup", required_argument, NULL, O_CGROUP },
	{ "workdir", required_argument, NULL, O_WORKDIR },
	{ "reason", required_argument, NULL, O_REASON }, { "fs", required_argument, NULL, O_FS },
	{ "actor", required_argument, NULL, O_ACTOR },
	{ "control", required_argument, NULL, O_CONTROL },
	{ "net-rate", required_argument, NULL, O_NET_RATE },
	{ "end-when-empty", no_argument, NULL, O_END_WHEN_EMPTY },
	{ "privileged", no_argument, NULL, O_PRIVILEGED },
	{ "cap-add", required_argument, NULL, O_CAP_ADD },
	{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
};

struct sopts {
	const char *control, *actor;
	json_t *args;
	const char *bad;       /* the option whose value did not parse */
};

static int set_num(struct sopts *o, const char *key, const char *val, bool size)
{
	int64_t v;
	int ret = size ? cli_parse_size(val, &v) : cli_parse_uint(val, &v);

	if (ret)
		return ret;
	return json_object_set_new(o->args, key, json_integer(v)) ? -ENOMEM : 0;
}

static int set_cpus(struct sopts *o, const char *val)
{
	char *end;
	double d = strtod(val, &end);

	if (*end || !(d > 0))
		return -EINVAL;
	return json_object_set_new(o->args, "cpus", json_real(d)) ? -ENOMEM : 0;
}

/* --net-rate 1mbit: bytes/second for the daemon (nft/nft.h nft_rate_parse). */
static int set_rate(struct sopts *o, const char *val)
{
	uint64_t r;
	int ret = nft_rate_parse(val, &r);

	if (ret)
		return ret;
	return json_object_set_new(o->args, "net_rate", json_integer((json_int_t)r)) ? -ENOMEM
										       : 0;
}

static int add_iface(struct sopts *o, const char *val)
{
	json_t *a = json_object_get(o->args, "iface");

	if (!a) {
		a = json_array();
		if (!a || json_object_set_new(o->args, "iface", a))
			return -ENOMEM;
	}
	return json_array_append_new(a, json_string(val)) ? -ENOMEM : 0;
}

/* --cap-add CAP_NET_RAW,SYS_PTRACE: checked here, sent as an array of names. */
static int add_caps(struct sopts *o, const char *val)
{
	json_t *a = json_object_get(o->args, "cap_add");
	uint64_t mask;
	char bad[64];
	int cap;

	if (contain_cap_list(val, &mask, bad, sizeof(bad)) < 0)
		return -EINVAL;
	if (!a) {
		a = json_array();
		if (!a || json_object_set_new(o->args, "cap_add", a))
			return -ENOMEM;
	}
	for (cap = 0; cap <= CONTAIN_CAP_MAX; cap++)
		if ((mask >> cap & 1) && json_array_append_new(a, json_string(contain_cap_name(cap))))
			return -ENOMEM;
	return 0;
}

static int set_str(struct sopts *o, const char *key, const char *val)
{
	json_t *v = json_string(val);

	return !v || json_object_set_new(o->args, key, v) ? -EINVAL : 0;
}

static int take_opt(struct sopts *o, int c, const char *val)
{
	static const char *const keys[] = { "id", "tenant", "user", "template", "policy" };

	switch (c) {
	case O_ID: case O_TENANT: case O_USER: case O_TEMPLATE: case O_POLICY:
		return set_str(o, keys[c - O_ID], val);
	case O_MEMORY: return set_num(o, "memory", val, true);
	case O_DISK: return set_num(o, "disk", val, true);
	case O_PIDS: return set_num(o, "pids", val, false);
	case O_TIMEOUT: return set_num(o, "timeout", val, false);
	case O_CPUS: return set_cpus(o, val);
	case O_NET_RATE: return set_rate(o, val);
	case O_IFACE: return add_iface(o, val);
	case O_CGROUP: return set_str(o, "cgroup", val);
	case O_PRIVILEGED: return json_object_set_new(o->args, "privileged", json_true());
	case O_CAP_ADD: return add_caps(o, val);
	case O_WORKDIR: return set_str(o, "workdir", val);
	case O_REASON: return set_str(o, "reason", val);
	case O_FS: return set_str(o, "fs", val);
	case O_ACTOR: o->actor = val; return 0;
	case O_CONTROL: o->control = val; return 0;
	case O_END_WHEN_EMPTY:
		return json_object_set_new(o->args, "end_when_empty", json_true()) ? -EINVAL : 0;
	default: return -EINVAL;
	}
}

/* 0: parsed; 1: --help printed; 2: usage error (message printed). */
static int parse(int argc, char **argv, struct sopts *o, const char **pos)
{
	int c;

	optind = 1;
	*pos = NULL;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return 1;
		}
		if (c == '?' || take_opt(o, c, optarg) < 0) {
			if (c != '?')
				fprintf(stderr, "sandgate session: bad value for --%s: '%s'\n",
					longopts[c - O_ID].name, optarg);
			return 2;
		}
	}
	if (optind < argc)
		*pos = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "sandgate session: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return 0;
}

static const char *verb_of(const char *sub)
{
	static const char *const subs[] = { "create", "start", "pause", "resume", "terminate",
					    "cleanup", "list", "show" };
	static char verb[40];
	size_t i;

	for (i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		if (strcmp(sub, subs[i]) == 0) {
			snprintf(verb, sizeof(verb), "session.%s", sub);
			return verb;
		}
	}
	return NULL;
}

int cmd_session(int argc, char **argv)
{
	struct sopts o = { 0 };
	const char *verb, *id;
	int ret;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	verb = verb_of(argv[1]);
	if (!verb) {
		fprintf(stderr, "sandgate session: unknown subcommand '%s'\n", argv[1]);
		return 2;
	}
	o.args = json_object();
	if (!o.args)
		return 1;
	ret = parse(argc - 1, argv + 1, &o, &id);
	if (ret == 1) {   /* --help */
		json_decref(o.args);
		return 0;
	}
	if (ret == 0 && id && set_str(&o, "id", id) < 0)
		ret = 2;
	if (ret == 0 && strcmp(verb, "session.list") != 0 && !json_object_get(o.args, "id")) {
		fprintf(stderr, "sandgate session %s: the session id is required\n", argv[1]);
		ret = 2;
	}
	if (ret == 0)
		ret = cli_call_print("session", o.control, verb, o.args, o.actor);
	json_decref(o.args);
	return ret;
}
