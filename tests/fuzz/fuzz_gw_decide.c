/*
 * libFuzzer target for the packet decision (gateway/packet.h) as a whole: the input is
 * a sequence of packets of one session, each replayed through gw_decide_read and
 * gw_decide_packet with the flow table, bindings and pending queries of this input,
 * under an enforcing policy whose name api.web.test was resolved first. Each packet is
 * 3 bytes of header and its payload:
 *   op:  bits 0-2 which packet (TCP to the bound address :443 or :80, from two client
 *        ports; a DNS query; the resolver's answer; UDP from port 53; raw bytes as an IP
 *        packet), bit 3 SYN, bit 4 FIN, bit 5 a bad TCP checksum, bit 6 RST;
 *   off: the segment's stream offset (TCP), len: the payload length.
 * The properties checked: a client payload segment leaves (accepted, its mark not deny:
 * the ruleset resets what carries deny) only on a flow decided and allowed, never on
 * a guess; a mark never says allow for a flow that is not; and a TCP flow to the bound
 * address is allowed only when every name it shows is api.web.test (the Host may also
 * be the address itself), and a read first flight shows one (CI's t_gateway_evasion
 * found an SNI "[pi.web.test" let out as "no name" on 2026-12-03).
 */
#include <netinet/in.h>   /* before linux/netfilter.h: glibc's in.h wins */
#include <linux/netfilter.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/config.h"
#include "gateway/packet.h"
#include "nft/nft.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char yaml[] =
	"policies:\n"
	"  default:\n"
	"    allow:\n"
	"      - domain: api.web.test\n";

static const uint8_t CLIENT[4] = { 198, 18, 0, 2 }, RESOLVER[4] = { 198, 18, 1, 2 },
		     API[4] = { 198, 18, 1, 10 }, OTHER[4] = { 198, 18, 1, 4 };

static struct policy_set *set;
static const struct policy *pol;
static struct sg_resolver res[1];
static struct dns_msg *msg;

struct st {
	struct flowtab *ft;
	struct dnsbind *binds;
	struct dnspend *pend;
	uint64_t seq;
	int64_t now;
};

static void on_record(void *ctx, const struct gw_record *r)
{
	(void)ctx;
	if (r->kind == GW_REC_DNS && (!r->q || !r->status))
		__builtin_trap();
}

static int on_answer(void *ctx, const struct gw_pkt *q, const uint8_t *a, size_t n)
{
	(void)ctx;
	(void)q;
	return a && n >= 12 ? 0 : -1;
}

static bool on_own(void *ctx, const struct dnspend_key *k)
{
	(void)ctx;
	(void)k;
	return false;
}

static bool init(void)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = NULL;

	if (set)
		return true;
	if (config_load_buffer("f.yaml", yaml, strlen(yaml), &c, &e) ||
	    policy_set_build(c->policies, c->n_policies, NULL, &set))
		return false;
	config_free(c);
	pol = policy_find(set, NULL);
	msg = malloc(sizeof(*msg));
	res[0].addr.family = AF_INET;
	memcpy(res[0].addr.bytes, RESOLVER, 4);
	res[0].port = 53;
	return pol && msg;
}

