#!/usr/bin/env bash
# audit.exec_source: audit — process.exec from the kernel's audit records (read-only
# multicast group) for real processes in a real session: arguments of 128 KiB, newlines,
# invalid UTF-8, from processes that exit at once (no /proc race to win); one event per
# exec (the connector's are not emitted too); host processes silent; at stop our rules
# are gone and the enabled flag and backlog limit are as they were.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root
command -v auditctl >/dev/null || { echo "auditctl missing (package auditd)"; exit 1; }

st() { auditctl -s | awk -v k="$1" '$1 == k { print $2 }'; }
EN0=$(st enabled)
BL0=$(st backlog_limit)
if [ "$EN0" = 2 ]; then echo "audit is locked (enabled 2): cannot test"; exit 1; fi

write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  exec_source: audit
  files: false
  sensitive_paths: []"
start_daemon a --config "$T_TMP/c.yaml"
W=$T_TMP/work
mkdir -p "$W"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 120 &
KEEP=$!
cleanup "kill $KEEP"

check "our rule is loaded while the daemon runs" sh -c 'auditctl -l | grep -q "key=sandgate"'
check "auditing is enabled while the daemon runs" test "$(st enabled)" = 1

# jcheck with no event at all fails (jq -e passes on empty input).
ejcheck() { if [ -z "$2" ]; then fail "$1 (no event)"; else jcheck "$@"; fi; }
execs() { ev process.exec s1 | jq -c --arg m "$1" 'select(any(.args[]?; . == $m))'; }
wait_exec() { wait_for "exec $1" 10 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F -- '$1')\" ]"; }

# ---- arguments from the kernel, for a process that exits at once -----------------------
A=$(head -c 131071 /dev/zero | tr '\0' a)   # the longest one argument can be
B=$(head -c 20000 /dev/zero | tr '\0' b)
sgrun --session s1 -- /bin/true big-marker "$A" $'line1\nline2' $'bad\xff\xfeutf8' "it's \"q\"" '' "$B"
wait_exec big-marker
e=$(execs big-marker)
check "exactly one process.exec for one exec" test "$(printf '%s\n' "$e" | grep -c .)" -eq 1
ejcheck "128 KiB argument (and 20 KB more: 148 KiB) whole, complete" "$e" \
	'.cmd == "/bin/true" and (.args[1] | length) == 131071 and (.args[6] | length) == 20000 and .argv_complete == true
	 and .args_truncated == false'
ejcheck "newline, quotes, empty argument" "$e" \
	'.args[2] == "line1\nline2" and .args[4] == "it'"'"'s \"q\"" and .args[5] == ""'
ejcheck "invalid UTF-8 becomes valid JSON" "$e" \
	'(.args[3] | startswith("bad")) and (.args[3] | endswith("utf8"))'
ejcheck "pid, ppid, uid, euid, exe, cwd, comm from the kernel" "$e" \
	"(.pid | type) == \"number\" and (.ppid | type) == \"number\" and .uid == 0 and
	 .euid == 0 and .exe == \"$(readlink -f /bin/true)\" and .cwd == \"$W\" and .comm == \"true\""
ejcheck "arguments from the kernel say so (args_source kernel)" "$e" '.args_source == "kernel"'

# ---- stdin from /proc while the process lives: a pipe's reading end ----------------------
sgrun --session s1 -- sh -c 'echo x | sleep 0.41' pipe-sh
wait_exec 0.41
e=$(execs 0.41)
ejcheck "stdin of a pipeline stage is the pipe" "$e" '.cmd == "sleep" and (.stdin | startswith("pipe:["))'

# ---- a burst of short processes: every one complete ---------------------------------------
sgrun --session s1 -- sh -c 'i=0; while [ $i -lt 300 ]; do /bin/true burst-$i; i=$((i+1)); done'
wait_exec burst-299
n=$(ev process.exec s1 | jq -c 'select(.cmd == "/bin/true" and (.args[0] // "" | startswith("burst-")) and .argv_complete)' | wc -l)
check "300 of 300 short execs complete ($n)" test "$n" -eq 300

# ---- host processes: nothing ---------------------------------------------------------------
/bin/true host-marker-$$
sgrun --session s1 -- /bin/true after-host-marker
wait_exec after-host-marker
n=$(journal_lines "$SG_STATE" | grep -c "host-marker-$$" || true)
check "a host process gives no event" test "$n" -eq 0
n=$(journal_lines "$SG_STATE" | jq -c 'select((.event | startswith("process.")) and .session_id != "s1")' | wc -l)
check "every process event belongs to the session" test "$n" -eq 0

kill "$KEEP" 2>/dev/null
stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
check "no sandgate rule left (auditctl -l)" sh -c '! auditctl -l | grep -q "key=sandgate"'
check "enabled flag restored ($EN0)" test "$(st enabled)" = "$EN0"
check "backlog limit restored ($BL0)" test "$(st backlog_limit)" = "$BL0"

# ---- a host's rules: an identical one is used and kept, another one untouched ----------
OURS="-F arch=b64 -S execve,execveat -F key=sandgate"
HOST="-F arch=b64 -S kexec_load -F key=sghost$$"
cleanup "auditctl -d always,exit $OURS 2>/dev/null; auditctl -d always,exit $HOST 2>/dev/null"
auditctl -a always,exit $OURS >/dev/null && auditctl -a always,exit $HOST >/dev/null
start_daemon b --config "$T_TMP/c.yaml"
sg session create --id s2 --workdir "$W" >/dev/null && sg session start s2 >/dev/null
sgrun --session s2 -- /bin/true host-rule-marker
wait_exec host-rule-marker
n=$(ev process.exec s2 | jq -c 'select(.args == ["host-rule-marker"] and .argv_complete)' | wc -l)
check "with a host's identical rule: one event ($n)" test "$n" -eq 1
stop_daemon
rules=$(auditctl -l)
check "the host's identical b64 rule is still there" grep -q -- "arch=b64 -S execve,execveat -F key=sandgate" <<<"$rules"
check "our own b32 rule is gone" bash -c '! grep -q -- "arch=b32.*key=sandgate" <<<"$1"' _ "$rules"
check "the host's other rule is untouched" grep -q -- "key=sghost$$" <<<"$rules"
check "enabled flag restored again ($EN0)" test "$(st enabled)" = "$EN0"
finish
