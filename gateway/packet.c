/*
 * The decision on one queued packet (gateway/packet.h), without I/O: whose flow it is,
 * what its first bytes say (DNS, or the first flight of a new flow), and the verdict:
 * NF_ACCEPT with the session mark carrying allow (or deny) once the flow is decided,
 * unchanged while the flow's first bytes are still being read (it stays queued),
 * NF_DROP for what is held back or cannot be read. The caller (gateway/handle.c) holds
 * the flow table, the bindings and the pending queries under its lock around the call.
 */
#include <netinet/in.h>   /* before linux/netfilter.h: glibc's in.h wins */
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/flight.h"
#include "gateway/gw_int.h"
#include "gateway/flow_names.h"
#include "gateway/packet.h"
#include "nft/nft.h"

/*
 * A DNS query: to port 53. What comes from port 53 is DNS only as the reply of such a
 * flow the session opened (to a configured resolver: others are refused); a packet
 * from port 53 matching no flow is a new flow of its own, decided by the policy.
 */
static bool is_dns(const struct gw_pkt *p)
{
	return p->has_ports && p->dport == 53;
}

bool gw_decide_read(struct gw_packet_in *in, bool enforce, struct gw_decision *out)
{
	struct gw_pkt *p = &in->p;

	memset(out, 0, sizeof(*out));
	out->verdict = NF_ACCEPT;
	out->mark = in->mark;
	memset(p, 0, sizeof(*p));
	if (!in->bytes || gw_pkt_parse(in->bytes, in->len, p) != 0 || p->later_fragment ||
	    (p->first_fragment && enforce)) {
		out->n.unparsable++;
		/* Fragments reach the queue only when conntrack could not reassemble them:
		 * what cannot be read is not let through when enforcing. */
		out->verdict = p->later_fragment && !enforce ? NF_ACCEPT : NF_DROP;
		return false;
	}
	/* A packet the queue gave cut (a GSO/GRO packet over the 64 KiB copy range: BIG
	 * TCP, or a raised gro_max_size): its tail would go out unread, a second request
	 * head on a followed HTTP flow among it. Enforcing, it is dropped; TCP sends the
	 * lost bytes again in segments of one MSS, which are read. */
	if (in->truncated) {
		out->n.truncated++;
		out->verdict = enforce ? NF_DROP : NF_ACCEPT;
		return false;
	}
	/* Fast Open: data on a SYN would reach the server before anything is read. It is
	 * taken off (the client's TCP sends it again after the handshake, where it is
	 * read as the first flight). */
	if (enforce && p->proto == IPPROTO_TCP && p->payload_len &&
	    (p->tcp_flags & (PKT_TCP_SYN | PKT_TCP_ACK)) == PKT_TCP_SYN) {
		if (gw_pkt_strip_payload(in->bytes, in->len, p, out->mangle, sizeof(out->mangle),
					 &out->mangle_len) != 0) {
			out->mangle_len = 0;
			out->verdict = NF_DROP;
			return false;
		}
		p->payload_len = 0;
	}
	return true;
}

void gw_pkt_key(const struct gw_pkt *p, struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)p->family;
	k->proto = p->proto;
	k->sport = p->sport;
	k->dport = p->dport;
	memcpy(k->src, p->src, p->family == AF_INET ? 4 : 16);
	memcpy(k->dst, p->dst, p->family == AF_INET ? 4 : 16);
}

/*
 * The first packet of a flow is always queued in its original direction (replies of
 * undecided flows are not queued, except DNS, whose query came first). It is the SYN
 * (every SYN is queued), or, for a flow the gateway did not see begin (one older than
 * this daemon), a later segment: the flow starts there, its stream at its first data
 * segment.
 */
