#!/usr/bin/env python3
"""Before/after table of bench/gateway/run.sh's raw TSV (cfg round metric value) for
CFGS="A C0 C E0 E" with BASE=<the build before>: medians of the rounds, each
configuration's ratio to A, and the after/before ratio paired by round (C/C0, E/E0 of
the same round, then the median of those), so a change of machine load between rounds
cancels out."""
import statistics
import sys
from collections import defaultdict

ROWS = [("bulk_gbit_s", "bulk TCP, Gbit/s"), ("dns_qps", "DNS queries/s"),
        ("tcp_conn_s", "new TCP connections/s"), ("tls_hs_s", "HTTPS handshakes/s"),
        ("http_ka_req_s", "HTTP keep-alive requests/s")]
vals = defaultdict(dict)   # (cfg, metric) -> round -> value
for line in open(sys.argv[1]):
    p = line.rstrip("\n").split("\t")
    if len(p) == 4 and p[3] not in ("", "null"):
        vals[(p[0], p[2])][p[1]] = float(p[3])


def med(cfg, m):
    v = list(vals[(cfg, m)].values())
    return statistics.median(v) if v else None


def paired(a, b, m):
    r = [vals[(a, m)][k] / vals[(b, m)][k] for k in vals[(a, m)]
         if k in vals[(b, m)] and vals[(b, m)][k]]
    return statistics.median(r) if r else None


def f(x, ratio=False):
    if x is None:
        return "–"
    return f"{x:.2f}" if ratio or abs(x) < 100 else f"{x:,.0f}"


print("| workload | A none | C0 observing, before | C observing, after | E0 enforcing, before "
      "| E enforcing, after | C0/A | C/A | E0/A | E/A | **C/C0** | **E/E0** |")
print("|---|" + "---|" * 11)
for m, label in ROWS:
    meds = [med(c, m) for c in ("A", "C0", "C", "E0", "E")]
    print(f"| {label} | " + " | ".join(f(x) for x in meds) + " | " +
          " | ".join(f(paired(c, "A", m), True) for c in ("C0", "C", "E0", "E")) +
          f" | **{f(paired('C', 'C0', m), True)}** | **{f(paired('E', 'E0', m), True)}** |")
