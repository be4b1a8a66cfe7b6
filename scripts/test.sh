#!/usr/bin/env bash
# Installs what is missing, builds with ASan + UBSan (clang, with the libFuzzer targets),
# and runs every test: cmocka unit tests, root integration tests against the real
# kernel, and each fuzz target for a bounded time. Ends with ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "scripts/test.sh: run as root (the integration tests use namespaces, cgroups and nftables)" >&2
	exit 1
fi
bash scripts/install-deps.sh

BUILD=${SANDGATE_TEST_BUILD:-build/test}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
	-DSANDGATE_SANITIZE=ON -DSANDGATE_FUZZ=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"

export SANDGATE_FUZZ_SECONDS=${SANDGATE_FUZZ_SECONDS:-12}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$BUILD"
# Integration tests are RUN_SERIAL; unit tests and fuzzers share the cores.
ctest --output-on-failure --timeout 900 -j"$(nproc)" "$@"
