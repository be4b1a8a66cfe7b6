#!/usr/bin/env bash
# The resource limits watcher's cost per session and tick, and one disk measure, three
# runs side by side with the baseline read (cgroup.events).
#   bench/limits/run.sh [BUILD_DIR] [N] [ROUNDS] [FILES]
set -eu
BUILD=${1:-build/rel}
for run in 1 2 3; do
	echo "--- run $run"
	"$BUILD/bench/bench_limits" "${2:-200}" "${3:-21}" "${4:-10000}"
done
