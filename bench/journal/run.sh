#!/usr/bin/env bash
# bench/journal/run.sh [N] [RUNS]: journal append and verify speed, side by side with the
# plain path (same lines, no chain, no hashes, no checkpoints, no fsync). Release build.
# Prints medians of RUNS runs; the figures go in docs/bench-journal.md.
# BASE=DIR (a release build dir of another tree, holding bench/bench_journal): each round
# also runs that tree's bench right after this one's, and its medians are printed too.
# Each run is made twice: on one core (taskset -c 0: producer, writer and syncer share
# it) and free (no taskset: the writer can have a core of its own, as in the daemon).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
RUNS=${2:-5}
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/release -j"$(nproc)" --target bench_journal sandgate >/dev/null
B=build/release
TMP=$(mktemp -d /var/tmp/sgbench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

: >"$TMP/journal.txt"; : >"$TMP/plain.txt"; : >"$TMP/base_journal.txt"; : >"$TMP/base_plain.txt"
: >"$TMP/free_journal.txt"; : >"$TMP/free_plain.txt"; : >"$TMP/free_base_journal.txt"; : >"$TMP/free_base_plain.txt"
for ((r = 0; r < RUNS; r++)); do
	for mode in journal plain; do
		for tree in "" ${BASE:+base_}; do
			bin="$B/bench/bench_journal"
			[ -n "$tree" ] && bin="$BASE/bench/bench_journal"
			rm -rf "$TMP/d"; mkdir -p "$TMP/d"
			# taskset: producer, writer and syncer share one core.
			taskset -c 0 "$bin" "$mode" "$TMP/d" "$N" >>"$TMP/$tree$mode.txt"
			rm -rf "$TMP/d"; mkdir -p "$TMP/d"
			"$bin" "$mode" "$TMP/d" "$N" >>"$TMP/free_$tree$mode.txt"
		done
	done
done
# A journal to verify, written by the real writer.
rm -rf "$TMP/d0"; mkdir -p "$TMP/d0"
"$B/bench/bench_journal" journal "$TMP/d0" "$N" >/dev/null
: >"$TMP/verify.txt"
for ((r = 0; r < RUNS; r++)); do
	s=$(date +%s.%N)
	if ! taskset -c 0 "$B/sandgate" verify --key "$TMP/d0/keys/journal.pub" "$TMP/d0" \
		>/dev/null 2>"$TMP/verify.err"; then
		echo "bench/journal: the journal written does not verify:" >&2
		cat "$TMP/verify.err" >&2
		exit 1
	fi
	e=$(date +%s.%N)
	echo "$s $e" | awk '{print $2 - $1}' >>"$TMP/verify.txt"
done
lines=$(cat "$TMP"/d0/journal/*.jsonl | wc -l)

j_eps=$(awk '{print $4}' "$TMP/journal.txt" | median)
j_us=$(awk '{print $5}' "$TMP/journal.txt" | median)
j_bytes=$(awk '{print $6}' "$TMP/journal.txt" | median)
j_cpu=$(awk '{print $7 * 1e6 / $2}' "$TMP/journal.txt" | median)
p_eps=$(awk '{print $4}' "$TMP/plain.txt" | median)
p_us=$(awk '{print $5}' "$TMP/plain.txt" | median)
p_cpu=$(awk '{print $7 * 1e6 / $2}' "$TMP/plain.txt" | median)
v_s=$(median <"$TMP/verify.txt")
echo "events=$N runs=$RUNS (medians)"
echo "journal: $j_eps events/s, $j_us us/event wall, $j_cpu us/event CPU (all threads), $j_bytes bytes/event"
echo "plain:   $p_eps events/s, $p_us us/event, $p_cpu us/event CPU"
echo "ratio journal/plain throughput: $(awk -v a="$j_eps" -v b="$p_eps" 'BEGIN{printf "%.2f", a/b}')"
# pair LABEL PREFIX: the journal and plain medians of the runs in $TMP/PREFIX*.txt.
pair() {
	local j jc p
	j=$(awk '{print $4}' "$TMP/${2}journal.txt" | median)
	jc=$(awk '{print $7 * 1e6 / $2}' "$TMP/${2}journal.txt" | median)
	p=$(awk '{print $4}' "$TMP/${2}plain.txt" | median)
	echo "$1: journal $j events/s, $jc us/event CPU; plain $p events/s;" \
		"ratio $(awk -v a="$j" -v b="$p" 'BEGIN{printf "%.2f", a/b}')"
}
[ -n "${BASE:-}" ] && pair "base" base_
pair "free (no taskset)" free_
[ -n "${BASE:-}" ] && pair "free base" free_base_
echo "verify:  $lines lines in ${v_s}s = $(awk -v l="$lines" -v s="$v_s" 'BEGIN{printf "%.0f", l/s}') lines/s"
