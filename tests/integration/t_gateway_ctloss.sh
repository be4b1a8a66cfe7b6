#!/usr/bin/env bash
# Conntrack's side of the gateway: a closed flow's net.flow comes within seconds even when
# the periodic dump is 10 s apart (expired entries are reaped every second); destroy
# events lost to an overrun (ENOBUFS on a tiny event socket) become sensor.loss, and the
# next dump finds the flows whose end was missed: each still gets exactly one final
# net.flow (missed_end: true, counts from the last dump that listed it). Also: a session
# process in a sub-cgroup of its session still gets its pid in net.connect.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
command -v conntrack >/dev/null || { echo "missing conntrack"; echo "0 passed, 1 failed"; exit 1; }
lab_up
# A UDP sink for the many-flows part (reads and drops).
ip netns exec "$PEER" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.1.2", 9001))
while True:
    s.recv(64)
' &
cleanup "kill $!"

# ---- 1. default interim interval (dumps 10 s apart): a closed flow's end is timely ----
gw_config "$T_TMP/a.yaml"
start_daemon a --config "$T_TMP/a.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack
sg session create --id s1 >/dev/null && sg session start s1 >/dev/null
sleep 1.5   # past the first dump: the next periodic one is 10 s away
# The pid of a process that moved into a sub-cgroup of its session (sh execs curl).
mkdir "$CG2/$SG_PARENT/s1/sub"
cleanup "rmdir '$CG2/$SG_PARENT/s1/sub'"
# (it joins the sub-cgroup before `ip netns exec`, which hides /sys/fs/cgroup)
sh -c 'echo $$ >"$1/cgroup.procs" && echo $$ >"$2" && exec ip netns exec "$3" \
	curl -s -o /dev/null -H "Host: sub.web.test" --max-time 5 http://198.18.1.2/f100k' \
	_ "$CG2/$SG_PARENT/s1/sub" "$T_TMP/curl.pid" "$GWNS"
t0=$(date +%s%N)
wait_ev 12 '.event == "net.flow" and .http_host == "sub.web.test" and .final == true'
ms=$((($(date +%s%N) - t0) / 1000000))
check "net.flow of a closed TCP flow within 5 s of its end (${ms} ms; TIME_WAIT 1 s, dumps 10 s apart)" test "$ms" -lt 5000
e=$(evq '.event == "net.connect" and .http_host == "sub.web.test"' | head -1)
echeck "net.connect: pid of a process in a sub-cgroup of the session" "$e" \
	".session_id == \"s1\" and .pid == $(cat "$T_TMP/curl.pid")"
e=$(evq '.event == "net.flow" and .http_host == "sub.web.test"' | head -1)
echeck "net.flow from the destroy event: missed_end false" "$e" '.missed_end == false and .bytes_in > 102400'
check "daemon a exits 0 at SIGTERM" stop_daemon

# ---- 2. a destroy-event overrun: sensor.loss, then the missed ends from the dump --------
gw_config "$T_TMP/b.yaml" "  flow_interim_interval: 2s
  ct_event_buffer: 4096"
start_daemon b --config "$T_TMP/b.yaml" || { fail "daemon b starts"; finish; }
wait_gateway
in_gw sysctl -qw net.netfilter.nf_conntrack_udp_timeout=60   # the flows outlive the test
sg session create --id s2 >/dev/null && sg session start s2 >/dev/null
N=120
in_sess s2 python3 -c '
import socket, sys
socks = []   # all open until the end: distinct source ports, distinct flows
for i in range(int(sys.argv[1])):
    socks.append(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
    socks[-1].sendto(b"x" * 10, ("198.18.1.2", 9001))
' $N
wait_for "$N net.connect" 10 sh -c "[ \$(cat '$SG_STATE'/journal/*.jsonl | grep -c '\"port\":9001') -ge $N ]"
# Every flow listed by a dump: their interim reports (2 s old, dumps 1 s apart) say so.
wait_for "interim net.flow of the $N flows" 10 sh -c "[ \$(cat '$SG_STATE'/journal/*.jsonl |
	jq -c -R 'fromjson? | select(.event == \"net.flow\" and .final == false and .dst.port == 9001)' | wc -l) -ge $N ]"
kill -STOP "$DPID"
cleanup "kill -CONT $DPID"
check "the $N flows are in conntrack" test "$(in_gw conntrack -C)" -ge $N
in_gw conntrack -F 2>/dev/null   # every flow ends now: ~120 events, room for a few
kill -CONT "$DPID"
wait_ev 5 '.event == "sensor.loss" and .sensor == "conntrack" and .lost == null'
e=$(evq '.event == "sensor.loss" and .sensor == "conntrack" and .lost == null' | head -1)
echeck "sensor.loss: the event socket overrun" "$e" '.why | test("ENOBUFS")'
wait_ev 5 '.event == "sensor.loss" and .sensor == "conntrack" and .lost > 0'
missed=$(evq '.event == "sensor.loss" and .sensor == "conntrack" and .lost > 0' | jq -s 'map(.lost) | add')
wait_for "a final net.flow for each of the $N flows" 5 sh -c "[ \$(cat '$SG_STATE'/journal/*.jsonl |
	jq -c -R 'fromjson? | select(.event == \"net.flow\" and .final and .dst.port == 9001)' | wc -l) -ge $N ]"
flows=$(evq '.event == "net.flow" and .final and .dst.port == 9001')
check "each flow has exactly one final net.flow ($(wc -l <<<"$flows") for $N)" \
	test "$(jq -r .flow_id <<<"$flows" | sort -u | wc -l)" -eq "$N" -a "$(wc -l <<<"$flows")" -eq "$N"
m=$(jq -c 'select(.missed_end)' <<<"$flows")
check "the missed ends are the ones counted in sensor.loss ($(grep -c . <<<"$m") = $missed)" \
	test "$(grep -c . <<<"$m")" = "$missed" -a "$missed" -gt 0
echeck "net.flow of a missed end: counts of the last dump" "$(head -1 <<<"$m")" \
	'.session_id == "s2" and .packets_out == 1 and .bytes_out == 38 and .duration_ms >= 0 and .verdict == "allowed"'
check "daemon b exits 0 at SIGTERM" stop_daemon
finish
