#!/usr/bin/env bash
# Every session transition end to end, on real cgroups with real processes: create
# (limits in the kernel), start, run, pause (the processes really stop), resume (they
# go on; what changed meanwhile is reported), terminate (api, policy_violation, timeout),
# the kernel's own ends (normal exit, signal, OOM), cleanup. Events checked field by field.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
policies:
  default:
    verbosity: summary
  audit:
    verbosity: full"
start_daemon a --config "$T_TMP/c.yaml"
W=$T_TMP/work
mkdir -p "$W" && echo before >"$W/old.txt" && echo keep >"$W/gone.txt"

# ---- create: the session object, the cgroups, the limits ----------------------------
out=$(sg session create --id s1 --tenant acme --user alice --template py --memory 64M \
	--cpus 0.5 --pids 64 --timeout 600 --workdir "$W" --actor ci-bot)
check "create exits 0" test $? -eq 0
jcheck "create prints the session" "$out" \
	'.id == "s1" and .state == "created" and .mark >= 1 and .tenant_id == "acme" and
	 .resources.memory == 67108864 and .resources.cpus == 0.5 and .resources.pids == 64'
check "v2 cgroup exists" test -d "$CG2/$SG_PARENT/s1"
if [ -d /sys/fs/cgroup/memory/$SG_PARENT ]; then
	check "v1 memory limit applied" grep -qx 67108864 /sys/fs/cgroup/memory/$SG_PARENT/s1/memory.limit_in_bytes
	check "v1 cpu quota applied" grep -qx 50000 /sys/fs/cgroup/cpu/$SG_PARENT/s1/cpu.cfs_quota_us
	check "v1 pids limit applied" grep -qx 64 /sys/fs/cgroup/pids/$SG_PARENT/s1/pids.max
fi
check "registry file written 0600" test "$(stat -c %a "$SG_STATE/sessions/s1.json")" = 600
e=$(ev session.create s1)
jcheck "session.create fields" "$e" \
	'.source == "orchestrator" and .tenant_id == "acme" and .user_id == "alice" and
	 .template == "py" and .resources.memory == 67108864 and .resources.pids == 64 and
	 .resources.timeout == 600 and .actor.uid == 0 and (.actor.pid | type) == "number" and
	 .actor.name == "ci-bot" and .cgroup_id > 0'

# ---- start, run ----------------------------------------------------------------------
sg session start s1 >/dev/null
check "start exits 0" test $? -eq 0
e=$(ev session.start s1)
jcheck "session.start fields" "$e" \
	'.host_id != null and .limits.memory_max == 67108864 and .limits.pids_max == 64 and
	 .limits.cpus == 0.5 and .limits.timeout_s == 600 and .actor.uid == 0 and .actor.name == null'
# Contained (docs/threat-model.md): the command sees the session's cgroup as the root of
# its cgroup namespace; that root is the session's cgroup on the host (same inode).
out=$(sgrun --session s1 -- sh -c 'cat /proc/self/cgroup; stat -c ino=%i /sys/fs/cgroup/unified 2>/dev/null || stat -c ino=%i /sys/fs/cgroup')
check "run puts the command in the session cgroup" grep -qx "0::/" <<<"$out"
check "the root of its cgroup namespace is the session's cgroup" \
	grep -qx "ino=$(stat -c %i "$CG2/$SG_PARENT/s1")" <<<"$out"
sgrun --session s1 -- sh -c 'exit 7'
check "run returns the command's exit status" test $? -eq 7
# That command was the last one: the session stays running, empty, until the
# orchestrator ends it (before 2026-12 "populated 0" ended it: now --end-when-empty,
# t_sessions_lifetime.sh, and s4/s5 below).
sleep 1
jcheck "empty, it keeps running (the orchestrator's to end)" \
	"$(sg session show s1)" '.state == "running" and .populated == false'
sg session terminate s1 --reason normal >/dev/null
e=$(ev session.terminate s1)
jcheck "terminate: reason normal, the last exit status" "$e" \
	'.reason == "normal" and .source == "orchestrator" and .actor.uid == 0'
sg session cleanup s1 --fs preserved >/dev/null
e=$(ev session.cleanup s1)
jcheck "session.cleanup fields" "$e" '.fs_state == "preserved" and .actor.uid == 0'
check "cgroup removed at cleanup" test ! -d "$CG2/$SG_PARENT/s1"
check "registry file removed at cleanup" test ! -e "$SG_STATE/sessions/s1.json"

