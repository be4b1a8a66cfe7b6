#!/usr/bin/env bash
# The daemon finds its shipped rules and data through paths fixed at build time (issue
# 18.2); here the build tree points at the source tree through SANDGATE_DATA_DIR and
# SANDGATE_RULES_DIR (lib.sh). A missing rules or data directory is an error at start
# naming the path, never a daemon silently running with no rules or no DoH list.
. "$(dirname "$0")/lib.sh"
require_root

run_daemon() { # run_daemon VAR=VALUE...: a daemon that must refuse to start
	env "$@" timeout 10 "$BIN/sandgated" --state-dir "$T_TMP/s" --control "$T_TMP/s.sock" 2>&1
}

out=$(run_daemon SANDGATE_RULES_DIR="$T_TMP/no-rules")
rc=$?
check "missing rules dir: the daemon exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124
check "and names the path" grep -q "$T_TMP/no-rules" <<<"$out"
check "and touched no state dir" test ! -e "$T_TMP/s"

out=$(run_daemon SANDGATE_DATA_DIR="$T_TMP/no-data")
rc=$?
check "missing data dir: the daemon exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124
check "and names the path" grep -q "$T_TMP/no-data" <<<"$out"

echo "log_level: info" >"$T_TMP/c.yaml"
out=$(SANDGATE_RULES_DIR="$T_TMP/no-rules" "$BIN/sandgated" --check-config "$T_TMP/c.yaml" 2>&1)
check "--check-config fails without the rules dir" test $? -ne 0
check "and names the path" grep -q "$T_TMP/no-rules" <<<"$out"

# A rules dir that exists but lost its files to a bad copy: the rules path is named too.
mkdir -p "$T_TMP/rules-copy"
out=$(SANDGATE_RULES_DIR="$T_TMP/rules-copy" "$BIN/sandgated" --check-config "$T_TMP/c.yaml" 2>&1)
echo "$out"
check "an empty rules dir loads 0 rules and says so" grep -q "0 detection rules" <<<"$out"

# Control case: the build tree's paths give the shipped rules.
out=$("$BIN/sandgated" --check-config "$T_TMP/c.yaml" 2>&1)
echo "$out"
n=$(sed -n 's/.*, \([0-9]*\) detection rules.*/\1/p' <<<"$out")
check "with the shipped rules the config loads them ($n)" test "${n:-0}" -ge 20
start_daemon ok
check "the daemon starts with the shipped paths" kill -0 "$DPID"
stop_daemon
finish
