/*
 * The answers the gateway synthesised itself (REFUSED/NXDOMAIN for a blocked query,
 * gateway/inject.c) come back through the ruleset's input path to the session's socket
 * and are queued like any answer. No query is pending for them (a blocked query is
 * recorded at once, not kept), so they used to be logged as `unsolicited`, one more line
 * per blocked query, past any budget: a DNS flood doubled itself in the journal. The
 * last answers sent are remembered here (direct-mapped by their key, 10 s) and
 * their arrival is recognised once. Under g->lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gw_int.h"

#define SYN_SLOTS 16384u
#define SYN_KEEP_MS 10000

struct syn_slot {
	struct dnspend_key k;
	int64_t at_ms;            /* 0: empty */
};

struct gw_synth {
	struct syn_slot s[SYN_SLOTS];
};

int gw_synth_new(struct gw_synth **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void gw_synth_free(struct gw_synth *t)
{
	free(t);
}

static struct syn_slot *slot_of(struct gw_synth *t, const struct dnspend_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return &t->s[h % SYN_SLOTS];
}

void gw_synth_note(struct gateway *g, const struct gw_pkt *q, uint16_t dns_id)
{
	size_t al = q->family == AF_INET ? 4 : 16;
	struct dnspend_key k;
	struct syn_slot *s;

	if (!g->synth)
		return;
	/* The key the answer will have (gateway/dnsh.c key_of of an answer). */
	memset(&k, 0, sizeof(k));
	k.family = q->family;
	k.dns_id = dns_id;
	memcpy(k.client, q->src, al);
	memcpy(k.server, q->dst, al);
	k.cport = q->sport;
	k.sport = q->dport;
	s = slot_of(g->synth, &k);
	s->k = k;   /* a collision forgets the older one: logged unsolicited, not lost */
	s->at_ms = time_mono_ms();
}

bool gw_synth_own(struct gateway *g, const struct dnspend_key *k)
{
	struct syn_slot *s;

	if (!g->synth || k->tcp)
		return false;
	s = slot_of(g->synth, k);
	if (s->at_ms == 0 || time_mono_ms() - s->at_ms > SYN_KEEP_MS ||
	    memcmp(&s->k, k, sizeof(*k)))
		return false;
	s->at_ms = 0;   /* once: a second copy is somebody else's */
	return true;
}
