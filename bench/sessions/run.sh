#!/usr/bin/env bash
# Session throughput and control latency: starts a sandgated from BUILD (default
# build/release) with its own state dir and cgroup parent, runs bench_sessions, cleans up.
#   bench/sessions/run.sh [BUILD_DIR] [N]
set -eu
BUILD=${1:-build/release}
# The build tree reads the rules and data of the source tree (common/paths.h).
export SANDGATE_DATA_DIR=${SANDGATE_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/data} SANDGATE_RULES_DIR=${SANDGATE_RULES_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/rules}
N=${2:-1000}
TMP=$(mktemp -d /tmp/sgbench.XXXXXX)
PARENT=sgbench-$$
printf 'gateway: {enabled: false}\ncgroup:\n  parent: %s\njournal:\n  fsync: checkpoint\n' "$PARENT" >"$TMP/c.yaml"
"$BUILD/sandgated" --config "$TMP/c.yaml" --state-dir "$TMP/state" --control "$TMP/sock" \
	>"$TMP/log" 2>&1 &
DPID=$!
trap 'kill $DPID 2>/dev/null; wait $DPID 2>/dev/null;
      for h in unified memory cpu pids; do rmdir /sys/fs/cgroup/$h/$PARENT 2>/dev/null; done;
      rm -rf "$TMP"' EXIT
for _ in $(seq 100); do [ -S "$TMP/sock" ] && break; sleep 0.05; done
"$BUILD/bench/bench_sessions" "$TMP/sock" "$N"
