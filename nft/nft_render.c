/*
 * The ruleset of nft_rules.c as nft text, for `sandgate nft render` and the
 * nft/sandgate.nft template. Keep the two files in step: a rule added there is
 * printed here, in the order the kernel lists it.
 */
#include <errno.h>
#include <stdio.h>

#include "nft/nft_int.h"

#define RESTORE "ct mark & 0xff000000 == 0x53000000 meta mark set ct mark goto session"
#define CLASSIFY_TAIL "ct mark set meta mark goto session"
#define NOFLAGS "tcp flags & (fin | syn | rst | urg) == 0"
#define INBOUND "ct direction reply th dport != 53"
#define INBOUND_TAIL "meta mark set meta mark | 0x00200000 ct mark set meta mark goto deny"
#define FLOOD "limit name meta mark & 0xff0fffff map @" NFT_SET_FLOOD \
	" counter name meta mark & 0xff0fffff map @" NFT_SET_FLOODC " goto deny"
#define FLOOD_DROP "limit name meta mark & 0xff0fffff map @" NFT_SET_FLOOD \
	" counter name meta mark & 0xff0fffff map @" NFT_SET_FLOODC \
	" drop"

/* "queue [flags F] to N[-M]": the native statement, also printed for compat. */
static void put_queue(FILE *f, const struct nft_options *o)
{
	uint16_t fl = nft_queue_flags(o);

	fputs("counter queue ", f);
	if (fl != 0)
		fprintf(f, "flags %s%s%s ", o->fail_open ? "bypass" : "",
			o->fail_open && o->fanout ? "," : "", o->fanout ? "fanout" : "");
	if (o->queue_count == 1)
		fprintf(f, "to %u\n", o->queue_base);
	else
		fprintf(f, "to %u-%u\n", o->queue_base,
			(unsigned)o->queue_base + o->queue_count - 1);
}

static void put_header(FILE *f, const struct nft_options *o, enum nft_qimpl impl)
{
	unsigned last = (unsigned)o->queue_base + o->queue_count - 1;

	fputs("# table inet sandgate: the sandgate gateway ruleset (docs/nft-ruleset.md).\n"
	      "# Mark: tag 0x53 << 24 | verdict << 20 | session id;"
	      " verdict 0 undecided, 1 allow, 2 deny.\n", f);
	if (impl == NFT_QIMPL_COMPAT)
		fprintf(f, "# queue: compat. This kernel has no nft `queue`: each `queue` below is"
			" installed as\n#   xt target NFQUEUE rev 3 (nft_compat) queuenum %u"
			" queues_total %u flags 0x%x\n", o->queue_base, o->queue_count,
			nft_queue_flags(o));
	else if (impl == NFT_QIMPL_NATIVE)
		fputs("# queue: native nft queue (with nft_compat it becomes xt target NFQUEUE"
		      " rev 3).\n", f);
	else
		fputs("# queue: not probed; native shown (compat: xt target NFQUEUE rev 3).\n", f);
	if (o->fail_open)
		fprintf(f, "# FAIL-OPEN: with no program bound to queues %u-%u session traffic is"
			" ACCEPTED (bypass).\n", o->queue_base, last);
	else
		fprintf(f, "# fail closed: with no program bound to queues %u-%u session traffic"
			" is dropped.\n", o->queue_base, last);
	if (o->fanout)
		fputs("# fanout: packets go to the queue of the CPU they arrive on.\n", f);
}

static void put_sets(FILE *f)
{
	fputs("\tmap " NFT_SET_CGROUP " {\n\t\ttype cgroupsv2 : mark\n\t}\n\n"
	      "\tmap " NFT_SET_IFACE " {\n\t\ttype ifname : mark\n\t}\n\n"
	      "\t# --net-rate: session mark -> limit rate_ID (over R bytes/second) and its\n"
	      "\t# drop counter drops_ID, both added and removed with the session\n"
	      "\tmap " NFT_SET_RATES " {\n\t\ttype mark : limit\n\t}\n\n"
	      "\tmap " NFT_SET_DROPS " {\n\t\ttype mark : counter\n\t}\n\n"
	      "\t# a session past its blocked budget: limit flood_ID (over R packets/second)\n"
	      "\t# and counter floodc_ID, added and removed by the gateway\n"
	      "\tmap " NFT_SET_FLOOD " {\n\t\ttype mark : limit\n\t}\n\n"
	      "\tmap " NFT_SET_FLOODC " {\n\t\ttype mark : counter\n\t}\n\n", f);
}

