#!/usr/bin/env bash
# bench/sinks/run_outage.sh [RATE] [OUTAGE_S] [WARM_S] [AFTER_S]: a syslog sink through a
# receiver outage (bench/sinks/bench_outage.c): zero loss, duplicates counted, catch-up
# time. The bench runs in a network namespace of its own (its loopback only), as root.
# Release build; not part of CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
RATE=${1:-5000}
OUTAGE=${2:-300}
WARM=${3:-20}
AFTER=${4:-60}
B=build/invest-release
cmake -S . -B "$B" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
nice cmake --build "$B" -j2 --target bench_outage >/dev/null
TMP=$(mktemp -d /var/tmp/sgobench.XXXXXX)
NS=sgob$$
ip netns add "$NS"
trap 'ip netns del "$NS"; rm -rf "$TMP"' EXIT
ip -n "$NS" link set lo up
ip netns exec "$NS" "$B/bench/bench_outage" "$TMP" 6514 "$RATE" "$WARM" "$OUTAGE" "$AFTER"
