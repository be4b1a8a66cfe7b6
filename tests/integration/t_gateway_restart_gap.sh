#!/usr/bin/env bash
# How long a restart drops session traffic (issue 18.8, docs/operations.md): a probe in
# a session opens a new TCP connection to the lab's peer every 20 ms (100 ms timeout)
# and logs each outcome; the daemon is restarted as `systemctl restart` does (SIGTERM,
# wait, start) and, separately, killed -9 and started again after the unit's RestartSec
# (1 s). The gap is from the last success before the stop to the first success after.
# Control: host traffic from the same namespace is never interrupted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

gw_config "$T_TMP/c.yaml"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
sg session create --id s1 >/dev/null && sg session start s1 >/dev/null
in_sess s1 sleep infinity &
cleanup "kill $!"
wait_for "session process" 5 grep -q . "$CG2/$SG_PARENT/s1/cgroup.procs"

cat >"$T_TMP/probe.py" <<'PY'
import socket, sys, time
out = open(sys.argv[1], "a", buffering=1)
while True:
    t = time.time()
    s = socket.socket()
    s.settimeout(0.1)
    try:
        s.connect(("198.18.1.2", 80))
        ok = 1
    except OSError:
        ok = 0
    s.close()
    out.write("%.3f %d\n" % (t, ok))
    time.sleep(0.02)
PY
probe() { # probe NAME WHO: WHO = session | host
	if [ "$2" = session ]; then
		in_cg s1 python3 "$T_TMP/probe.py" "$T_TMP/$1" &
	else
		in_gw python3 "$T_TMP/probe.py" "$T_TMP/$1" &
	fi
	PROBE=$!
	cleanup "kill $PROBE"
}
# gap FILE T_STOP: the longest time between two successive successful connects from
# T_STOP on (the outage: the daemon keeps serving while it shuts down), or "none".
gap() { awk -v t="$2" '$2 == 1 && $1 >= t - 0.5 { if (last && $1 - last > g) g = $1 - last; last = $1; n++ }
	END { if (!n) print "none"; else printf "%.2f\n", g }' "$1"; }

back() { awk -v t="$2" '$2 == 1 && $1 > t { f = 1 } END { exit !f }' "$1"; }
measure() { # measure NAME HOW: HOW = term | kill9
	local t_stop t_sock t_back
	probe "$1.sess" session
	ps=$PROBE
	probe "$1.host" host
	ph=$PROBE
	wait_for "session probe" 20 back "$T_TMP/$1.sess" 0
	wait_for "host probe" 20 back "$T_TMP/$1.host" 0
	sleep 0.5
	t_stop=$(date +%s.%N)
	if [ "$2" = term ]; then
		kill -TERM "$DPID"; wait "$DPID"
	else
		kill -9 "$DPID"; wait "$DPID" 2>/dev/null
		sleep 1   # the unit's RestartSec
	fi
	t_down=$(date +%s.%N)
	start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon restarts"; return; }
	wait_gateway
	t_sock=$(date +%s.%N)
	wait_for "session traffic back" 20 back "$T_TMP/$1.sess" "$t_stop"
	sleep 0.5
	kill "$ps" "$ph"
	wait "$ps" "$ph" 2>/dev/null
	G_SESS=$(gap "$T_TMP/$1.sess" "$t_stop")
	G_HOST=$(gap "$T_TMP/$1.host" "$t_stop")
	echo "$2: stopped in $(echo "$t_down - $t_stop" | bc) s; started (ruleset and queues bound) in $(echo "$t_sock - $t_down" | bc) s; session traffic gap $G_SESS s; host traffic gap $G_HOST s"
	echo "$2: session probes failed: $(awk -v t="$t_stop" '$1 >= t && $2 == 0' "$T_TMP/$1.sess" | wc -l)"
}

measure restart term
check "restart: session traffic comes back ($G_SESS s)" test "$G_SESS" != none
check "restart: the gap is under 10 s" awk -v g="$G_SESS" 'BEGIN { exit !(g < 10) }'
check "control: host traffic never stopped (largest gap $G_HOST s)" awk -v g="$G_HOST" 'BEGIN { exit !(g < 0.5) }'
check "restart: daemon.stop then daemon.start" sh -c "journal_lines() { perl -ne 'print if /\n\z/' '$SG_STATE'/journal/*.jsonl; }; journal_lines | jq -r 'select(.event == \"daemon.stop\" or .event == \"daemon.start\") | .event' | tr '\n' ' ' | grep -q 'daemon.start daemon.stop daemon.start'"
check "restart: the session is adopted, not ended" sh -c "sg() { '$BIN/sandgate' \"\$@\" --control '$SG_SOCK'; }; sg session show s1 | jq -e '.state == \"running\"' >/dev/null"
measure crash kill9
check "crash: session traffic comes back ($G_SESS s)" test "$G_SESS" != none
check "crash: the gap is under 10 s" awk -v g="$G_SESS" 'BEGIN { exit !(g < 10) }'
check "the journal verifies across both" "$BIN/sandgate" verify "$SG_STATE"
stop_daemon
finish
