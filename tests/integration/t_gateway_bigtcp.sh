#!/usr/bin/env bash
# A packet the queue gives cut. The kernel copies at most 64 KiB of a queued packet
# (NFQNL_COPY_PACKET 0xffff); with BIG TCP (gso_max_size raised on the way out: IPv6
# here, Debian 12's iproute2 cannot set IPv4's gso_ipv4_max_size) a GSO packet is longer, and NFQA_CAP_LEN gives its full length. Its tail was not read: on a
# followed HTTP/1 flow (every request head checked) a second request to another Host
# rode there past the gateway. Now, enforcing, such a packet is dropped (TCP sends the
# bytes again in MSS segments, which are read) and counted. Measured at the upstream
# (a sink that logs every byte) and in the stats endpoint; control: the same stream
# without the second Host arrives whole, through the same cut packets.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
command -v python3 >/dev/null || { echo "missing python3"; echo "0 passed, 1 failed"; exit 1; }
ATK=$SRC/tests/integration/gw_attacks.py
lab_up
mkdir -p "$T_TMP/sa"
SINK_ADDR=2001:db8:1::2 ip netns exec "$PEER" python3 "$ATK" sink "$T_TMP/sa" 7080 &
cleanup "kill $!"
sz() { stat -c %s "$1" 2>/dev/null || echo 0; }
METRICS_PORT=$((20000 + $$ % 20000))
METRICS_PORT=$METRICS_PORT GW_ENFORCE=true gw_config "$T_TMP/c.yaml" "  resolvers: [198.18.1.2]
  dns_ttl_min: 1h
  dns_ttl_max: 1h
policies:
  default:
    allow:
      - domain: api.web.test"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack
sg session create --id e1 >/dev/null && sg session start e1 >/dev/null
in_sess e1 sleep infinity &
cleanup "kill $!"
check "session holds a process" wait_for "session process" 5 sh -c "grep -q . '$CG2/$SG_PARENT/e1/cgroup.procs'"
atk() { in_sess e1 python3 "$ATK" "$@"; }
truncated() { curl -s "http://127.0.0.1:$METRICS_PORT/metrics" | awk '$1 == "sandgate_gateway_truncated_total" { print $2 }'; }
out=$(in_sess e1 dig +short +time=2 +tries=1 @198.18.1.2 api.web.test AAAA)
check "api.web.test resolves in the session ($out)" test "$out" = 2001:db8:1::2

# BIG TCP on the gateway namespace's way to the upstream (the session's sockets live
# there in cgroup mode): GSO packets up to 256 KiB.
ip -n "$GWNS" link set gw0 gso_max_size 262144
ip -n "$PEER" link set peer0 gro_max_size 262144
g=$(ip -n "$GWNS" -d -j link show gw0 | jq '.[0].gso_max_size // 0')
check "gw0 takes BIG TCP (gso_max_size $g)" test "$g" -gt 65536

t0=$(truncated)
s0=$(sz "$T_TMP/sa/7080.log")
out=$(atk bigtail 2001:db8:1::2 7080 api.web.test api.web.test 400000)
sleep 0.5
t1=$(truncated)
got=$(( $(sz "$T_TMP/sa/7080.log") - s0 ))
check "control: the stream with one Host arrives whole through cut packets ($got bytes, $out; cut packets $t0 -> $t1)" \
	test "$got" -ge 400000
check "the queue gave cut packets, counted ($t0 -> $t1)" test "${t1:-0}" -gt "${t0:-0}"
check "control: the second request head (Host api.web.test) reached the upstream" \
	sh -c "[ \$(grep -c 'Host: api.web.test' '$T_TMP/sa/7080.log') -ge 2 ]"

s0=$(sz "$T_TMP/sa/7080.log")
out=$(atk bigtail 2001:db8:1::2 7080 api.web.test bad.web.test 400000)
sleep 0.5
check "a second request to Host bad.web.test in a cut packet's tail: reset ($out)" test "$out" = reset
check "it never reached the upstream ($(( $(sz "$T_TMP/sa/7080.log") - s0 )) bytes of the stream arrived)" \
	sh -c "! grep -q 'Host: bad.web.test' '$T_TMP/sa/7080.log'"
e=$(wait_ev 8 '.event == "net.connect" and .http_host == "bad.web.test"' >/dev/null 2>&1; evq '.event == "net.connect" and .http_host == "bad.web.test"' | head -1)
echeck "net.connect: blocked, host_mismatch" "$e" '.verdict == "blocked" and .reason == "host_mismatch"'
finish
