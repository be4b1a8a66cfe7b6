#!/usr/bin/env bash
# Known losses are recorded: with the daemon stopped (SIGSTOP) its tiny queues fill, the
# kernel drops the rest (fail closed) and counts them; once it runs again the drops
# become sensor.loss events with the count, and the session's traffic works again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

gw_config "$T_TMP/c.yaml" "  queue_len: 2"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
sg session create --id s1 >/dev/null && sg session start s1 >/dev/null
in_sess s1 sleep infinity &
cleanup "kill $!"
wait_for "session process" 5 grep -q . "$CG2/$SG_PARENT/s1/cgroup.procs"

kill -STOP "$DPID"
cleanup "kill -CONT $DPID"
# 40 queries from 40 sockets: at most 2 per queue wait, the kernel drops the others.
in_cg s1 python3 -c '
import socket, struct
for i in range(40):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    q = struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0) + b"\x04loss\x03web\x04test\x00\x00\x01\x00\x01"
    s.sendto(q, ("198.18.1.2", 53))
'
dropped() { ip netns exec "$GWNS" awk '$1 == 100 || $1 == 101 { n += $6 } END { print n + 0 }' /proc/net/netfilter/nfnetlink_queue; }
check "the kernel counted queue drops while the daemon was stopped" test "$(dropped)" -gt 0
kill -CONT "$DPID"
wait_ev 10 '.event == "sensor.loss" and .sensor == "nfqueue"'
total=$(evq '.event == "sensor.loss" and .sensor == "nfqueue"' | jq -s 'map(.lost) | add')
check "sensor.loss counts every kernel drop ($total = $(dropped))" test "$total" = "$(dropped)"
e=$(evq '.event == "sensor.loss" and .sensor == "nfqueue"' | head -1)
echeck "sensor.loss: fields" "$e" '.session_id == null and .source == "sandgate" and .lost > 0 and (.why | test("full"))'
out=$(in_sess s1 dig +short +time=2 +tries=1 @198.18.1.2 after.web.test A)
check "session DNS works again" test "$out" = 198.18.1.2
check "daemon exits 0 at SIGTERM" stop_daemon
finish
