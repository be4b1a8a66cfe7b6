#!/usr/bin/env bash
# What a new TCP connection costs in queued packets: its SYN and the segment carrying
# its first bytes (the Host or the ClientHello), not the handshake's empty ACK, which the
# ruleset accepts in the kernel (nft/nft_rules.c: rule_empty_segment). The flow's events
# are unchanged, and a flow where only the server speaks (the client sends nothing but
# ACKs) is still decided and recorded while it runs: only the handshake's ACK skips the
# queue, the later empty ones do not. A flow that ends before it showed anything to
# decide on (a SYN the peer refuses) has its net.connect at its end (late: true).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

gw_config "$T_TMP/c.yaml"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
lab_fast_conntrack   # a refused SYN's entry ends in 1 s, not 10
sg session create --id s1 >/dev/null && sg session start s1 >/dev/null
in_sess s1 sleep infinity &   # the session lives while a process of it does
cleanup "kill $!"
wait_for "session process" 5 grep -q . "$CG2/$SG_PARENT/s1/cgroup.procs"

q0=$(queued)
n=$(in_sess s1 curl -s -o /dev/null -w '%{size_download}' --max-time 5 -H 'Host: plain.web.test' \
	http://198.18.1.2/f100k)
q1=$(queued)
check "HTTP through the gateway" test "$n" = 102400
check "2 packets queued for the connection: SYN and request ($((q1 - q0)))" test $((q1 - q0)) -eq 2
wait_ev 10 '.event == "net.connect" and .http_host == "plain.web.test"'
e=$(evq '.event == "net.connect" and .http_host == "plain.web.test"' | head -1)
echeck "net.connect with the Host" "$e" '.session_id == "s1" and .dst.port == 80 and .verdict == "allowed"'
echeck "written when it was decided (late: false)" "$e" '.late == false'

q0=$(queued)
n=$(in_sess s1 curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve box.web.test:443:198.18.1.2 https://box.web.test/f100k)
q1=$(queued)
check "HTTPS through the gateway" test "$n" = 102400
check "2 packets queued for the TLS connection: SYN and ClientHello ($((q1 - q0)))" \
	test $((q1 - q0)) -eq 2
wait_ev 10 '.event == "net.connect" and .sni == "box.web.test"'
check "net.connect with the SNI" test -n "$(evq '.event == "net.connect" and .sni == "box.web.test"')"
# ---- a SYN the peer refuses: nothing to decide on, recorded at the flow's end ----------
q0=$(queued)
in_sess s1 curl -s -o /dev/null --max-time 5 http://198.18.1.2:9999/
rc=$?
q1=$(queued)
check "closed port refused by the peer (curl rc $rc)" test "$rc" = 7
check "1 packet queued for it: the SYN ($((q1 - q0)))" test $((q1 - q0)) -eq 1
e=$(connect_ev_port s1 9999)
echeck "net.connect of the refused flow at its end: late, allowed (observe), no_data" "$e" \
	'.late == true and .verdict == "allowed" and .reason == "no_policy" and .parse == "no_data"'
echeck "its net.flow (same flow_id) counts the SYN out and the reset in" \
	"$(flow_ev_id "$(jq -r '.flow_id' <<<"$e")")" '.packets_out >= 1 and .packets_in >= 1'
check "one net.connect for the plain.web.test flow" test "$(evq '.event == "net.connect" and .http_host == "plain.web.test"' | wc -l)" = 1
# ---- only the server speaks: 1 MB to a client that sends nothing, not even a FIN -------
ip netns exec "$PEER" socat TCP-LISTEN:9001,bind=198.18.1.2,reuseaddr \
	SYSTEM:'head -c 1000000 /dev/zero; sleep 8' &
cleanup "kill $!"
sleep 0.3
# reads the megabyte, then holds the connection 5 s without a byte or a FIN
in_sess s1 python3 -c '
import socket, sys, time
s = socket.create_connection(("198.18.1.2", 9001))
n = 0
while n < 1000000:
    b = s.recv(65536)
    if not b:
        break
    n += len(b)
print(n, flush=True)
time.sleep(5)
' >"$T_TMP/got" &
RX=$!
check "net.connect of the server-speaks-first flow while the client is silent" \
	wait_ev 4 '.event == "net.connect" and .dst.port == 9001 and .session_id == "s1"'
e=$(evq '.event == "net.connect" and .dst.port == 9001' | head -1)
echeck "decided by its queued ACKs, not by a FIN" "$e" '.parse == "incomplete"'
wait "$RX"
check "the client got the megabyte ($(cat "$T_TMP/got"))" test "$(cat "$T_TMP/got")" -eq 1000000
check "daemon exits 0 at SIGTERM" stop_daemon
finish
