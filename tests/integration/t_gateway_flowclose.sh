#!/usr/bin/env bash
# Flow records at close, to the right session (issue 14, item 7), with the kernel's
# DEFAULT conntrack timeouts (TIME_WAIT 120 s): a TCP flow's final net.flow comes within
# 2 s of its close (FIN both ways, or a RST) while conntrack still holds the entry, with
# the counts of the whole flow; its destroy event later writes nothing (one final
# net.flow per flow). A mark given to a new session while the old one's entries live:
# session A's connection in TIME_WAIT, A cleaned up, B created with A's mark, the entry
# then destroyed: nothing of it is B's. The same across a daemon restart (the packet path
# no longer knows the flow: attribution by which session held the mark when the entry
# began). Control: the entry really is still in conntrack when the record is written.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
command -v conntrack >/dev/null || { echo "missing conntrack"; echo "0 passed, 1 failed"; exit 1; }
lab_up

gw_config "$T_TMP/c.yaml"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
tw=$(in_gw sysctl -n net.netfilter.nf_conntrack_tcp_timeout_time_wait)
check "the gateway's namespace has the default TIME_WAIT timeout ($tw s)" test "$tw" -eq 120

mark_of() { evq ".event == \"session.create\" and .session_id == \"$1\"" | jq -r .mark | head -1; }
# a session with one long-lived process (sessions end with their last one)
mk() {
	sg session create --id "$1" >/dev/null && sg session start "$1" >/dev/null
	in_sess "$1" sleep 600 &
	wait_for "$1's process" 5 grep -q . "$CG2/$SG_PARENT/$1/cgroup.procs"
}
# curl_sport SESSION PATH: fetches http://198.18.1.2/PATH from SESSION, prints curl's local port.
curl_sport() {
	in_sess "$1" curl -s -o /dev/null -w '%{local_port}' --max-time 5 "http://198.18.1.2/$2"
}
# tw_entry PORT: the conntrack entry of the flow from source port PORT, if in TIME_WAIT.
tw_entry() { in_gw conntrack -L -p tcp --sport "$1" --dport 80 2>/dev/null | grep TIME_WAIT; }
finals() { evq ".event == \"net.flow\" and .final and .src.port == $1 and .dst.port == $2"; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# ---- 1. FIN both ways: the record at the close, not 120 s later ----------------------------
mk A
markA=$(mark_of A)
p=$(curl_sport A f100k)
t0=$(date +%s%N)
wait_ev 3 ".event == \"net.flow\" and .final and .src.port == $p"
ms=$(ms_since "$t0")
check "control: the flow's entry is in TIME_WAIT in conntrack" tw_entry "$p"
check "net.flow of a closed TCP flow within 2 s of its close (${ms} ms), TIME_WAIT 120 s" test "$ms" -le 2000
e=$(finals "$p" 80)
# (packets: with segmentation offload over veth, 100 KiB can come in as few as 10)
echeck "net.flow at the close: session A, all the bytes, duration" "$e" \
	'.session_id == "A" and .bytes_in > 102400 and .bytes_out > 60 and .packets_in > 1 and .missed_end == false and .duration_ms >= 0'
c=$(evq '.event == "net.connect" and .src.port == '"$p" | head -1)
echeck "net.flow and net.connect name the same flow" "$e" ".flow_id == $(jq .flow_id <<<"$c")"

# ---- 2. a RST: recorded at once too, bytes of what was sent --------------------------------
q=$(in_sess A python3 -c '
import socket, struct, time
s = socket.create_connection(("198.18.1.2", 9000))
s.sendall(b"y" * 5000)
time.sleep(0.3)
print(s.getsockname()[1])
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()   # RST
')
t0=$(date +%s%N)
wait_ev 3 ".event == \"net.flow\" and .final and .src.port == $q"
ms=$(ms_since "$t0")
check "net.flow of a reset TCP flow within 2 s ($ms ms; CLOSE timeout 10 s)" test "$ms" -le 2000
echeck "net.flow of the reset flow: the 5000 bytes sent" "$(finals "$q" 9000)" \
	'.session_id == "A" and .bytes_out >= 5000 and .bytes_out < 6000'

# ---- 3. A cleaned up, B gets A's mark, A's entry then ends ----------------------------------
p2=$(curl_sport A f1m)
wait_ev 3 ".event == \"net.flow\" and .final and .src.port == $p2"
check "control: A's second flow is in TIME_WAIT" tw_entry "$p2"
sg session terminate A >/dev/null; sg session cleanup A >/dev/null
mk B
markB=$(mark_of B)
check "B was given A's mark ($markA = $markB)" test -n "$markA" -a "$markA" = "$markB"
in_gw conntrack -D -p tcp --sport "$p2" --dport 80 >/dev/null 2>&1   # its end, as at expiry
in_gw conntrack -D -p tcp --sport "$p" --dport 80 >/dev/null 2>&1
sleep 2
check "no net.flow of A's flows says B" \
	test -z "$(evq ".event == \"net.flow\" and .session_id == \"B\" and (.src.port == $p or .src.port == $p2)")"
check "exactly one final net.flow per flow after the destroy events ($(finals "$p" 80 | wc -l), $(finals "$p2" 80 | wc -l))" \
	test "$(finals "$p" 80 | wc -l)" -eq 1 -a "$(finals "$p2" 80 | wc -l)" -eq 1
echeck "A's 1 MB flow: its bytes at the close" "$(finals "$p2" 80)" '.session_id == "A" and .bytes_in > 1048576'

# ---- 4. across a restart: the packet path forgot the flow; the mark's holder did not ------
mk C
p3=$(curl_sport C f100k)
wait_ev 3 ".event == \"net.flow\" and .final and .src.port == $p3"
check "control: C's flow is in TIME_WAIT" tw_entry "$p3"
check "daemon exits 0 at SIGTERM" stop_daemon
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon restarts"; finish; }
wait_gateway
markC=$(mark_of C)
sg session terminate C >/dev/null; sg session cleanup C >/dev/null
mk D
markD=$(mark_of D)
check "D was given C's mark ($markC = $markD)" test -n "$markC" -a "$markC" = "$markD"
in_gw conntrack -D -p tcp --sport "$p3" --dport 80 >/dev/null 2>&1
sleep 2
check "C's flow ended after the restart: no net.flow of it says D" \
	test -z "$(evq ".event == \"net.flow\" and .session_id == \"D\" and .src.port == $p3")"
f3=$(finals "$p3" 80 | jq -s -c .)
echeck "its net.flow from the destroy event after the restart says C, the mark's holder then" "$f3" \
	'length == 2 and all(.session_id == "C")'
check "daemon exits 0 at SIGTERM" stop_daemon
finish