# ---- pause really stops, resume restarts, changes while paused are reported ------------
sg session create --id s2 --workdir "$W" >/dev/null && sg session start s2 >/dev/null
sgrun --session s2 -- sh -c "i=0; while :; do i=\$((i+1)); echo \$i >>'$W/counter'; sleep 0.02; done" &
wait_for "the counter" 5 test -s "$W/counter"
sg session pause s2 --reason api --actor ops >/dev/null
check "pause exits 0" test $? -eq 0
check "the kernel says frozen" grep -qx "frozen 1" "$CG2/$SG_PARENT/s2/cgroup.events"
a=$(wc -l <"$W/counter"); sleep 0.5; b=$(wc -l <"$W/counter")
check "the counter stops while paused ($a = $b)" test "$a" = "$b"
echo changed >>"$W/old.txt"; echo new >"$W/new.txt"; rm "$W/gone.txt"
e=$(ev session.pause s2)
jcheck "session.pause fields" "$e" '.reason == "api" and .actor.name == "ops"'
sg session resume s2 >/dev/null
check "resume exits 0" test $? -eq 0
sleep 0.3; c=$(wc -l <"$W/counter")
check "the counter goes on after resume ($b < $c)" test "$b" -lt "$c"
e=$(ev session.resume s2)
jcheck "changed_while_paused lists the files" "$e" \
	'.changed_while_paused.files.modified == ["old.txt"] and
	 .changed_while_paused.files.created == ["new.txt"] and
	 .changed_while_paused.files.deleted == ["gone.txt"] and
	 (.changed_while_paused.files.modified | index("counter")) == null and
	 .changed_while_paused.processes.appeared == [] and .actor.uid == 0'

# ---- terminate: policy violation ------------------------------------------------------
sg session terminate s2 --reason policy_violation >/dev/null
check "terminate exits 0" test $? -eq 0
check "the cgroup is empty after terminate" grep -qx "populated 0" "$CG2/$SG_PARENT/s2/cgroup.events"
e=$(ev session.terminate s2)
jcheck "terminate: reason policy_violation" "$e" \
	'.reason == "policy_violation" and .source == "orchestrator" and .actor.uid == 0 and
	 has("exit_status")'
sg session cleanup s2 --fs deleted >/dev/null
check "cleanup --fs deleted removes the workdir" test ! -e "$W"
jcheck "fs_state deleted" "$(ev session.cleanup s2)" '.fs_state == "deleted"'

# ---- timeout ---------------------------------------------------------------------------
sg session create --id s3 --timeout 1 >/dev/null && sg session start s3 >/dev/null
sgrun --session s3 -- sleep 30 &
wait_for "the timeout kill" 5 sh -c "'$BIN/sandgate' session show s3 --control '$SG_SOCK' | jq -e '.state == \"terminated\"' >/dev/null"
jcheck "timeout kill: reason timeout" "$(ev session.terminate s3)" '.reason == "timeout"'
jcheck "resource.limit timeout" "$(ev resource.limit s3)" \
	'.limit == "timeout" and .configured == 1 and .action == "kill"'

# ---- signal and OOM seen by the kernel --------------------------------------------------
sg session create --id s4 --end-when-empty >/dev/null && sg session start s4 >/dev/null
sgrun --session s4 -- sh -c 'kill -TERM $$'
check "run returns 128+signal" test $? -eq 143
wait_for "the signal end" 5 sh -c "'$BIN/sandgate' session show s4 --control '$SG_SOCK' | jq -e '.state == \"terminated\"' >/dev/null"
jcheck "reason signal" "$(ev session.terminate s4)" '.reason == "signal" and .signal == 15'
if [ -d /sys/fs/cgroup/memory/$SG_PARENT ] || grep -qw memory "$CG2/cgroup.controllers"; then
	sg session create --id s5 --memory 16M --end-when-empty >/dev/null && sg session start s5 >/dev/null
	sgrun --session s5 -- sh -c 'x=$(head -c 200000000 /dev/zero | tr "\0" a); echo ${#x}' >/dev/null 2>&1
	wait_for "the OOM end" 5 sh -c "'$BIN/sandgate' session show s5 --control '$SG_SOCK' | jq -e '.state == \"terminated\"' >/dev/null"
	jcheck "reason oom" "$(ev session.terminate s5)" '.reason == "oom"'
	# memory_max reports come with it now: pick the OOM one (docs/limits.md)
	jcheck "resource.limit memory_oom" "$(ev resource.limit s5 | jq -c 'select(.limit == "memory_oom")')" \
		'.limit == "memory_oom" and .configured == 16777216'
