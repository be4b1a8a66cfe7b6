#!/usr/bin/env bash
# Session escape (issue 15, items 2 and 6): a session process moved out of its session's
# cgroup (echo PID > another cgroup's cgroup.procs, as root on the host would, or root in
# a session with containment relaxed) is reported as session.escape with the pid and
# both cgroups, plus the critical alert; one moved into another session's cgroup is
# reported too and its later exec stays attributed to its own session (the ancestry
# wins), also after a daemon restart that seeded it into the other session. Controls: a
# process that stays in its session and a host process are never reported.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root
command -v pgrep >/dev/null || { echo "missing pgrep"; echo "0 passed, 1 failed"; exit 1; }

OUT=$CG2/sgesc-$$
mkdir "$OUT" || { fail "make a cgroup outside the sessions"; finish; }
cleanup "rmdir '$OUT'"
cleanup "cat '$OUT/cgroup.procs' 2>/dev/null | xargs -r kill -9"
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  sensitive_paths: []"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
for s in s1 s2; do sg session create --id $s >/dev/null && sg session start $s >/dev/null; done

# pid_of ARGS: the host pid of the one process whose command line is exactly ARGS
pid_of() { pgrep -x -f "$1" | head -n1; }
# esc PID: the session.escape event of PID
esc() { journal_lines "$SG_STATE" | jq -c --argjson p "$1" 'select(.event == "session.escape" and .pid == $p)' | head -n1; }
# echeck DESCRIPTION JSON JQ-EXPR: JSON must be there and the expression true for it
echeck() { check "$1" bash -c '[ -n "$2" ] && jq -e "$1" >/dev/null <<<"$2"' _ "$3" "$2"; }
wait_esc() { wait_for "session.escape of $1" 5 sh -c "cat '$SG_STATE'/journal/*.jsonl | grep '\"event\":\"session.escape\"' | grep -q '\"pid\":$1,'"; }

# ---- moved out of its session --------------------------------------------------------
sgrun --session s1 -- sh -c 'sleep 201 & sleep 202 & wait' &
cleanup "kill $! 2>/dev/null"
wait_for "session processes" 5 sh -c "pgrep -x -f 'sleep 201' >/dev/null && pgrep -x -f 'sleep 202' >/dev/null"
Q=$(pid_of "sleep 201")
STAY=$(pid_of "sleep 202")
cleanup "kill $Q $STAY 2>/dev/null"
sleep 1.5   # a pass or two with everything in place: nothing to report
check "no escape while every process is in its session" test "$(count_events "$SG_STATE" session.escape)" = 0
t0=$(date +%s%N)
echo "$Q" >"$OUT/cgroup.procs"
check "moved out: session.escape recorded" wait_esc "$Q"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "# reported ${ms} ms after the move"
e=$(esc "$Q")
echeck "session.escape: pid, session, both cgroups" "$e" \
	".session_id == \"s1\" and .session_cgroup == \"/$SG_PARENT/s1\" and .cgroup == \"/sgesc-$$\" and .moved_to_session == null and .source == \"kernel\""
check "critical alert session-escape" wait_for "alert" 5 sh -c "cat '$SG_STATE'/journal/*.jsonl | grep '\"rule\":\"session-escape\"' | grep -q '\"severity\":\"critical\"'"
sleep 1.5
check "reported once, not every pass" test "$(journal_lines "$SG_STATE" | jq -c --argjson p "$Q" 'select(.event == "session.escape" and .pid == $p)' | wc -l)" = 1
check "control: the process that stayed is not reported" test -z "$(esc "$STAY")"
sleep 203 &
HOST=$!
cleanup "kill $HOST 2>/dev/null"
echo "$HOST" >"$OUT/cgroup.procs"
sleep 1.5
check "control: a host process moved around is not reported" test -z "$(esc "$HOST")"

# ---- moved into another session: its exec stays its own session's -------------------------
mkfifo "$T_TMP/go"
sgrun --session s1 -- sh -c "sh -c 'read x <$T_TMP/go; exec sleep 204' & wait" &
cleanup "kill $! 2>/dev/null"
wait_for "the waiting child" 5 sh -c "pgrep -x -f 'sh -c read x <$T_TMP/go; exec sleep 204' | grep -q ."
Q2=$(pgrep -x -f "sh -c read x <$T_TMP/go; exec sleep 204" | head -n1)
cleanup "kill $Q2 2>/dev/null"
echo "$Q2" >"$CG2/$SG_PARENT/s2/cgroup.procs"
check "moved into s2: session.escape recorded" wait_esc "$Q2"
echeck "session.escape names the other session" "$(esc "$Q2")" \
	".session_id == \"s1\" and .moved_to_session == \"s2\" and .cgroup == \"/$SG_PARENT/s2\""
echo go >"$T_TMP/go"
wait_for "exec" 5 sh -c "perl -ne 'print if /\\n\\z/' '$SG_STATE'/journal/*.jsonl | grep -q '\"args\":\\[\"204\"\\]'"
e=$(journal_lines "$SG_STATE" | jq -c --argjson p "$Q2" 'select(.event == "process.exec" and .pid == $p)' | tail -n1)
echeck "its exec after the move is recorded as s1's (ancestry wins)" "$e" '.session_id == "s1" and .cmd == "sleep"'

# ---- after a restart: seeded into s2, given back to s1 and reported -------------------------
mkfifo "$T_TMP/go2"
sgrun --session s1 -- sh -c "sh -c 'read x <$T_TMP/go2; exec sleep 205' & wait" &
cleanup "kill $! 2>/dev/null"
wait_for "the waiting child" 5 sh -c "pgrep -x -f 'sh -c read x <$T_TMP/go2; exec sleep 205' | grep -q ."
Q3=$(pgrep -x -f "sh -c read x <$T_TMP/go2; exec sleep 205" | head -n1)
cleanup "kill $Q3 2>/dev/null"
stop_daemon
echo "$Q3" >"$CG2/$SG_PARENT/s2/cgroup.procs"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon restarts"; finish; }
check "after the restart: session.escape recorded" wait_esc "$Q3"
echo "# $(esc "$Q3")"
echeck "it was seeded as s2 and is s1's by ancestry" "$(esc "$Q3")" \
	'.session_id == "s1" and .seeded_as == "s2" and .moved_to_session == "s2"'
echo go >"$T_TMP/go2"
wait_for "exec" 5 sh -c "perl -ne 'print if /\\n\\z/' '$SG_STATE'/journal/*.jsonl | grep -q '\"args\":\\[\"205\"\\]'"
e=$(journal_lines "$SG_STATE" | jq -c --argjson p "$Q3" 'select(.event == "process.exec" and .pid == $p)' | tail -n1)
echeck "its exec after the restart is recorded as s1's, not s2's" "$e" '.session_id == "s1"'
finish
