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
printf 'gateway: {enabled: false}\n' >"$T_TMP/nogw.yaml"
start_daemon ok --config "$T_TMP/nogw.yaml"
check "the daemon starts with the shipped paths" kill -0 "$DPID"
stop_daemon

# --check-config (issue 18.6): the files the config names must exist; the effective
# resolvers are printed; an unknown control group is reported.
printf 'gateway:\n  geoip_db: %s/no.mmdb\n' "$T_TMP" >"$T_TMP/geo.yaml"
out=$("$BIN/sandgated" --check-config "$T_TMP/geo.yaml" 2>&1)
check "a missing GeoIP database fails --check-config" test $? -ne 0
check "and is named" grep -q "$T_TMP/no.mmdb" <<<"$out"
printf 'gateway:\n  doh_list: %s/no-doh.txt\n' "$T_TMP" >"$T_TMP/doh.yaml"
out=$("$BIN/sandgated" --check-config "$T_TMP/doh.yaml" 2>&1)
check "a missing DoH list fails --check-config" test $? -ne 0
check "and is named" grep -q "$T_TMP/no-doh.txt" <<<"$out"
out=$(SANDGATE_DATA_DIR="$T_TMP/rules-copy" "$BIN/sandgated" --check-config "$T_TMP/c.yaml" 2>&1)
check "the shipped DoH list missing fails too" test $? -ne 0
check "and is named" grep -q "$T_TMP/rules-copy/doh-endpoints.txt" <<<"$out"
printf 'control_group: nogroup-%s\n' "$$" >"$T_TMP/grp.yaml"
out=$("$BIN/sandgated" --check-config "$T_TMP/grp.yaml" 2>&1)
check "an unknown control group is reported" grep -q "no group named 'nogroup-$$'" <<<"$out"
out=$("$BIN/sandgated" --check-config "$T_TMP/c.yaml" 2>&1)
echo "$out"
want=$(awk '$1 == "nameserver" && $2 !~ /%/ { print $2 }' /etc/resolv.conf | head -1)
if grep -qx 'nameserver 127.0.0.5[34]' /etc/resolv.conf && [ "$(grep -c '^nameserver' /etc/resolv.conf)" -eq 1 ]; then
	want=$(awk '$1 == "nameserver" { print $2 }' /run/systemd/resolve/resolv.conf 2>/dev/null | head -1)
fi
check "the host's resolvers are the effective default (${want:-none})" \
	grep -q "gateway.resolvers (from .*resolv.conf):.*${want:-none}" <<<"$out"
# The gateway is on by default (issue 18.6) and --check-config says so, with how it runs;
# a file turning it off is shown off; the shipped example shows the default.
check "a file that leaves the gateway out has it on, enforcing, in the daemon's namespace" \
	grep -qx "gateway.enabled: true (enforcing, mode both, network namespace the daemon's own)" <<<"$out"
out=$("$BIN/sandgated" --check-config "$T_TMP/nogw.yaml" 2>&1)
check "gateway: {enabled: false} is shown off" grep -q "^gateway.enabled: false" <<<"$out"
out=$("$BIN/sandgated" --check-config "$SRC/daemon/sandgate.example.yaml" 2>&1)
check "the shipped example has the gateway on" grep -q "^gateway.enabled: true (enforcing" <<<"$out"
printf 'gateway:\n  resolvers: [198.18.0.53]\n' >"$T_TMP/res.yaml"
out=$("$BIN/sandgated" --check-config "$T_TMP/res.yaml" 2>&1)
check "written resolvers are kept" grep -q "from the config file): 198.18.0.53:53" <<<"$out"
finish
