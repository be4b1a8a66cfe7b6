#!/usr/bin/env bash
# --net-rate: a session limited to 1mbit sends to a peer for 3 s through the gateway's
# per-session nft limit (cgroup mode, the gateway lab); the peer receives about the
# limit, an unlimited session far more, a sandbox in interface mode about the limit; resource.limit net_rate counts the drops;
# `nft list` shows the limit and its counter while the session lives and not after its
# cleanup; a daemon without the gateway refuses the option.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

RATE=125000   # 1mbit in bytes/second
gw_config "$T_TMP/c.yaml" "limits:
  sample_interval: 200ms
  report_interval: 1s"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
# A sink that keeps what it got: the byte count is the throughput.
in_peer_sink() {
	ip netns exec "$PEER" socat -u "TCP-LISTEN:$1,bind=198.18.1.2,reuseaddr" "OPEN:$2,creat,trunc" &
	cleanup "kill $! 2>/dev/null"
	wait_for "sink $1" 5 sh -c "ip netns exec '$PEER' ss -ltn | grep -q ':$1 '"
}

out=$(sg session create --id r1 --net-rate 1mbit)
jcheck "create: resources.net_rate in bytes/second" "$out" ".resources.net_rate == $RATE"
m1=$(jq -r .mark <<<"$out")
sg session start r1 >/dev/null
in_sess r1 sleep infinity &
cleanup "kill $! 2>/dev/null"
wait_ev 5 '.event == "session.start" and .session_id == "r1"'
e=$(evq '.event == "session.start" and .session_id == "r1"' | head -1)
echeck "session.start: limits.net_rate" "$e" ".limits.net_rate == $RATE"
rs=$(in_gw nft list table inet sandgate 2>/dev/null)
mk=$(printf '0x%08x' $((0x53000000 | m1)))
check "nft: map rate_limits holds $mk : rate_$m1" grep -q "$mk : \"rate_$m1\"" <<<"$rs"
check "nft: map rate_drops holds $mk : drops_$m1" grep -q "$mk : \"drops_$m1\"" <<<"$rs"
check "nft: limit object rate over $RATE bytes/second" grep -Eq "rate over $RATE bytes/second|rate over 122 kbytes/second" <<<"$rs"
check "nft: the drop counter object" grep -Eq 'counter drops_[0-9]+' <<<"$rs"
check "nft: the rule in chain session" grep -q 'limit name meta mark & 0xff0fffff map @rate_limits counter name meta mark & 0xff0fffff map @rate_drops drop' <<<"$rs"

# ---- throughput: limited, then unlimited --------------------------------------------
in_peer_sink 9101 "$T_TMP/recv1"
t0=$(date +%s%N)
in_sess r1 timeout 3 socat -u /dev/zero TCP:198.18.1.2:9101 2>/dev/null
t1=$(date +%s%N)
sleep 0.3
got=$(stat -c %s "$T_TMP/recv1")
secs=$(( (t1 - t0) / 1000000 ))
echo "# limited: $got bytes in ${secs} ms (limit $RATE bytes/s, 1 s of burst)"
# Within a factor: at least a third of the rate over 3 s, at most the rate over 3 s
# plus the one-second bucket, doubled.
check "limited throughput about the limit ($got bytes in ${secs} ms)" \
	test "$got" -ge $((RATE)) -a "$got" -le $((RATE * 8))
sg session create --id r2 >/dev/null && sg session start r2 >/dev/null
in_peer_sink 9102 "$T_TMP/recv2"
in_sess r2 timeout 1 socat -u /dev/zero TCP:198.18.1.2:9102 2>/dev/null
sleep 0.3
got2=$(stat -c %s "$T_TMP/recv2")
echo "# unlimited: $got2 bytes in 1 s"
check "an unlimited session sends far more ($got2 bytes in 1 s)" test "$got2" -gt $((RATE * 16))