struct flow *gw_flow_lookup(struct flowtab *t, const struct gw_pkt *p, bool *reply,
			    bool *fresh)
{
	struct flow_key k, rk;
	struct flow *f;

	gw_pkt_key(p, &k);
	*reply = false;
	*fresh = false;
	if ((f = flowtab_find(t, &k)) != NULL)
		return f;
	flow_key_reverse(&k, &rk);
	if ((f = flowtab_find(t, &rk)) != NULL) {
		*reply = true;
		return f;
	}
	if (flowtab_add(t, &k, &f) != 0)
		return NULL;
	*fresh = true;
	return f;
}

void gw_flow_start(struct flow *f, const struct gw_packet_in *in,
		   const struct gw_policy_view *v, struct gw_decision *out)
{
	const struct gw_pkt *p = &in->p;
	size_t al = p->family == AF_INET ? 4 : 16;

	f->mark_id = nft_mark_id(in->mark);
	snprintf(f->sid, sizeof(f->sid), "%s", in->sid);
	f->family = p->family;
	f->proto = p->proto;
	memcpy(f->src, p->src, al);
	memcpy(f->dst, p->dst, al);
	f->sport = p->sport;
	f->dport = p->dport;
	f->has_ports = p->has_ports;
	f->start_ms = in->now_ms;
	f->last_report_ms = f->start_ms;
	f->start_wall = in->now_wall;
	f->uid = in->uid;
	f->is_dns = is_dns(p);
	f->dns_resolver = f->is_dns && p->proto == IPPROTO_UDP && p->dport == 53 &&
			  gw_view_resolver_ok(v, p->family, p->dst, p->dport);
	if (dnsbind_lookup(v->binds, f->mark_id, p->family, p->dst, f->start_ms, f->domain,
			   sizeof(f->domain)) != 0)
		f->domain[0] = '\0';
	out->n.flows_new++;
}

/* Frees what reading f's first bytes needed. */
static void flow_unread(struct flow *f)
{
	free(f->buf);
	f->buf = NULL;
	f->len = 0;
	http_follow_free(f->hf);
	f->hf = NULL;
}

static void put(const struct gw_decide_hooks *h, const struct gw_record *r)
{
	if (h && h->record)
		h->record(h->ctx, r);
}

/* A blocked or would-block attempt of f's session (after a count of the flow). */
static void blocked(const struct gw_decide_hooks *h, struct flow *f, struct gw_decision *out)
{
	struct gw_record r = { .kind = GW_REC_BLOCKED, .mark_id = f->mark_id, .sid = f->sid,
			       .reason = f->reason };

	if (f->verdict == NFT_MARK_DENY)
		out->n.blocked_flows++;
	if (f->vstr && !strcmp(f->vstr, "would_block"))
		out->n.would_block_flows++;
	if (f->verdict == NFT_MARK_DENY || (f->vstr && !strcmp(f->vstr, "would_block")))
		put(h, &r);
}

/* f was decided by this packet: keep a copy for its event, count a block. */
static void on_decided(const struct gw_decide_hooks *h, struct flow *f,
		       struct gw_decision *out)
{
	f->decided = true;
	out->decided = true;
	out->flow = *f;
	out->flow.dtcp[0] = out->flow.dtcp[1] = NULL;
	out->flow.buf = NULL;
	out->flow.hf = NULL;
	blocked(h, f, out);
}

/* The judge of what the first-flight reader read (gateway/flight.h). */
struct judge_ctx {
	const struct gw_policy_view *v;
	const struct gw_decide_hooks *h;
	struct gw_decision *out;
	int64_t now_ms;
};

static bool judge(void *ctx, struct flow *f)
{
	struct judge_ctx *c = ctx;
	bool first = !f->decided;
	struct gw_record r = { .kind = GW_REC_CONNECT, .flow = f };

	(void)gw_flow_decide(c->v, f, false, c->now_ms);
	if (first) {
		on_decided(c->h, f, c->out);
	} else if (f->rerecord) {
		/* A later request head (another Host), or what broke the reading: on record
		 * as a net.connect of the same flow_id. */
		f->rerecord = false;
		blocked(c->h, f, c->out);
		r.mark_id = f->mark_id;
		r.sid = f->sid;
		put(c->h, &r);
	}
	return f->verdict == NFT_MARK_ALLOW;
}

