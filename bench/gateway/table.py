#!/usr/bin/env python3
"""Medians, ratios and targets of bench/gateway/run.sh's raw TSV (cfg round metric value),
printed as the markdown table of docs/bench-gateway.md."""
import statistics
import sys
from collections import defaultdict

CFGS = ["A", "B", "C", "I", "G", "D"]
# metric: (label, higher is better, target description, check(med) -> bool or None)
ROWS = [
    ("bulk_gbit_s", "bulk TCP, Gbit/s (iperf3, 1 stream)", "C ≥ 0.95 × B",
     lambda m: m["C"] >= 0.95 * m["B"]),
    ("dns_qps", "DNS queries/s (dnsperf → dnsmasq)", "C ≥ 0.8 × A",
     lambda m: m["C"] >= 0.8 * m["A"]),
    ("tcp_conn_s", "new TCP connections/s (HTTP/1.0 GET, nginx)", "C ≥ 0.6 × A, C/A > D/G",
     lambda m: m["C"] >= 0.6 * m["A"] and m["C"] / m["A"] > m["D"] / m["G"]),
    ("tls_hs_s", "HTTPS handshakes/s (TLS 1.3, P-256, nginx)", "C ≥ 0.6 × A, C/A > D/G",
     lambda m: m["C"] >= 0.6 * m["A"] and m["C"] / m["A"] > m["D"] / m["G"]),
    ("udp_rtt_p50_us", "UDP round trip p50, µs (one flow)", "added: C − A, D − G", None),
    ("udp_rtt_p99_us", "UDP round trip p99, µs (one flow)", "added: C − A, D − G", None),
    ("udpnew_rtt_p50_us", "UDP round trip p50, µs (new flow each)", "added: C − A, D − G", None),
    ("udpnew_rtt_p99_us", "UDP round trip p99, µs (new flow each)", "added: C − A, D − G", None),
]


def sign(x):
    return ("+" if x >= 0 else "−") + fmt(abs(x))


def load(path):
    vals = defaultdict(list)
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4 or parts[3] in ("", "null"):
                continue
            vals[(parts[0], parts[2])].append(float(parts[3]))
    return vals


def fmt(x):
    if x is None:
        return "–"
    return f"{x:.2f}" if abs(x) < 100 else f"{x:.0f}"


def threads(path):
    """sandgated's CPU per thread group (ticks of the whole round), median of the rounds."""
    try:
        lines = [l.rstrip("\n").split("\t") for l in open(path)]
    except OSError:
        return
    per = defaultdict(lambda: defaultdict(float))   # (cfg, round) -> group -> ticks
    for cfg, rnd, _tid, comm, ticks in (l for l in lines if len(l) == 5):
        group = ("packet path: NFQUEUE workers" if comm.startswith("sg-nfq") else
                 "conntrack thread" if comm == "sg-conntrack" else
                 "metrics (libmicrohttpd)" if comm.startswith("MHD") else
                 "journal, index, sinks, main")
        per[(cfg, rnd)][group] += float(ticks)
    groups = sorted({g for d in per.values() for g in d})
    print("\n| sandgated CPU share by thread | " + " | ".join(
        c for c in ("C", "I") if any(k[0] == c for k in per)) + " |")
    print("|---|" + "---|" * len([c for c in ("C", "I") if any(k[0] == c for k in per)]))
    for g in groups:
        cells = []
        for c in ("C", "I"):
            shares = [d[g] / sum(d.values()) for k, d in per.items() if k[0] == c and sum(d.values())]
            if any(k[0] == c for k in per):
                cells.append(f"{100 * statistics.median(shares):.0f} %" if shares else "–")
        print(f"| {g} | " + " | ".join(cells) + " |")


def enforcing(vals):
    """E, the enforcing gateway, when the run had it: its medians against A and C."""
    if not any(k[0] == "E" for k in vals):
        return
    print("\n| workload | E sandgate enforcing | E/A | E/C |")
    print("|---|---|---|---|")
    for key, label, _target, _check in ROWS:
        med = {c: statistics.median(vals[(c, key)]) if vals[(c, key)] else None
               for c in ("A", "C", "E")}
        r = lambda a, b: med[a] / med[b] if med[a] is not None and med[b] else None
        print(f"| {label} | {fmt(med['E'])} | {fmt(r('E', 'A'))} | {fmt(r('E', 'C'))} |")
    q = vals[("E", "queued_pkts")]
    if q:
        print(f"| packets queued to sandgated per round | {fmt(statistics.median(q))} | | |")


def main():
    vals = load(sys.argv[1])
    print("| workload | A none | B rules | C sandgate | I sandgate, no index | G none (local) "
          "| D OpenSnitch (local) | C/A | C/B | I/A | D/G | target | result |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key, label, target, check in ROWS:
        med = {c: statistics.median(vals[(c, key)]) if vals[(c, key)] else None for c in CFGS}
        ratio = lambda a, b: med[a] / med[b] if med[a] is not None and med[b] else None
        if check is None:
            res = (f"{sign(med['C'] - med['A'])} / {sign(med['D'] - med['G'])}"
                   if None not in (med["A"], med["C"], med["D"], med["G"]) else "–")
        else:
            try:
                res = "pass" if check(med) else "FAIL"
            except (TypeError, ZeroDivisionError):
                res = "–"
        print(f"| {label} | " + " | ".join(fmt(med[c]) for c in CFGS) +
              f" | {fmt(ratio('C', 'A'))} | {fmt(ratio('C', 'B'))} | {fmt(ratio('I', 'A'))}"
              f" | {fmt(ratio('D', 'G'))}"
              f" | {target} | {res} |")
    for key, label in (("cpu_us_per_queued_pkt", "sandgated CPU per queued packet, µs"),
                       ("queued_pkts", "packets queued to sandgated per round")):
        c, i = vals[("C", key)], vals[("I", key)]
        if c or i:
            print(f"| {label} | | | {fmt(statistics.median(c) if c else None)} | "
                  f"{fmt(statistics.median(i) if i else None)} | | | | | | | | |")
    enforcing(vals)
    threads(sys.argv[1] + ".threads")
    n = max((len(v) for v in vals.values()), default=0)
    print(f"\nMedians of {n} rounds; raw figures: {sys.argv[1]}")


if __name__ == "__main__":
    main()
