#!/usr/bin/env bash
# bench/policy/run.sh [RUNS]: policy decision latency and compile time for a policy of
# 10k names and 1k CIDRs, side by side with a linear-scan baseline. Release build.
# Prints the medians over RUNS runs (each run: one process, same seed); the figures go in
# docs/bench-policy.md. BUILD=dir overrides the build directory (default build/release).
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-5}
B=${BUILD:-build/release}
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$B" -j2 --target bench_policy >/dev/null
TMP=$(mktemp -d /var/tmp/sgbench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

for ((r = 0; r < RUNS; r++)); do
	# Single-threaded, like one NFQUEUE worker; not pinned: on a shared machine the
	# scheduler's choice of the idler core disturbs the figures less than a fixed one.
	"$B/bench/bench_policy" 42 >"$TMP/run$r.txt"
done
cat "$TMP"/run*.txt >"$TMP/all.txt"
get() { awk -v k="$1" -v f="$2" '$1 == k {print $f}' "$TMP/all.txt" | median; }

echo "runs=$RUNS (medians of the runs); $(grep '^rules' "$TMP/run0.txt"); $(cc --version | head -1); load: $(cut -d" " -f1-3 /proc/loadavg)"
echo "parse (config_load_buffer): $(get parse_ms 2) ms"
echo "build (policy_set_build):   $(get build_ms 2) ms"
for k in query flow; do
	h50=$(get ${k}_hashed 2); h99=$(get ${k}_hashed 3)
	l50=$(get ${k}_linear 2); l99=$(get ${k}_linear 3)
	echo "$k: policy ${h50} ns median, ${h99} ns p99 | linear scan ${l50} ns median, ${l99} ns p99 | speed-up $(awk -v a="$l50" -v b="$h50" 'BEGIN{printf "%.0f", a/b}')x"
done
echo "flows allowed in the mix: $(get flow_allowed_share 2)"
