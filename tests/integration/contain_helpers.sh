# Shared by t_contain_*.sh: running lines in a session and finding their host pids.
# Source after lib.sh and session_helpers.sh (needs sg, SG_SOCK, SG_STATE).

# The interpreter itself: a pyenv shim costs seconds on a loaded machine.
PY=$(python3 -c 'import sys; print(sys.executable)')
PROBE="$PY $SRC/tests/integration/contain_probe.py"
INSIDE_TIMEOUT=${INSIDE_TIMEOUT:-30}

# inside SESSION LINE: runs LINE with sh in SESSION; output in OUT, status in RC.
inside() {
	OUT=$(timeout "$INSIDE_TIMEOUT" "$BIN/sandgate" run --control "$SG_SOCK" --session "$1" -- sh -c "$2" 2>&1)
	RC=$?
}
# bg_inside SESSION LINE: the same in the background (output in $T_TMP/bg.out).
bg_inside() {
	timeout 60 "$BIN/sandgate" run --control "$SG_SOCK" --session "$1" -- sh -c "$2" \
		>"$T_TMP/bg.out" 2>&1 &
}
# 124-127: timeout, or sandgate itself could not start the command (125), or it could
# not be exec'd: that is not the attempt failing.
failed_no_ok() { [ "$1" -ne 0 ] && { [ "$1" -lt 124 ] || [ "$1" -gt 127 ]; } && ! grep -q "^OK" <<<"$2"; }
lacks() { ! grep -q -- "$1" <<<"$2"; }
# denied DESCRIPTION: the last inside() failed (non-zero) and did not print "OK".
denied() { check "$1 (rc $RC: $(head -c 120 <<<"$OUT" | tr '\n' ' '))" failed_no_ok "$RC" "$OUT"; }
worked() { check "$1 (rc $RC: $(head -c 120 <<<"$OUT" | tr '\n' ' '))" test "$RC" -eq 0; }
# receive KIND ARGS...: starts the lab's receiver in $NS; RX is its pid, RXOUT its count.
receive() {
	RXOUT=$T_TMP/rx.$1.$RANDOM
	rm -f "$T_TMP/ready"
	ip netns exec $NS $PROBE "$@" 60 "$T_TMP/ready" >"$RXOUT" &
	RX=$!
	wait_for "the receiver" 20 test -e "$T_TMP/ready"
}
received() { sleep 0.5; kill -TERM $RX; wait $RX; N=$(cat "$RXOUT"); }
# host_pid SESSION ARG: the host pid of `sleep ARG` run in SESSION (from its process.exec).
host_pid() {
	local p i
	for ((i = 0; i < 100; i++)); do
		p=$(journal_lines "$SG_STATE" | jq -r --arg s "$1" --arg a "$2" \
			'select(.event == "process.exec" and .session_id == $s and .cmd == "sleep"
			 and .args == [$a]) | .pid' | tail -1)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
	return 1
}

