#!/usr/bin/env bash
# bench/query/index_rate.sh BEFORE_BUILD [EVENTS] [RUNS]: how fast the index keeps up.
# One generated journal (tests/tools/sg_genevents.c, as bench/query/run.sh), indexed from
# scratch by `sandgate reindex` (batches of 20k lines per transaction, as the daemon's
# thread does with 5k) RUNS times by each build, alternating: this tree's Release build
# and BEFORE_BUILD (a build dir of an older tree holding `sandgate`). Prints, per build,
# the medians of wall and CPU (user+sys) time, lines/s over each, and the index's size
# against the journal's. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
BEFORE=${1:?usage: index_rate.sh BEFORE_BUILD [EVENTS] [RUNS]}
EVENTS=${2:-1000000}
RUNS=${3:-3}
B=build/invest-release
cmake -S . -B "$B" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$B" -j2 --target sandgate sg_genevents >/dev/null
TMP=$(mktemp -d /var/tmp/sgixrate.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
S=$TMP/state
"$B/sg_genevents" --repeat $((EVENTS / 36)) "$S" >/dev/null
lines=$(cat "$S"/journal/*.jsonl | wc -l)
jbytes=$(cat "$S"/journal/*.jsonl | wc -c)
echo "journal: $lines lines, $jbytes bytes; load before: $(cut -d' ' -f1-3 /proc/loadavg)"

median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
one() {   # BIN TAG: one reindex from scratch; appends "wall cpu bytes" to $TMP/TAG
	rm -rf "$S/index"
	/usr/bin/time -f "%e %U %S" -o "$TMP/time" "$1/sandgate" reindex --state-dir "$S" >/dev/null
	read -r w u s <"$TMP/time"
	echo "$w $(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}') $(du -sb "$S/index" | cut -f1)" \
		>>"$TMP/$2"
}
for ((i = 0; i < RUNS; i++)); do
	if ((i % 2)); then one "$B" after; one "$BEFORE" before; else one "$BEFORE" before; one "$B" after; fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| build | wall s (median of $RUNS) | lines/s wall | CPU s | lines/CPU-s | index bytes | index/journal |"
echo "|---|---|---|---|---|---|---|"
for t in before after; do
	w=$(cut -d' ' -f1 "$TMP/$t" | median)
	c=$(cut -d' ' -f2 "$TMP/$t" | median)
	ib=$(cut -d' ' -f3 "$TMP/$t" | median)
	awk -v t="$t" -v w="$w" -v c="$c" -v n="$lines" -v ib="$ib" -v jb="$jbytes" 'BEGIN {
		printf "| %s | %.1f | %.0f | %.2f | %.0f | %d | %.2f |\n", t, w, n / w, c, n / c, ib, ib / jb }'
done