static uint16_t sum(uint32_t s, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* IPv4 + TCP (flags, seq) or UDP around pay[0..n) into b. */
static size_t build(uint8_t *b, bool is_tcp, const uint8_t *src, uint16_t sp,
		    const uint8_t *dst, uint16_t dp, uint32_t seq, uint8_t flags,
		    const uint8_t *pay, size_t n, bool bad_csum)
{
	size_t hl = is_tcp ? 20 : 8, tot = 20 + hl + n;
	uint8_t *t = b + 20, ph[12];
	uint16_t c;

	memset(b, 0, 20 + hl);
	b[0] = 0x45; b[2] = (uint8_t)(tot >> 8); b[3] = (uint8_t)tot; b[8] = 64;
	b[9] = is_tcp ? IPPROTO_TCP : IPPROTO_UDP;
	memcpy(b + 12, src, 4);
	memcpy(b + 16, dst, 4);
	c = (uint16_t)~sum(0, b, 20);
	b[10] = (uint8_t)(c >> 8); b[11] = (uint8_t)c;
	t[0] = (uint8_t)(sp >> 8); t[1] = (uint8_t)sp; t[2] = (uint8_t)(dp >> 8); t[3] = (uint8_t)dp;
	if (n)
		memcpy(t + hl, pay, n);
	if (!is_tcp) {
		t[4] = (uint8_t)((8 + n) >> 8); t[5] = (uint8_t)(8 + n);
		return tot;
	}
	t[4] = (uint8_t)(seq >> 24); t[5] = (uint8_t)(seq >> 16);
	t[6] = (uint8_t)(seq >> 8); t[7] = (uint8_t)seq;
	t[12] = 5 << 4; t[13] = flags; t[14] = 0xff;
	memcpy(ph, src, 4); memcpy(ph + 4, dst, 4);
	ph[8] = 0; ph[9] = IPPROTO_TCP; ph[10] = (uint8_t)((20 + n) >> 8); ph[11] = (uint8_t)(20 + n);
	c = (uint16_t)~sum(sum(0, ph, 12), t, 20 + n);
	if (bad_csum)
		c ^= 0x5555;
	t[16] = (uint8_t)(c >> 8); t[17] = (uint8_t)c;
	return tot;
}

/* name (a trailing dot and, for a Host, a ":port" allowed) is exactly want. */
static bool names(const char *name, const char *want, bool host)
{
	size_t n = strlen(name), w = strlen(want);
	const char *colon = host ? strchr(name, ':') : NULL;

	if (colon)
		n = (size_t)(colon - name);
	if (n == w + 1 && name[w] == '.')
		n = w;
	return n == w && strncasecmp(name, want, w) == 0;
}

/* An allowed flow to the bound address shows the bound name, and nothing else. */
static void check_names(const struct flow *f)
{
	static const char *const read[] = { "tls", "http", "h2c", "unknown" };
	bool is_read = false;

	if (!f->decided || f->verdict != NFT_MARK_ALLOW || memcmp(f->dst, API, 4) != 0)
		return;
	if (f->sni[0] && !names(f->sni, "api.web.test", false))
		__builtin_trap();
	if (f->http_host[0] && !names(f->http_host, "api.web.test", true) &&
	    !names(f->http_host, "198.18.1.10", true))
		__builtin_trap();
	for (size_t i = 0; f->parse && i < sizeof(read) / sizeof(read[0]); i++)
		is_read |= strcmp(f->parse, read[i]) == 0;
	if (is_read && !f->sni[0] && !f->http_host[0])
		__builtin_trap();
}

static void run(struct st *s, const uint8_t *b, size_t n)
{
	struct gw_packet_in in = { .bytes = b, .len = n, .mark = nft_mark_make(3), .sid = "f",
				   .uid = -1, .pid = -1, .now_ms = ++s->now };
	struct gw_policy_view v = { .enforce = true, .pol = pol, .res = res, .n_res = 1,
				    .ttl_min_ms = 1000, .ttl_max_ms = 60000, .binds = s->binds };
	struct gw_decide_hooks h = { NULL, on_record, on_answer, on_own };
	struct gw_flow_state fs = { .pend = s->pend, .msg = msg };
	struct gw_decision d;
	bool fresh;

	if (!gw_decide_read(&in, true, &d))
		return;
	fs.f = gw_flow_lookup(s->ft, &in.p, &fs.reply, &fresh);
	if (fs.f && fresh) {
		fs.f->flow_id = ++s->seq;
		gw_flow_start(fs.f, &in, &v, &d);
	}
	gw_decide_packet(&in, &fs, &v, &h, &d);
	if (!fs.f || fs.reply || in.p.proto != IPPROTO_TCP || fs.f->is_dns)
		return;
	/* Never a client byte out on a guess, never an allow mark for an undecided flow. */
	if (d.verdict == NF_ACCEPT && nft_mark_verdict(d.mark) != NFT_MARK_DENY &&
	    in.p.payload_len && (!fs.f->decided || fs.f->verdict != NFT_MARK_ALLOW))
		__builtin_trap();
	if (nft_mark_verdict(d.mark) == NFT_MARK_ALLOW &&
	    (!fs.f->decided || fs.f->verdict != NFT_MARK_ALLOW))
		__builtin_trap();
	check_names(fs.f);
}

/* The session resolves api.web.test: its address is bound. */
static void resolve(struct st *s)
{
	static const uint8_t q[] = { 0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'a', 'p',
				     'i', 3, 'w', 'e', 'b', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1 };
	uint8_t a[64], b[128];

	memcpy(a, q, sizeof(q));
	a[2] = 0x81; a[3] = 0x80; a[7] = 1;
	memcpy(a + sizeof(q), (const uint8_t[]){ 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4 }, 12);
	memcpy(a + sizeof(q) + 12, API, 4);
	run(s, b, build(b, false, CLIENT, 5353, RESOLVER, 53, 0, 0, q, sizeof(q), false));
	run(s, b, build(b, false, RESOLVER, 53, CLIENT, 5353, 0, 0, a, sizeof(q) + 16, false));
}

static void one(struct st *s, uint8_t op, uint8_t off, const uint8_t *p, size_t n)
{
	uint8_t b[400];
	uint8_t fl = (uint8_t)(PKT_TCP_ACK | (op & 8 ? PKT_TCP_SYN : 0) |
			       (op & 16 ? PKT_TCP_FIN : 0) | (op & 64 ? PKT_TCP_RST : 0));
	uint16_t cport = op & 1 ? 40001 : 40002;
	uint32_t seq = op & 8 ? 999 : 1000 + off;
	size_t len;

	if (op & 8)
		fl &= (uint8_t)~PKT_TCP_ACK;
	switch (op & 7) {
	case 0: case 1:
		len = build(b, true, CLIENT, cport, API, 443, seq, fl, p, n, op & 32);
		break;
	case 2: case 3:
		len = build(b, true, CLIENT, cport, API, 80, seq, fl, p, n, op & 32);
		break;
	case 4:
		len = build(b, false, CLIENT, 5353, RESOLVER, 53, 0, 0, p, n, false);
		break;
	case 5:
		len = build(b, false, RESOLVER, 53, CLIENT, 5353, 0, 0, p, n, false);
		break;
	case 6:
		len = build(b, op & 8 ? true : false, CLIENT, 53, OTHER, 9000, seq, fl, p, n,
			    false);
		break;
	default:
		run(s, p, n);   /* the bytes as an IP packet */
		return;
	}
	run(s, b, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct st s = { .now = 1000 };
	size_t at = 0;

	if (!init())
		return 0;
	if (flowtab_new(64, &s.ft) || dnsbind_new(64, &s.binds) || dnspend_new(64, &s.pend))
		goto out;
	resolve(&s);
	for (unsigned i = 0; i < 64 && at + 3 <= size; i++) {
		uint8_t op = data[at], off = data[at + 1];
		size_t n = data[at + 2];

		at += 3;
		if (n > size - at)
			n = size - at;
		if (n > 300)
			n = 300;
		one(&s, op, off, data + at, n);
		at += n;
	}
out:
	flowtab_free(s.ft);
	dnsbind_free(s.binds);
	dnspend_free(s.pend);
	return 0;
}