/*
 * A client TCP segment of a flow the policy decides (enforcing): no payload byte leaves
 * before its first flight is read and allowed (gateway/flight.c). out->verdict NF_DROP
 * for what is held back; returns the mark.
 */
static uint32_t tcp_flight(const struct gw_packet_in *in, struct flow *f,
			   struct judge_ctx *jc)
{
	const struct gw_pkt *p = &in->p;
	struct flight_judge j = { judge, jc };
	enum flight_act act;

	/*
	 * A SYN queued for a flow its first flight allowed is a new connection: the old one's
	 * conntrack entry carries the verdict, so a SYN of it is never queued. The client
	 * reset the old one and connected again from the same port (conntrack made a new
	 * entry), before the conntrack thread read the old entry's end and retired the flow.
	 * The old verdict is not the new connection's (its first flight is not read yet):
	 * until 2026-12-03 it was given, and 7 of 20 such connections in t_gateway_evasion
	 * got a hello with another SNI out unread. Dropped until the flow is retired (the
	 * old entry's destroy event comes at once: conntrack ends it to make the new one);
	 * TCP sends the SYN again, which starts a new flow. (A flow decided at its SYN, on
	 * its address alone, has no first flight read: base_set is false, nothing changes.)
	 */
	if (f->decided && f->verdict == NFT_MARK_ALLOW && f->base_set &&
	    (p->tcp_flags & (PKT_TCP_SYN | PKT_TCP_ACK)) == PKT_TCP_SYN) {
		jc->out->n.syn_tuple_reused++;
		jc->out->verdict = NF_DROP;
		return in->mark;
	}
	if (f->decided && (f->committed || f->verdict == NFT_MARK_DENY))
		return nft_mark_with_verdict(in->mark, f->verdict);
	if (!f->decided && ++f->npkts == 1 && (p->tcp_flags & PKT_TCP_SYN) &&
	    gw_flow_decide(jc->v, f, true, in->now_ms)) {
		/* At the SYN, a flow no name could allow: nothing of it leaves (report mode:
		 * would_block, and the flow is not read). */
		on_decided(jc->h, f, jc->out);
		f->committed = true;
		return nft_mark_with_verdict(in->mark, f->verdict);
	}
	/* A segment the server would throw away (bad checksum) is not read either. */
	if (p->payload_len && !in->csum_unready && !gw_pkt_tcp_csum_ok(p)) {
		jc->out->verdict = NF_DROP;
		return in->mark;
	}
	act = gw_flight_segment(f, p, &j);
	if (act == FLIGHT_PASS && !f->decided && (p->tcp_flags & (PKT_TCP_FIN | PKT_TCP_RST)) &&
	    strcmp(gw_flight_unfinished(f), "no_data") != 0) {
		/* The client gave up before its first flight was complete. A flow whose SYN
		 * was not seen (its entry lost or made mid-stream) showed nothing that could
		 * be read: it is not allowed on its FIN (its held bytes would follow). */
		f->parse = gw_flight_unfinished(f);
		act = judge(jc, f) ? FLIGHT_PASS : FLIGHT_BLOCK;
		f->committed = act == FLIGHT_PASS;
	}
	/* A FIN or RST before any byte was read decides nothing: it passes and the flow
	 * stays undecided (recorded at its end, late). Bytes before it may have been dropped
	 * ahead of the queue (a full queue; the session's --net-rate bucket passes a 52-byte
	 * FIN and drops a full segment) and come again, and the server may not have taken
	 * it (bad checksum, out of its window). Allowed here, the flow was committed and
	 * those bytes went out unread (test_gateway_replay, test_fin_before_unread_bytes). */
	if (act == FLIGHT_HOLD) {
		jc->out->verdict = NF_DROP;
		return in->mark;
	}
	if (act == FLIGHT_BLOCK || f->verdict == NFT_MARK_DENY) {
		flow_unread(f);
		return nft_mark_with_verdict(in->mark, NFT_MARK_DENY);
	}
	if (!f->committed)
		return in->mark;   /* out, and the flow's next segments still come here */
	flow_unread(f);
	return nft_mark_with_verdict(in->mark, f->verdict);
}

