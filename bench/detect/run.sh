#!/usr/bin/env bash
# bench/detect/run.sh [ROUNDS] [PASSES]: detection cost per journal line with the whole
# built-in rules set (rules/), against parsing the line alone (bench/detect/bench_detect.c),
# over a journal written by tests/tools/sg_genevents (ROUNDS scripted rounds of three
# sessions: exec, files, DNS, connects, flows, packages, lifecycle; needles in 1 round of
# 1000). Release
# build; not part of CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-300}
PASSES=${2:-9}
B=build/detect-release
cmake -S . -B "$B" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$B" -j2 --target bench_detect sg_genevents >/dev/null
TMP=$(mktemp -d /var/tmp/sgdbench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
"$B/sg_genevents" "$TMP" --repeat "$ROUNDS"
echo "journal: $(cat "$TMP"/journal/*.jsonl | wc -l) lines, $(du -sh "$TMP/journal" | cut -f1)"
"$B/bench/bench_detect" rules "$TMP/journal" "$PASSES"
