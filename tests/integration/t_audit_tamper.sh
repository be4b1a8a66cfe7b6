#!/usr/bin/env bash
# The audit configuration the exec source depends on is watched (docs/audit.md "Tamper"):
# with the default config (exec source: audit where available, said in daemon.start),
#  - removing our rule (auditctl -d, what -D does to each rule) while the daemon is
#    stopped (SIGSTOP) and a session runs 20 execs: at SIGCONT the rule is back at once,
#    audit.tamper names the op and the process the kernel reports (auditctl), a critical
#    alert refs it, and each of the 20 execs is recorded exactly once (by the kernel's
#    record where one came, e.g. from another daemon's rule, else by the connector, which
#    held it), those recorded without arguments counted in sensor.loss;
#  - the same with the daemon running, the 20 execs right after the removal (racing its
#    discovery);
#  - auditctl -e 0: auditing is on again, audit.tamper audit_disabled, alert;
#  - afterwards execs come from the kernel again (args_source kernel), once each.
# Not done here: `auditctl -D` (it would delete the rules of other daemons running on
# the host) and `-e 2` (irreversible until reboot).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root
command -v auditctl >/dev/null || { echo "auditctl missing (package auditd)"; exit 1; }

st() { auditctl -s | awk -v k="$1" '$1 == k { print $2 }'; }
if [ "$(st enabled)" = 2 ]; then echo "audit is locked (enabled 2): cannot test"; exit 1; fi
EN0=$(st enabled)
cleanup "auditctl -e $EN0"

write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  files: false
  sensitive_paths: []"
start_daemon a --config "$T_TMP/c.yaml"
KEY=sandgate-$DPID
# The daemon first (it would put them back), then its rules.
cleanup "kill -CONT $DPID; kill -9 $DPID; sleep 0.3; auditctl -d always,exit -F arch=b64 -S execve,execveat -F key=$KEY; auditctl -d always,exit -F arch=b32 -S execve,execveat -F key=$KEY"
e=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "daemon.start")')
jcheck "daemon.start: exec_source audit by default, and why" "$e" \
	'.exec_source == "audit" and (.exec_source_why | test("available"))'
e=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "audit.exec_source")' | head -1)
jcheck "audit.exec_source says the audit source runs" "$e" '.exec_source == "audit"'
check "our rule, with this daemon's key, is loaded" sh -c "auditctl -l | grep -q 'key=$KEY'"

W=$T_TMP/work
mkdir -p "$W"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 120 &
KEEP=$!
cleanup "kill $KEEP"
# runner PREFIX: a session shell that, at the first line on its fifo, runs 20 execs
# (/bin/true PREFIX-0..19; echo and read are builtins, so these are its only children),
# says so in a file and waits for a second line.
runner() {
	mkfifo "$T_TMP/$1.go"
	sgrun --session s1 -- sh -c "read x < $T_TMP/$1.go; i=0; while [ \$i -lt 20 ]; do /bin/true $1-\$i; i=\$((i+1)); done; echo > $T_TMP/$1.done; read y < $T_TMP/$1.go" &
	cleanup "kill $!"
	eval "RUN_$1=$!"
}
runner gap
runner live
wait_exec() { wait_for "exec $1" 10 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F -- '$1')\" ]"; }
sgrun --session s1 -- /bin/true before-marker
wait_exec before-marker
e=$(ev process.exec s1 | jq -c 'select(.args == ["before-marker"])')
jcheck "before: the exec from the kernel (args_source kernel)" "$e" '.args_source == "kernel" and .argv_complete'
# losses PATTERN: the sum of sensor.loss (sensor audit) whose why matches.
losses() { journal_lines "$SG_STATE" | jq -s --arg w "$1" '[.[] | select(.event == "sensor.loss" and .sensor == "audit" and (.why | test($w))) | .lost] | add // 0'; }
NOARGS="without their arguments"
# accounted PREFIX LOSS0: each of the runner's 20 execs is recorded exactly once (by the
# kernel's record, or the connector's /proc read, or with no arguments when the process
# was gone before /proc was read), and those without arguments are in sensor.loss.
accounted() {
	local pfx=$1 l0=$2 P n u wa na lost
	P=$(ev process.exec s1 | jq -r --arg p "/bin/true $pfx-" 'select(.args[0]? == "-c" and (.args[1] | contains($p))) | .pid' | head -1)
	check "$pfx: the runner's own exec is recorded (pid ${P:-none})" test -n "$P"
	[ -n "$P" ] || P=-1
	n=$(ev process.exec s1 | jq -s --argjson P "$P" '[.[] | select(.ppid == $P)] | length')
	u=$(ev process.exec s1 | jq -s --argjson P "$P" '[.[] | select(.ppid == $P) | .pid] | unique | length')
	wa=$(ev process.exec s1 | jq -s --argjson P "$P" --arg p "$pfx-" '[.[] | select(.ppid == $P and (.args[0]? // "" | startswith($p))) | .args[0]] | unique | length')
	na=$(ev process.exec s1 | jq -s --argjson P "$P" '[.[] | select(.ppid == $P and .args == null)] | length')
	lost=$(( $(losses "$NOARGS") - l0 ))
	echo "# $pfx: process.exec $n (pids $u): with their arguments $wa, without $na; sensor.loss $lost"
	ev process.exec s1 | jq -r --argjson P "$P" 'select(.ppid == $P) | .args_source // "null"' | sort | uniq -c | sed 's/^/# /'
	check "$pfx: 20 execs, 20 process.exec, one each ($n, $u pids)" test "$n" -eq 20 -a "$u" -eq 20
	check "$pfx: each recorded with its arguments or counted ($wa + $na = 20)" test $((wa + na)) -eq 20
	check "$pfx: those without arguments are in sensor.loss ($lost = $na)" test "$lost" -eq "$na"
}
# The held-then-emitted execs and their losses are out at the next tick at the latest.
settle() { sleep 1.5; }

