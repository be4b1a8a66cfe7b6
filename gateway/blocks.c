/*
 * Blocked attempts per session: a total for /metrics and a fixed window counting the
 * recent ones, so a burst (gateway.block_burst within gateway.block_window) becomes one
 * policy.violation event per window. Under g->lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gw_int.h"

#define BLK_BUCKETS 256u

struct blk_node {
	struct blk_node *next;
	uint32_t id;
	char sid[MARKTAB_ID_MAX + 1];
	uint64_t total;
	int64_t win_start;
	unsigned win_n;
	bool reported;          /* this window already gave its event */
};

struct gw_blocks {
	struct blk_node *b[BLK_BUCKETS];
};

int gw_blocks_new(struct gw_blocks **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void gw_blocks_free(struct gw_blocks *b)
{
	struct blk_node *n, *next;

	if (!b)
		return;
	for (size_t i = 0; i < BLK_BUCKETS; i++)
		for (n = b->b[i]; n; n = next) {
			next = n->next;
			free(n);
		}
	free(b);
}

static struct blk_node **slot(struct gw_blocks *b, uint32_t id)
{
	struct blk_node **pp = &b->b[id % BLK_BUCKETS];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	return pp;
}

bool gw_blocks_hit(struct gw_blocks *b, uint32_t id, const char *sid, int64_t now_ms,
		   unsigned burst, int64_t window_ms)
{
	struct blk_node **pp = slot(b, id), *n = *pp;

	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return false;   /* counting is best effort; the block itself happened */
		n->id = id;
		n->win_start = now_ms;
		*pp = n;
	}
	snprintf(n->sid, sizeof(n->sid), "%s", sid);
	n->total++;
	if (now_ms - n->win_start >= window_ms) {
		n->win_start = now_ms;
		n->win_n = 0;
		n->reported = false;
	}
	n->win_n++;
	if (burst == 0 || n->reported || n->win_n <= burst)
		return false;
	n->reported = true;
	return true;
}

void gw_blocks_forget(struct gw_blocks *b, uint32_t id)
{
	struct blk_node **pp = slot(b, id), *n = *pp;

	if (n) {
		*pp = n->next;
		free(n);
	}
}

void gw_blocks_metrics(struct gw_blocks *b, FILE *out)
{
	const struct blk_node *n;

	fprintf(out, "# HELP sandgate_gateway_session_blocked_total Blocked (or would-block) "
		     "attempts per session\n# TYPE sandgate_gateway_session_blocked_total "
		     "counter\n");
	for (size_t i = 0; i < BLK_BUCKETS; i++)
		for (n = b->b[i]; n; n = n->next)
			fprintf(out, "sandgate_gateway_session_blocked_total{session=\"%s\"} %llu\n",
				n->sid, (unsigned long long)n->total);
}