static void put_deny_session(FILE *f, const struct nft_options *o)
{
	static const char *const dns[] = { "udp th dport", "tcp th dport",
					   "udp th sport", "tcp th sport" };

	fputs("\tchain " NFT_CH_DENY " {\n"
	      "\t\tct direction original meta l4proto tcp reject with tcp reset\n"
	      "\t\tct direction original reject with icmpx admin-prohibited\n"
	      "\t\tct state related accept\n"
	      "\t\tdrop\n\t}\n\n", f);
	fputs("\tchain " NFT_CH_SESSION " {\n\t\ticmpv6 type 133-137 accept\n"
	      "\t\tlimit name meta mark & 0xff0fffff map @" NFT_SET_RATES
	      " counter name meta mark & 0xff0fffff map @" NFT_SET_DROPS " drop\n"
	      "\t\tct direction original meta l4proto udp th dport 53 " FLOOD "\n"
	      "\t\tct direction original meta l4proto tcp th dport 53 " FLOOD "\n"
	      "\t\tct direction reply meta l4proto udp th dport 53 " FLOOD_DROP "\n", f);
	for (size_t i = 0; i < sizeof(dns) / sizeof(dns[0]); i++) {
		fprintf(f, "\t\tmeta l4proto %s 53 ", dns[i]);
		put_queue(f, o);
	}
	fputs("\t\tmeta mark & 0x00300000 == 0x00100000 accept\n"
	      "\t\tmeta mark & 0x00300000 == 0x00200000 goto deny\n"
	      "\t\tct direction reply accept\n"
	      "\t\t# the handshake's last ACK, when it carries no byte, is not queued\n"
	      "\t\tip hdrlength 5 ip length 40 " NOFLAGS " tcp doff 5 ct original packets 2 accept\n"
	      "\t\tip hdrlength 5 ip length 52 " NOFLAGS " tcp doff 8 ct original packets 2 accept\n"
	      "\t\tip6 nexthdr tcp ip6 length 20 " NOFLAGS " tcp doff 5 ct original packets 2 accept\n"
	      "\t\tip6 nexthdr tcp ip6 length 32 " NOFLAGS
	      " tcp doff 8 ct original packets 2 accept\n\t\t" FLOOD "\n\t\t", f);
	put_queue(f, o);
	fputs("\t}\n\n", f);
}

static void put_base_chains(FILE *f, const struct nft_options *o)
{
	fputs("\tchain " NFT_CH_PRE " {\n"
	      "\t\ttype filter hook prerouting priority mangle; policy accept;\n"
	      "\t\tiif \"lo\" accept\n\t\t" RESTORE "\n", f);
	if (o->iface_mode)
		fputs("\t\t# a connection made to the session (not by this host): denied\n"
		      "\t\tfib daddr type != local " INBOUND " meta mark set iifname map @" NFT_SET_IFACE " " INBOUND_TAIL "\n"
		      "\t\tmeta mark set iifname map @" NFT_SET_IFACE " " CLASSIFY_TAIL "\n", f);
	fputs("\t}\n\n\tchain " NFT_CH_OUT " {\n"
	      "\t\ttype filter hook output priority mangle; policy accept;\n"
	      "\t\t" RESTORE "\n", f);
	if (o->cgroup_mode)
		fprintf(f, "\t\t# a connection made to the session (not over loopback): denied\n"
			"\t\toif != \"lo\" " INBOUND " meta mark set socket cgroupv2 level %u map @"
			NFT_SET_CGROUP " " INBOUND_TAIL "\n"
			"\t\tmeta mark set socket cgroupv2 level %u map @" NFT_SET_CGROUP
			" " CLASSIFY_TAIL "\n", o->cgroup_level, o->cgroup_level);
	fputs("\t}\n\n", f);
}

static void put_verdict_chain(FILE *f, const char *name, const char *hook)
{
	fprintf(f, "\tchain %s {\n"
		"\t\ttype filter hook %s priority mangle + 10; policy accept;\n"
		"\t\tmeta mark & 0xff300000 == 0x53100000 ct mark & 0xff300000 == 0x53000000"
		" ct mark set meta mark\n"
		"\t\tmeta mark & 0xff300000 == 0x53200000 ct mark & 0xff000000 == 0x53000000"
		" ct mark set meta mark goto deny\n\t}\n", name, hook);
}

int nft_render(const struct nft_options *o, enum nft_qimpl impl, FILE *f)
{
	int ret = nft_options_check(o);

	if (ret != 0)
		return ret;
	put_header(f, o, impl);
	fputs("table inet sandgate {\n", f);
	put_sets(f);
	put_deny_session(f, o);
	put_base_chains(f, o);
	put_verdict_chain(f, NFT_CH_PRE_VERDICT, "prerouting");
	fputc('\n', f);
	put_verdict_chain(f, NFT_CH_OUT_VERDICT, "output");
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}
