#!/usr/bin/env python3
"""Medians of bench/audit/compare.sh output (its RESULT lines), as markdown.

    python3 bench/audit/summary.py compare-output.txt

Workload overheads are given two ways: the ratio of the medians (no sensor against in a
session, over all rounds) and the median of the per-round ratios (each round's run in a
session against the same round's run without a sensor, which ran right before or after
it): the second cancels the machine's drift between rounds.
"""
import re
import statistics
import sys


def parse(path):
    rounds, rnd = [], None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"# round (\d+)", line)
        if m:
            rnd = {}
            rounds.append(rnd)
            continue
        if not line.startswith("RESULT ") or rnd is None:
            continue
        parts = line.split()
        what, who = parts[1], parts[2]
        if what == "threads":
            continue
        kv = dict(p.split("=", 1) for p in parts[3:] if "=" in p and not p.startswith("writer"))
        rnd[(what, who)] = kv
    return rounds


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def values(rounds, what, who, key):
    out = []
    for r in rounds:
        v = num(r.get((what, who), {}).get(key))
        if v is not None:
            out.append(v)
    return out


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(v, nd=3):
    return "–" if v is None else f"{v:.{nd}f}"


def storm_table(rounds):
    if not values(rounds, "storm", "none", "wall_s") and not values(rounds, "storm", "sandgate", "wall_s"):
        return
    print("| storm | complete % (median; rounds) | loss | CPU ms / 1000 execs | wall s |")
    print("|---|---|---|---|---|")
    for who in ("sandgate", "base", "auditd", "forkstat", "none"):
        pct = values(rounds, "storm", who, "pct")
        wall = values(rounds, "storm", who, "wall_s")
        if not wall:
            continue
        cpu = values(rounds, "storm", who, "cpu_ms_per_1k")
        loss = values(rounds, "storm", who, "loss")
        print(f"| {who} | {fmt(med(pct))} ({', '.join(fmt(p, 2) for p in pct)}) | "
              f"{fmt(med(loss), 0)} | {fmt(med(cpu), 0)} | {fmt(med(wall), 2)} |")


def paired(rounds, what, base, who):
    """Each round's run of who against the same round's run of base."""
    out = []
    for r in rounds:
        a = num(r.get((what, base), {}).get("wall_s"))
        b = num(r.get((what, who), {}).get("wall_s"))
        if a and b:
            out.append(b / a)
    return out


def work_table(rounds):
    print("| workload | against | baseline s | in a session s | ratio of medians | "
          "median of per-round ratios (rounds) |")
    print("|---|---|---|---|---|---|")
    for what, who in (("make", "sandgate"), ("make", "base"), ("untar", "sandgate"),
                      ("untar", "base")):
        sg = values(rounds, what, who, "wall_s")
        for base, label in (("none", "no sensor, no cgroup"),
                            ("cgroup", "the session's cgroup, no sensor")):
            b = values(rounds, what, base, "wall_s")
            pairs = paired(rounds, what, base, who)
            if not b or not sg or not pairs:
                continue
            print(f"| {what} ({who}) | {label} | {fmt(med(b))} | {fmt(med(sg))} | "
                  f"{(med(sg) / med(b) - 1) * 100:+.1f} % | "
                  f"{(med(pairs) - 1) * 100:+.1f} % "
                  f"({', '.join(f'{(p - 1) * 100:+.0f}' for p in pairs)}) |")


def fwrite_table(rounds):
    print("| file events | build | journaled (median) | rate /s, median (rounds) | overflows |")
    print("|---|---|---|---|---|")
    for who in ("sandgate", "base"):
        rate = values(rounds, "fwrite", who, "rate")
        if not rate:
            continue
        ev = values(rounds, "fwrite", who, "events")
        ovf = values(rounds, "fwrite", who, "overflows")
        print(f"| {fmt(med(values(rounds, 'fwrite', who, 'want')), 0)} per round | {who} | "
              f"{fmt(med(ev), 0)} | {fmt(med(rate), 0)} ({', '.join(fmt(r, 0) for r in rate)}) | "
              f"{fmt(sum(ovf), 0)} |")


def after_before_table(rounds):
    """This build (sandgate) against SANDGATE_BASE_BIN (base), paired within each round."""
    rows = (("storm", "wall_s", "storm wall s"), ("storm", "cpu_ms_per_1k", "storm daemon CPU ms / 1000 execs"),
            ("storm", "pct", "storm complete %"), ("make", "wall_s", "make wall s"),
            ("untar", "wall_s", "untar wall s"), ("fwrite", "rate", "fwrite journaled events / s"))
    out = []
    for what, key, label in rows:
        pairs = []
        for r in rounds:
            a = num(r.get((what, "base"), {}).get(key))
            b = num(r.get((what, "sandgate"), {}).get(key))
            if a and b:
                pairs.append(b / a)
        if pairs:
            out.append((label, med(values(rounds, what, "base", key)),
                        med(values(rounds, what, "sandgate", key)), pairs))
    if not out:
        return
    print("| measure | before (base), median | after (sandgate), median | "
          "after / before, median of per-round ratios (rounds) |")
    print("|---|---|---|---|")
    for label, b, a, pairs in out:
        print(f"| {label} | {fmt(b, 2)} | {fmt(a, 2)} | {fmt(med(pairs), 3)} "
              f"({', '.join(fmt(p, 2) for p in pairs)}) |")


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: summary.py COMPARE_OUTPUT\n")
        return 2
    rounds = parse(sys.argv[1])
    if not rounds:
        sys.stderr.write(f"summary.py: no rounds in {sys.argv[1]}\n")
        return 1
    print(f"{len(rounds)} rounds\n")
    for table in (storm_table, work_table, fwrite_table, after_before_table):
        table(rounds)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
