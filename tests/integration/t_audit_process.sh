#!/usr/bin/env bash
# process.exec / process.exit from the proc connector, for real processes in a real
# session: long and odd arguments, a setuid binary, cwd, a pipeline, exit codes and
# signals; host processes produce nothing. Processes whose fields are checked live a
# little (sleep) so the check does not depend on how fast /proc is read: completeness
# under a storm of short processes is measured by bench/audit, not asserted here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

# The connector is the fallback exec source now (the default is audit): set explicitly.
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  exec_source: proc_connector
  sensitive_paths: []"
start_daemon a --config "$T_TMP/c.yaml"
W=$T_TMP/work
mkdir -p "$W/sub"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 120 &
KEEP=$!
cleanup "kill $KEEP"

# execs ARGV0 MARKER: the session's process.exec events whose args hold MARKER.
execs() { ev process.exec s1 | jq -c --arg m "$1" 'select(any(.args[]?; . == $m))'; }
# wait_exec MARKER: polls the journal until the exec with MARKER shows up.
wait_exec() { wait_for "exec $1" 10 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F -- '$1')\" ]"; }

# ---- arguments: 140 KiB in total, newlines, quotes, invalid UTF-8 ---------------------
A=$(head -c 70000 /dev/zero | tr '\0' a)
B=$(head -c 70000 /dev/zero | tr '\0' b)
sgrun --session s1 -- sh -c 'sleep 0.3' big-marker "$A" "$B"
wait_exec big-marker
e=$(execs big-marker)
jcheck "140 KiB of arguments kept whole" "$e" \
	'.cmd == "sh" and .args[0] == "-c" and (.args[3] | length) == 70000 and
	 (.args[4] | length) == 70000 and .argv_complete == true and .args_truncated == false'
sgrun --session s1 -- sh -c 'sleep 0.3' odd-marker $'line1\nline2' "it's \"quoted\"" $'bad\xff\xfeutf8' ''
wait_exec odd-marker
e=$(execs odd-marker)
jcheck "newline and quotes survive" "$e" \
	'.args[3] == "line1\nline2" and .args[4] == "it'"'"'s \"quoted\"" and .args[6] == ""'
jcheck "invalid UTF-8 becomes valid JSON" "$e" \
	'(.args[5] | startswith("bad")) and (.args[5] | endswith("utf8")) and .argv_complete'
jcheck "arguments read from /proc say so (args_source proc: not the kernel's copy)" "$e" \
	'.args_source == "proc"'
jcheck "exec carries pid, ppid, uid, euid, exe" "$e" \
	'(.pid | type) == "number" and (.ppid | type) == "number" and .uid == 0 and .euid == 0
	 and (.exe | test("/(da|ba)?sh$")) and .comm == "sh"'

# ---- setuid binary: euid differs from uid ---------------------------------------------
SUID=$(mktemp -d /tmp/sgsuid.XXXXXX)
cleanup "rm -rf $SUID"
chmod 0755 "$SUID"
cp /usr/bin/sleep "$SUID/suid-sleep" && chmod 4755 "$SUID/suid-sleep"
# no_new_privs in a contained run keeps setuid from raising euid: --privileged here.
sgrun --privileged --session s1 --uid nobody --cwd / -- "$SUID/suid-sleep" 0.31
wait_for "setuid exec" 10 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F suid-sleep)\" ]"
e=$(ev process.exec s1 | jq -c 'select(.exe != null and (.exe | endswith("suid-sleep")))')
jcheck "setuid: uid nobody, euid root" "$e" ".uid == $(id -u nobody) and .euid == 0 and .cmd != null"

# ---- cwd --------------------------------------------------------------------------------
sgrun --session s1 --cwd "$W/sub" -- sleep 0.32
wait_exec 0.32
e=$(execs 0.32)
jcheck "cwd is the process's directory" "$e" ".cwd == \"$W/sub\" and .cmd == \"sleep\""

# ---- pipeline: every stage, parent is the shell ------------------------------------------
sgrun --session s1 -- sh -c 'sleep 0.2 | tr x y | cat >/dev/null; echo pipe-marker >/dev/null' pipe-sh
wait_exec pipe-sh
shpid=$(execs pipe-sh | jq -r '.pid')
wait_for "pipeline stages" 10 sh -c "[ \$(cat '$SG_STATE'/journal/*.jsonl | jq -c 'select(.event == \"process.exec\" and .ppid == $shpid)' | wc -l) -ge 3 ]"
kids=$(ev process.exec s1 | jq -r --argjson p "$shpid" 'select(.ppid == $p) | .cmd' | sort | tr '\n' ' ')
check "pipeline: sleep, tr and cat are children of the shell ($kids)" test "$kids" = "cat sleep tr "

# ---- exit codes and signals --------------------------------------------------------------
sgrun --session s1 -- sh -c 'sleep 0.2; exit 5' exit-marker
sgrun --session s1 -- sh -c 'sleep 0.2; kill -TERM $$' sig-marker
wait_exec sig-marker
p=$(execs exit-marker | jq -r .pid)
wait_for "exit events" 10 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | jq -c 'select(.event == \"process.exit\" and .pid == $p)')\" ]"
e=$(ev process.exit s1 | jq -c --argjson p "$p" 'select(.pid == $p)')
jcheck "exit code 5, no signal, a duration" "$e" \
	'.exit_code == 5 and .signal == null and .duration_us >= 150000 and .duration_us < 60000000'
p=$(execs sig-marker | jq -r .pid)
wait_for "signal exit" 10 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | jq -c 'select(.event == \"process.exit\" and .pid == $p)')\" ]"
e=$(ev process.exit s1 | jq -c --argjson p "$p" 'select(.pid == $p)')
jcheck "killed by SIGTERM: signal 15, exit code null" "$e" '.signal == 15 and .exit_code == null'

# ---- host processes: nothing -------------------------------------------------------------
/bin/sh -c 'sleep 0.2' host-marker-$$
sgrun --session s1 -- sh -c 'sleep 0.1' after-host-marker
wait_exec after-host-marker
n=$(journal_lines "$SG_STATE" | grep -c "host-marker-$$" || true)
check "a host process gives no event" test "$n" -eq 0
n=$(journal_lines "$SG_STATE" | jq -c 'select((.event | startswith("process.")) and .session_id != "s1")' | wc -l)
check "every process event belongs to the session" test "$n" -eq 0

kill "$KEEP" 2>/dev/null
stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
finish