# ---- our rule removed while the daemon is stopped, execs right after ----------------------
kill -STOP "$DPID"
cleanup "kill -CONT $DPID"
L0=$(losses "$NOARGS")
auditctl -d always,exit -F arch=b64 -S execve,execveat -F key="$KEY" >/dev/null
echo go > "$T_TMP/gap.go"
# (sandgate run waits for the daemon: the session's own file says the execs are done)
wait_for "the 20 execs" 20 test -e "$T_TMP/gap.done"
kill -CONT "$DPID"
echo go > "$T_TMP/gap.go"
wait "$RUN_gap"
wait_for "audit.tamper" 5 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F audit.tamper)\" ]"
check "the rules are back within a second" wait_for "rules back" 2 sh -c "auditctl -l | grep -q 'arch=b64.*key=$KEY'"
t=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "audit.tamper")' | head -1)
jcheck "audit.tamper: rules removed, by auditctl as the kernel says, restored" "$t" \
	'(.what | startswith("rules_removed")) and .op == "remove_rule" and .comm == "auditctl"
	 and (.pid | type) == "number" and .restored == true and .exec_source == "audit"'
jcheck "audit.tamper counts the connector's execs in the gap" "$t" \
	'(.execs_fallback | type) == "number" and (.execs_missed | type) == "number"'
echo "# audit.tamper: execs_fallback $(jq .execs_fallback <<<"$t"), execs_missed $(jq .execs_missed <<<"$t")"
tseq=$(jq -r .seq <<<"$t")
a=$(journal_lines "$SG_STATE" | jq -c --argjson s "$tseq" 'select(.event == "alert" and .rule == "audit-tamper" and any(.refs[]; . == $s))')
jcheck "a critical alert refs the audit.tamper" "$a" '.severity == "critical"'
settle
accounted gap "$L0"

# ---- our rule removed while the daemon runs, execs at once (racing its discovery) -----------
L0=$(losses "$NOARGS")
auditctl -d always,exit -F arch=b64 -S execve,execveat -F key="$KEY" >/dev/null
echo go > "$T_TMP/live.go"
wait_for "the 20 execs" 20 test -e "$T_TMP/live.done"
echo go > "$T_TMP/live.go"
wait "$RUN_live"
wait_for "second audit.tamper" 5 sh -c "[ \$(cat '$SG_STATE'/journal/*.jsonl | grep -cF audit.tamper) -ge 2 ]"
check "the rules are back again" wait_for "rules back" 2 sh -c "auditctl -l | grep -q 'arch=b64.*key=$KEY'"
settle
accounted live "$L0"

# ---- auditing switched off ------------------------------------------------------------------
auditctl -e 0 >/dev/null
wait_for "third audit.tamper" 5 sh -c "[ \$(cat '$SG_STATE'/journal/*.jsonl | grep -cF audit.tamper) -ge 3 ]"
check "auditing is on again" wait_for "enabled 1" 2 sh -c "[ \"\$(auditctl -s | awk '\$1 == \"enabled\" {print \$2}')\" = 1 ]"
t=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "audit.tamper")' | sed -n 3p)
jcheck "audit.tamper: audit disabled, op set, auditctl, restored" "$t" \
	'.what == "audit_disabled" and .op == "set" and .comm == "auditctl" and .restored == true'
# Detection runs at idle priority and may lag its event by up to 2 s (docs/detection.md).
alerts() { [ "$(journal_lines "$SG_STATE" | jq -c 'select(.event == "alert" and .rule == "audit-tamper")' | wc -l)" -eq 3 ]; }
wait_for "three alerts" 5 alerts
n=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "alert" and .rule == "audit-tamper")' | wc -l)
check "three critical alerts ($n)" test "$n" -eq 3

# ---- afterwards: from the kernel again, once --------------------------------------------------
sgrun --session s1 -- /bin/true after-marker
wait_exec after-marker
sleep 0.5
e=$(ev process.exec s1 | jq -c 'select(.args == ["after-marker"])')
check "after: one process.exec" test "$(printf '%s\n' "$e" | grep -c .)" -eq 1
jcheck "after: from the kernel again" "$e" '.args_source == "kernel"'
n=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "audit.tamper")' | wc -l)
check "no further tamper reported ($n)" test "$n" -eq 3
stop_daemon
check "daemon exits 0" test $? -eq 0
check "no rule of ours left" sh -c "! auditctl -l | grep -q 'key=$KEY'"
[ "$FAILED" -eq 0 ] || { journal_lines "$SG_STATE" | tail -40 >&2; cat "$T_TMP/a.log" >&2; }
finish