fi

# ---- run: uid, cwd, stdin passes through ------------------------------------------------
sg session create --id s6 >/dev/null && sg session start s6 >/dev/null
sgrun --session s6 -- sleep 30 &
out=$(sgrun --session s6 --uid nobody --cwd /tmp -- sh -c 'id -u; pwd')
check "run --uid --cwd" test "$out" = "$(id -u nobody)
/tmp"
out=$(echo piped | sgrun --session s6 -- cat)
check "stdin passes through" test "$out" = piped
# ---- a process inside a session cannot talk to the control socket ----------------------
# Contained, the socket is not even there (covered in the session's mount namespace);
# uncontained, the daemon refuses a peer in a session cgroup.
out=$(sgrun --session s6 -- "$BIN/sandgate" status --control "$SG_SOCK" 2>&1)
check "inside a session the control socket is out of reach" grep -q "cannot connect" <<<"$out"
out=$(sgrun --privileged --session s6 -- "$BIN/sandgate" status --control "$SG_SOCK" 2>&1)
check "inside a session the control socket refuses" grep -q "permission denied" <<<"$out"
pid=$(head -1 "$CG2/$SG_PARENT/s6/cgroup.procs")
out=$(req "{\"verb\":\"session.whois\",\"args\":{\"pid\":$pid}}")
jcheck "pid -> session" "$out" ".result.session_id == \"s6\""
out=$(req "{\"verb\":\"session.whois\",\"args\":{\"pid\":$$}}")
jcheck "a pid outside is in no session" "$out" '.result.session_id == null'

# ---- tool invocations: redaction, verbosity, detail store ----------------------------------
sg tool --session s6 --name bash --status success --call-id c1 \
	--input-summary 'export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE; curl https://bob:hunter2@h.test' \
	--output-summary 'token ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok' >/dev/null
e=$(ev tool.invoke s6)
jcheck "tool.invoke fields" "$e" \
	'.tool == "bash" and .status == "success" and .call_id == "c1" and .actor.uid == 0'
check "summaries redacted" sh -c "! grep -q -e AKIAIOSFODNN7EXAMPLE -e hunter2 -e ghp_abc <<'X'
$e
X"
check "secrets never reach the journal" sh -c "! cat '$SG_STATE'/journal/*.jsonl | grep -q -e AKIAIOSFODNN7EXAMPLE -e hunter2"
sg session create --id s7 --policy audit >/dev/null
sg tool --session s7 --name fetch --status error --input 'the whole input' --input-summary in >/dev/null
e=$(ev tool.invoke s7)
jcheck "full verbosity references the detail by hash" "$e" '.verbosity == "full" and (.detail.input | length) == 64'
h=$(jq -r .detail.input <<<"$e")
check "detail file is 0600" test "$(stat -c %a "$SG_STATE/detail/$h")" = 600
out=$(sg detail get "$h" --actor auditor)
check "detail get returns the full input" test "$out" = "the whole input"
dr=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "detail.read" and .actor.name == "auditor")')
check "detail reads are logged" test -n "$dr"
sg tool --session s6 --model m1 --input-summary 'password=xyz' --input-tokens 5 >/dev/null
jcheck "model.summary" "$(ev model.summary s6)" '.model == "m1" and .input_tokens == 5 and (.input_summary | contains("xyz") | not)'

# ---- adopt an existing cgroup (--cgroup): used, not removed --------------------------------
mkdir "$CG2/$SG_PARENT/ext"
cleanup "rmdir '$CG2/$SG_PARENT/ext'"
out=$(sg session create --id s8 --cgroup "/$SG_PARENT/ext")
jcheck "--cgroup adopts" "$out" ".adopted == true and .cgroup == \"/$SG_PARENT/ext\""
check "the same cgroup cannot be adopted twice" sh -c "! '$BIN/sandgate' session create --id s9 --cgroup '/$SG_PARENT/ext' --control '$SG_SOCK' 2>/dev/null"
sg session terminate s8 >/dev/null && sg session cleanup s8 >/dev/null
check "an adopted cgroup stays after cleanup" test -d "$CG2/$SG_PARENT/ext"

stop_daemon
check "the daemon exits 0 (no sanitizer report)" test $? -eq 0
check "journal verifies" "$BIN/sandgate" verify "$SG_STATE"
finish
