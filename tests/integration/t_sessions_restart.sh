#!/usr/bin/env bash
# A daemon restart in the middle of running sessions: the registry is adopted again with
# the same marks and cgroups, processes stay attributed to their sessions, and what ended
# while the daemon was down is reported as the kernel left it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

write_config "$T_TMP/c.yaml" "gateway: {enabled: false}"
start_daemon a --config "$T_TMP/c.yaml"
# --end-when-empty: s2's end is its last process's, seen at the restart.
for s in s1 s2 s3; do sg session create --id $s --end-when-empty >/dev/null; done
sg session start s1 >/dev/null && sg session start s2 >/dev/null
sgrun --session s1 -- sleep 60 &
sgrun --session s2 -- sleep 60 &
wait_for "both sessions populated" 5 sh -c "grep -qx 'populated 1' '$CG2/$SG_PARENT/s1/cgroup.events' && grep -qx 'populated 1' '$CG2/$SG_PARENT/s2/cgroup.events'"
before=$(sg session list | jq -S '[.sessions[] | {id, mark, cgroup, cgroup_id}] | sort_by(.id)')
p1=$(head -1 "$CG2/$SG_PARENT/s1/cgroup.procs")
p2=$(head -1 "$CG2/$SG_PARENT/s2/cgroup.procs")

stop_daemon
check "the daemon exits 0 (no sanitizer report)" test $? -eq 0
check "sessions outlive the daemon" kill -0 "$p1"
kill -9 "$p2"        # s2's last process ends while nobody is watching
wait_for "s2 empty" 5 grep -qx "populated 0" "$CG2/$SG_PARENT/s2/cgroup.events"
start_daemon a --config "$T_TMP/c.yaml"

after=$(sg session list | jq -S '[.sessions[] | {id, mark, cgroup, cgroup_id}] | sort_by(.id)')
check "same marks and cgroups after restart" test "$after" = "$before"
check "three session.adopt events" test "$(count_events "$SG_STATE" session.adopt)" -eq 3
jcheck "s1 still running" "$(sg session show s1)" '.state == "running" and .populated == true'
out=$(req "{\"verb\":\"session.whois\",\"args\":{\"pid\":$p1}}")
jcheck "s1's process is still attributed to s1" "$out" '.result.session_id == "s1"'
jcheck "s2 ended while the daemon was down" "$(sg session show s2)" '.state == "terminated" and .end_reason == "normal"'
jcheck "s3 still created" "$(sg session show s3)" '.state == "created"'
jcheck "its end is recorded, source kernel" "$(ev session.terminate s2)" '.reason == "normal" and .source == "kernel"'
out=$(sg session create --id s4)
jcheck "a new session gets a free mark" "$out" "[.mark] | inside([$(jq '[.[].mark] | join(",")' -r <<<"$before")]) | not"
jcheck "the adopted s1 still pauses" "$(sg session pause s1)" '.state == "paused"'
out=$(sg session resume s1)
jcheck "and resumes" "$out" '.state == "running"'
sg session terminate s1 >/dev/null
check "and terminates" test $? -eq 0
sg session terminate s3 >/dev/null; sg session terminate s4 >/dev/null
for s in s1 s2 s3 s4; do sg session cleanup $s >/dev/null; done
check "all cleaned up" test "$(count_children)" -eq 0
check "registry empty" test -z "$(ls "$SG_STATE/sessions")"
stop_daemon
check "the daemon exits 0 (no sanitizer report)" test $? -eq 0
check "journal verifies" "$BIN/sandgate" verify "$SG_STATE"
finish