/*
 * No flow to follow (table full): decide on the spot, without names: a query is read
 * (and goes only to a configured resolver), anything else is allowed only when the
 * gateway just observes.
 */
static uint32_t untracked(const struct gw_packet_in *in, struct gw_flow_state *fs,
			  const struct gw_policy_view *v, const struct gw_decide_hooks *h,
			  struct gw_decision *out)
{
	const struct gw_pkt *p = &in->p;

	out->n.flows_untracked++;
	if (is_dns(p) && gw_dns_packet(in, fs, v, h, out) == GW_DNS_DROP)
		out->verdict = NF_DROP;
	if (v->enforce && (!is_dns(p) || !gw_view_resolver_ok(v, p->family, p->dst, p->dport)))
		return nft_mark_with_verdict(in->mark, NFT_MARK_DENY);
	return nft_mark_with_verdict(in->mark, NFT_MARK_ALLOW);
}

/* A packet of an undecided flow that is not held by the first-flight reader. */
static void undecided(const struct gw_packet_in *in, struct flow *f, bool reply,
		      const struct gw_policy_view *v, const struct gw_decide_hooks *h,
		      struct gw_decision *out)
{
	const struct gw_pkt *p = &in->p;

	f->npkts++;
	/* At the SYN (or the first queued packet of a kernel-accepted SYN): a flow no name
	 * could allow is decided at once, so nothing of it reaches the destination. (UDP's
	 * names come with its first packet.) */
	if (f->npkts == 1 && !reply && p->proto == IPPROTO_TCP &&
	    gw_flow_decide(v, f, true, in->now_ms))
		on_decided(h, f, out);
	else if (gw_names_feed(f, p, reply) && gw_flow_decide(v, f, false, in->now_ms))
		on_decided(h, f, out);
	if (f->decided)    /* the first flight is read: its bytes are not needed */
		flow_unread(f);
}

void gw_decide_packet(const struct gw_packet_in *in, struct gw_flow_state *fs,
		      const struct gw_policy_view *v, const struct gw_decide_hooks *h,
		      struct gw_decision *out)
{
	const struct gw_pkt *p = &in->p;
	struct flow *f = fs->f;
	bool reply = fs->reply;
	struct judge_ctx jc = { v, h, out, in->now_ms };
	struct gw_record again = { .kind = GW_REC_AGAIN, .flow = f, .pkt = p };

	if (!f) {
		out->mark = untracked(in, fs, v, h, out);
		return;
	}
	/* A blocked flow's new SYN or datagram is another attempt: counted (blocksum.c). */
	if (f->decided && !reply) {
		again.mark_id = f->mark_id;
		again.sid = f->sid;
		put(h, &again);
	}
	if (v->enforce && v->pol && p->proto == IPPROTO_TCP && !f->is_dns && !reply) {
		out->mark = tcp_flight(in, f, &jc);
		return;
	}
	if (!f->decided)
		undecided(in, f, reply, v, h, out);
	/* A reply of a TCP flow whose verdict is still being read: let it in unchanged. */
	if (reply && p->proto == IPPROTO_TCP && !f->is_dns && !f->committed && v->enforce) {
		out->mark = in->mark;
		return;
	}
	if (f->is_dns && gw_dns_packet(in, fs, v, h, out) == GW_DNS_DROP)
		out->verdict = NF_DROP;
	out->mark = f->decided ? nft_mark_with_verdict(in->mark, f->verdict) : in->mark;
}