# Interface mode: the sandbox namespace's packets arrive on gwsbx, routed by the gateway.
m5=$(sg session create --id r5 --iface gwsbx --net-rate 1mbit | jq -r .mark)
sg session start r5 >/dev/null
in_peer_sink 9103 "$T_TMP/recv5"
ip netns exec "$SBX" timeout 2 socat -u /dev/zero TCP:198.18.1.2:9103 2>/dev/null
sleep 0.3
got5=$(stat -c %s "$T_TMP/recv5")
echo "# interface mode: $got5 bytes in 2 s"
check "interface mode: routed throughput about the limit ($got5 bytes in 2 s)" \
	test "$got5" -ge $((RATE)) -a "$got5" -le $((RATE * 6))
wait_ev 5 '.event == "resource.limit" and .limit == "net_rate" and .session_id == "r5"'
e=$(evq '.event == "resource.limit" and .limit == "net_rate" and .session_id == "r5"' | head -1)
echeck "interface mode: resource.limit net_rate" "$e" ".configured == $RATE and .measured > 0 and .count > 0"

# ---- resource.limit -----------------------------------------------------------------
wait_ev 5 '.event == "resource.limit" and .limit == "net_rate" and .session_id == "r1"'
e=$(evq '.event == "resource.limit" and .limit == "net_rate" and .session_id == "r1"' | head -1)
echeck "resource.limit net_rate: fields" "$e" ".source == \"kernel\" and .configured == $RATE and
	.action == \"throttle\" and .pid == null and .measured > 0 and .count > 0 and
	(.window_ms | type) == \"number\""
n=$(evq '.event == "resource.limit" and .limit == "net_rate" and .session_id == "r1"' | wc -l)
# The first drop at once, then at most one per report_interval (1 s) since the start;
# the flow drains its socket buffer at the limit after socat is gone, still counted.
el=$(( ($(date +%s%N) - t0) / 1000000000 ))
check "net_rate reports bounded ($n events in ${el} s, report_interval 1 s)" test "$n" -ge 2 -a "$n" -le $((el + 2))
check "no net_rate event for the unlimited session" \
	test -z "$(evq '.event == "resource.limit" and .limit == "net_rate" and .session_id == "r2"')"
drops=$(in_gw nft list table inet sandgate 2>/dev/null | grep -A2 'counter drops_' | grep -o 'packets [0-9]*' | head -1)
echo "# kernel drop counter: $drops"

# ---- session end: elements and objects gone --------------------------------------------
sg session terminate r1 >/dev/null
sg session cleanup r1 >/dev/null
rs=$(in_gw nft list table inet sandgate 2>/dev/null)
check "cleanup: r1's limit element gone" bash -c '! grep -q "\"rate_$2\"" <<<"$1"' _ "$rs" "$m1"
check "cleanup: r1's limit and counter objects gone" bash -c '! grep -Eq "limit rate_$2 |counter drops_$2 " <<<"$1"' _ "$rs" "$m1"
check "cleanup: r5's limit still there" grep -q 'limit rate_' <<<"$rs"
check "cleanup: the rule stays" grep -q 'map @rate_limits' <<<"$rs"

# ---- a restart: the registry keeps the rate, the re-installed ruleset has it again ----
stop_daemon
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon restarts"; finish; }
wait_gateway
out=$(sg session show r5)
jcheck "after a restart r5 keeps resources.net_rate" "$out" ".resources.net_rate == $RATE"
rs=$(in_gw nft list table inet sandgate 2>/dev/null)
check "after a restart r5's limit is installed again" grep -q "limit rate_$m5 " <<<"$rs"
check "after a restart r1's limit stays gone" bash -c '! grep -q "limit rate_$2 " <<<"$1"' _ "$rs" "$m1"

# ---- refusals -----------------------------------------------------------------------
check "cli: a rate without a unit is refused" sh -c '! "$1/sandgate" session create --id r3 --net-rate 5 --control "$2" 2>/dev/null' _ "$BIN" "$SG_SOCK"
stop_daemon
write_config "$T_TMP/nogw.yaml" "gateway: {enabled: false}
metrics_listen: null"
start_daemon b --config "$T_TMP/nogw.yaml" || { fail "daemon b starts"; finish; }
out=$(sg session create --id r4 --net-rate 1mbit 2>&1)
check "without the gateway --net-rate is refused, saying why" grep -q 'needs the gateway' <<<"$out"
check "no session r4 made" sh -c '! "$1/sandgate" session show r4 --control "$2" >/dev/null 2>&1' _ "$BIN" "$SG_SOCK"
finish
