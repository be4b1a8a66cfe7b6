#!/usr/bin/env bash
# sensor.loss of the proc connector is exact: nothing while nothing is lost, and the
# kernel's own drop count when the socket overflows.
#  1. Idle 60 s with the connector on, while another listener comes and goes 30 times
#     (each LISTEN and IGNORE makes the kernel broadcast an ACK that takes a per-CPU
#     sequence number: skipped, it read as "lost: 1"): no sensor.loss at all.
#  2. A stalled reader (SIGSTOP) with a small buffer (audit.proc_rcvbuf) and 600 execs on
#     the host: the sum of sensor.loss `lost` equals the Drops the kernel counted on the
#     daemon's connector socket (/proc/net/netlink), and is > 0 (the control: the lab
#     does see a loss).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

losses() { journal_lines "$SG_STATE" | jq -c 'select(.event == "sensor.loss")'; }
# cn_drops PID: the Drops column of PID's NETLINK_CONNECTOR (protocol 11) socket.
cn_drops() {
	local ino
	for ino in $(ls -l /proc/"$1"/fd 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p'); do
		awk -v i="$ino" '$2 == 11 && $10 == i { print $9; found = 1 } END { exit !found }' \
			/proc/net/netlink && return 0
	done
	return 1
}

# ---- 1. idle -----------------------------------------------------------------------------
write_config "$T_TMP/a.yaml" "gateway: {enabled: false}
audit:
  exec_source: proc_connector
  files: false
  sensitive_paths: []"
start_daemon a --config "$T_TMP/a.yaml"
# The control socket comes up before the sensors' threads have opened theirs.
check "the daemon's connector socket is found" wait_for "connector socket" 10 cn_drops "$DPID"
"$BIN/sg_cnchurn" 30 1000 &
CHURN=$!
cleanup "kill $CHURN"
wait "$CHURN"
check "another listener came and went 30 times" test $? -eq 0
sleep 1.5   # the last tick
n=$(losses | wc -l)
check "60 s idle with a listener coming and going: no sensor.loss ($n)" test "$n" -eq 0
check "and the kernel dropped nothing for us ($(cn_drops "$DPID"))" test "$(cn_drops "$DPID")" -eq 0
stop_daemon
n=$(losses | wc -l)
check "none at stop either ($n)" test "$n" -eq 0

# ---- 2. a real overflow --------------------------------------------------------------------
write_config "$T_TMP/b.yaml" "gateway: {enabled: false}
audit:
  exec_source: proc_connector
  files: false
  proc_rcvbuf: 4096
  sensitive_paths: []"
start_daemon b --config "$T_TMP/b.yaml"
sleep 1
kill -STOP "$DPID"
cleanup "kill -CONT $DPID"
for i in $(seq 600); do /bin/true; done
kill -CONT "$DPID"
# A gap is seen when the next message of that CPU arrives: one exec on every CPU, until
# the kernel's count stands still across a round (other processes on the host may
# overflow the small buffer too; those count on both sides).
ncpu=$(nproc --all)
d=-1
for round in 1 2 3 4 5 6; do
	d0=$(cn_drops "$DPID")
	for c in $(seq 0 $((ncpu - 1))); do taskset -c "$c" /bin/true; taskset -c "$c" /bin/true; done
	sleep 2.2   # the 1 s tick emits what was counted
	d=$(cn_drops "$DPID")
	[ "$d" = "$d0" ] && break
done
lost=$(losses | jq -s '[.[] | select(.sensor == "proc_connector") | .lost] | add // 0')
echo "# kernel drops on the daemon's socket: $d, sensor.loss lost in total: $lost"
check "the overflow is real: the kernel dropped messages ($d)" test "$d" -gt 0
check "sensor.loss counts exactly what the kernel dropped ($lost = $d)" test "$lost" -eq "$d"
e=$(losses | jq -c 'select(.sensor == "proc_connector")' | head -1)
jcheck "why names the receive buffer overflow" "$e" '.why | test("ENOBUFS")'
n=$(losses | jq -c 'select(.sensor != "proc_connector")' | wc -l)
check "no other sensor reports a loss ($n)" test "$n" -eq 0
stop_daemon
finish
