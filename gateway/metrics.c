/* The gateway's counters in Prometheus text format (gateway_metrics, gateway/gateway.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "gateway/gw_int.h"

#define LOAD(x) ((unsigned long long)atomic_load_explicit(&(x), memory_order_relaxed))

struct counter_def {
	const char *name, *help;
	size_t off;
};

#define C(field, help) { "sandgate_gateway_" #field "_total", help, offsetof(struct gw_stats, field) }
static const struct counter_def counters[] = {
	C(packets, "Packets read from the NFQUEUE queues"),
	C(verdicts_accept, "Verdicts NF_ACCEPT"),
	C(verdicts_drop, "Verdicts NF_DROP"),
	C(batches, "Verdict batches sent"),
	C(flows_new, "New flows seen"),
	C(flows_ended, "Flows ended (conntrack destroy events)"),
	C(flows_untracked, "Packets decided without a conntrack flow"),
	C(syn_tuple_reused, "SYNs of a new connection on the tuple of an allowed flow not yet retired, dropped (TCP sends them again)"),
	C(dns_queries, "DNS queries"),
	C(dns_answers, "DNS answers"),
	C(dns_unanswered, "DNS queries that got no answer"),
	C(dns_malformed, "Malformed DNS messages"),
	C(unknown_session, "Packets of an unknown session mark (dropped)"),
	C(unparsable, "Packets whose IP header did not parse"),
	C(truncated, "Packets the queue gave cut (longer than its 64 KiB copy range: BIG TCP, a raised gro_max_size), dropped when enforcing"),
	C(queue_dropped, "Packets the kernel dropped: queue full"),
	C(user_dropped, "Packets the kernel dropped: netlink socket full"),
	C(ct_overruns, "Conntrack event socket overruns"),
	C(ct_update_overruns, "Conntrack close-update socket overruns (those flows recorded at their destroy event, later)"),
	C(emit_failed, "Events that could not be recorded"),
	C(blocked_flows, "Flows blocked by the policy"),
	C(would_block_flows, "Flows a report-only policy would have blocked"),
	C(blocked_dns, "DNS queries blocked by the policy"),
	C(dns_synth, "Answers the gateway synthesised for blocked queries"),
	C(violations, "Bursts of blocked attempts (policy.violation)"),
	C(late_connects, "Flows that ended before a decision: net.connect written at the end"),
	C(blocked_summarised, "Blocked attempts past the session's budget, counted in net.blocked_summary"),
	C(flows_closed, "TCP flows recorded at their close (FIN/RST), before conntrack forgot them"),
	C(flood_limits, "Sessions given a flood limit in the kernel (past their blocked budget)"),
	C(flood_rejected, "Attempts the kernel's flood limit rejected, counted in net.blocked_summary"),
	C(dns_flows_folded, "UDP flows to a configured resolver recorded by their net.dns lines alone (no net.connect)"),
	C(dns_flows_extra, "Of those, flows conntrack counted more of than their net.dns lines: net.flow written"),
};
#undef C

static int histogram(struct gateway *g, FILE *out)
{
	static const char *const le[GW_LAT_BUCKETS] = { "0.00001", "0.00005", "0.0001",
							"0.0005", "0.001", "0.005", "0.01",
							"0.1" };
	unsigned long long cum = 0;

	fprintf(out, "# HELP sandgate_gateway_decision_seconds Time from a flow's deciding "
		     "packet read to its verdict\n# TYPE sandgate_gateway_decision_seconds "
		     "histogram\n");
	for (int i = 0; i < GW_LAT_BUCKETS; i++) {
		cum += LOAD(g->st.lat[i]);
		fprintf(out, "sandgate_gateway_decision_seconds_bucket{le=\"%s\"} %llu\n", le[i],
			cum);
	}
	cum += LOAD(g->st.lat[GW_LAT_BUCKETS]);
	fprintf(out, "sandgate_gateway_decision_seconds_bucket{le=\"+Inf\"} %llu\n", cum);
	fprintf(out, "sandgate_gateway_decision_seconds_sum %.6f\n",
		(double)LOAD(g->st.lat_sum_us) / 1e6);
	return fprintf(out, "sandgate_gateway_decision_seconds_count %llu\n", cum) < 0 ? -1 : 0;
}

int gateway_metrics(struct gateway *g, FILE *out)
{
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		const atomic_uint_fast64_t *v =
			(const atomic_uint_fast64_t *)((const char *)&g->st + counters[i].off);

		fprintf(out, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", counters[i].name,
			counters[i].help, counters[i].name, counters[i].name,
			(unsigned long long)atomic_load_explicit(v, memory_order_relaxed));
	}
	fprintf(out, "# HELP sandgate_gateway_sessions Session marks the packet path knows\n"
		     "# TYPE sandgate_gateway_sessions gauge\nsandgate_gateway_sessions %zu\n",
		marktab_count(g->marks));
	/* No per-session series (sandgate_gateway_session_blocked_total was one): a
	 * label per session id churns series; the session's figures are in the journal
	 * (policy.violation, net.connect verdicts). */
	return histogram(g, out) == 0 && !ferror(out) ? 0 : -EIO;
}
