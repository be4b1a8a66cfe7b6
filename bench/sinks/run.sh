#!/usr/bin/env bash
# bench/sinks/run.sh [RATE] [SECONDS]: event-to-sink latency through the real journal and
# a file sink into a FIFO (bench/sinks/bench_sinks.c). Release build; not part of CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
RATE=${1:-10000}
SECS=${2:-20}
B=build/invest-release
cmake -S . -B "$B" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$B" -j2 --target bench_sinks >/dev/null
TMP=$(mktemp -d /var/tmp/sgsbench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
echo "events p50_ms p99_ms max_ms (rate $RATE/s for $SECS s)"
"$B/bench/bench_sinks" "$TMP" "$RATE" "$SECS"
