/*
 * Kernel queue drops: /proc/net/netfilter/nfnetlink_queue of the gateway's namespace
 * counts, per queue, packets dropped because the queue was full (queue_dropped) and
 * because the netlink socket could not take them (user_dropped). Every increase becomes
 * a sensor.loss event: a dropped packet is a packet nobody recorded.
 */
#include <inttypes.h>
#include <stdio.h>

#include "gateway/gw_int.h"

/* One line: queue portid total copy_mode copy_range queue_dropped user_dropped seq 1 */
static void one_line(struct gateway *g, const char *line)
{
	unsigned q, portid, total, mode, range;
	uint64_t qd, ud, *last;
	unsigned idx;
	char why[96];

	if (sscanf(line, "%u %u %u %u %u %" SCNu64 " %" SCNu64, &q, &portid, &total, &mode,
		   &range, &qd, &ud) != 7)
		return;
	if (q < g->cfg.queue_base || q - g->cfg.queue_base >= g->cfg.queues || q - g->cfg.queue_base >= 64)
		return;
	idx = q - g->cfg.queue_base;
	last = g->qdrop_last[0];
	if (qd > last[idx]) {
		atomic_fetch_add_explicit(&g->st.queue_dropped, qd - last[idx], memory_order_relaxed);
		snprintf(why, sizeof(why), "nfqueue %u full (queue_len reached)", q);
		gw_ev_loss(g, "nfqueue", (int64_t)(qd - last[idx]), why);
	}
	last[idx] = qd;
	last = g->qdrop_last[1];
	if (ud > last[idx]) {
		atomic_fetch_add_explicit(&g->st.user_dropped, ud - last[idx], memory_order_relaxed);
		snprintf(why, sizeof(why), "nfqueue %u: netlink socket full", q);
		gw_ev_loss(g, "nfqueue", (int64_t)(ud - last[idx]), why);
	}
	last[idx] = ud;
}

void gw_qstats_poll(struct gateway *g)
{
	/* thread-self: /proc/self/net would be the main thread's namespace. */
	FILE *f = fopen("/proc/thread-self/net/netfilter/nfnetlink_queue", "re");
	char line[256];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		one_line(g, line);
	fclose(f);
}
