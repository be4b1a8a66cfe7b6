#!/usr/bin/env bash
# bench/query/run.sh [EVENTS] [RUNS]: the issue's investigation questions over a generated,
# realistic journal (tests/tools/sg_genevents.c: sessions with exec trees, files, DNS,
# flows, packages, terminations; the needles in 1 round of 1000), answered by
# `sandgate query` from the index, side by side with grep and jq over the raw lines.
# Release build; not part of CI. Prints a markdown table (medians of RUNS runs for the
# index; one run for the baselines) for docs/bench-query.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
EVENTS=${1:-10000000}
RUNS=${2:-5}
B=build/invest-release
cmake -S . -B "$B" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$B" -j2 --target sandgate sg_genevents >/dev/null
TMP=$(mktemp -d /var/tmp/sgqbench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
S=$TMP/state

now() { date +%s.%N; }
elapsed_ms() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.1f", (e - s) * 1000 }'; }
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

rounds=$((EVENTS / 36))
t0=$(now)
"$B/sg_genevents" --repeat "$rounds" "$S"
t1=$(now)
"$B/sandgate" reindex --state-dir "$S" >/dev/null
t2=$(now)
lines=$(cat "$S"/journal/*.jsonl | wc -l)
bytes=$(cat "$S"/journal/*.jsonl | wc -c)
echo "journal: $lines lines, $bytes bytes; generated in $(elapsed_ms "$t0" "$t1") ms, indexed in $(elapsed_ms "$t1" "$t2") ms"

# Round r's s-alpha runs from T0 + r h; the question asks for seconds 2..9 of it.
r=$((rounds / 2))
base=$((1782727200 + r * 3600))
T1=$(date -u -d "@$((base + 2))" +%Y-%m-%dT%H:%M:%SZ)
T2=$(date -u -d "@$((base + 9))" +%Y-%m-%dT%H:%M:%S.5Z)

# NAME | query args | grep pattern | jq filter
QUESTIONS=(
	"session between T1 and T2|--session s-alpha-$r --since $T1 --until $T2|\"session_id\":\"s-alpha-$r\"|.session_id == \"s-alpha-$r\" and .ts >= \"$T1\" and .ts <= \"$T2\""
	"sessions that accessed /etc/shadow|--path /etc/shadow|\"path\":\"/etc/shadow\"|.path == \"/etc/shadow\""
	"connected to evil.example.test|--domain evil.example.test|evil.example.test|(.domain // .qname // \"\" | ascii_downcase | rtrimstr(\".\")) == \"evil.example.test\""
	"installed requests 2.31.0|--package requests@2.31.0|\"resolved_version\":\"2.31.0\"|.event == \"package.install\" and .name == \"requests\" and .resolved_version == \"2.31.0\""
	"ended with reason oom|--event session.terminate --reason oom|\"reason\":\"oom\"|.event == \"session.terminate\" and .reason == \"oom\""
	"anything as uid 0|--uid 0|\"uid\":0|.uid == 0 or .euid == 0"
)

echo
echo "| question | matches | sandgate query (median ms) | grep (ms) | jq (ms) |"
echo "|---|---|---|---|---|"
for q in "${QUESTIONS[@]}"; do
	IFS='|' read -r name args pat filter <<<"$q"
	: >"$TMP/t"
	for ((i = 0; i < RUNS; i++)); do
		s=$(now)
		# shellcheck disable=SC2086
		"$B/sandgate" query --no-update --state-dir "$S" $args >"$TMP/out"
		e=$(now)
		elapsed_ms "$s" "$e" >>"$TMP/t"
		echo >>"$TMP/t"
	done
	n=$(wc -l <"$TMP/out")
	s=$(now); cat "$S"/journal/*.jsonl | grep -F -i -- "$pat" >/dev/null || true; e=$(now)
	g=$(elapsed_ms "$s" "$e")
	s=$(now); cat "$S"/journal/*.jsonl | jq -c "select($filter)" >/dev/null; e=$(now)
	j=$(elapsed_ms "$s" "$e")
	echo "| $name | $n | $(grep . "$TMP/t" | median) | $g | $j |"
done
