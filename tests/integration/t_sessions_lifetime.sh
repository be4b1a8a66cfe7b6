#!/usr/bin/env bash
# A session's lifetime is the orchestrator's: by default it stays running while it has
# no process (tool calls one after another, minutes apart) and ends on terminate, its
# timeout or a limit; --end-when-empty (recorded in session.create) ends it when its
# last process exits, as every session did before 2026-12.
. "$(dirname "$0")/lib.sh"
require_root
. "$(dirname "$0")/session_helpers.sh"

write_config "$T_TMP/c.yaml" "gateway: {enabled: false}"
start_daemon a --config "$T_TMP/c.yaml"
state() { sg session show "$1" | jq -r .state; }

# ---- default: empty is not the end --------------------------------------------------------
sg session create --id k1 >/dev/null && sg session start k1 >/dev/null
jcheck "session.create records end_when_empty false" "$(ev session.create k1)" '.end_when_empty == false'
jcheck "the session object says so" "$(sg session show k1)" '.end_when_empty == false'
sgrun --session k1 -- sh -c 'exit 3'
check "first tool call returns its status" test $? -eq 3
sleep 1.5   # three times the old end-of-session grace (500 ms)
check "empty for 1.5 s: still running" test "$(state k1)" = running
check "no session.terminate" test -z "$(ev session.terminate k1)"
# Contained: the root of the command's cgroup namespace is the session's cgroup (same
# inode as on the host; t_sessions_lifecycle.sh does the same).
out=$(sgrun --session k1 -- sh -c 'cat /proc/self/cgroup; stat -c ino=%i /sys/fs/cgroup/unified 2>/dev/null || stat -c ino=%i /sys/fs/cgroup')
check "second tool call runs in the session" bash -c 'grep -qx "0::/" <<<"$1" && grep -qx "ino=$2" <<<"$1"' _ "$out" "$(stat -c %i "$CG2/$SG_PARENT/k1")"
sleep 1
check "still running after the second" test "$(state k1)" = running
sg session terminate k1 --actor orch >/dev/null
check "terminate ends it" test "$(state k1)" = terminated
jcheck "reason api, the orchestrator's" "$(ev session.terminate k1)" '.reason == "api" and .actor.name == "orch"'
sg session cleanup k1 >/dev/null

# ---- default: the timeout still ends an empty session ---------------------------------------
sg session create --id k2 --timeout 1 >/dev/null && sg session start k2 >/dev/null
sgrun --session k2 -- true
wait_for "the timeout" 5 sh -c "[ \"\$('$BIN/sandgate' session show k2 --control '$SG_SOCK' | jq -r .state)\" = terminated ]"
jcheck "an empty session's timeout: reason timeout" "$(ev session.terminate k2)" '.reason == "timeout"'
sg session cleanup k2 >/dev/null

# ---- --end-when-empty: the old behaviour, recorded --------------------------------------------
sg session create --id k3 --end-when-empty >/dev/null && sg session start k3 >/dev/null
jcheck "session.create records end_when_empty true" "$(ev session.create k3)" '.end_when_empty == true'
check "not ended before any process" test "$(state k3)" = running
sgrun --session k3 -- sh -c 'exit 5'
wait_for "k3 ends" 5 sh -c "[ \"\$('$BIN/sandgate' session show k3 --control '$SG_SOCK' | jq -r .state)\" = terminated ]"
jcheck "its last process ends it: reason normal, exit status" "$(ev session.terminate k3)" \
	'.reason == "normal" and .exit_status == 5 and .source == "kernel"'
sg session cleanup k3 >/dev/null

# ---- the flag is checked ------------------------------------------------------------------------
out=$(req '{"verb":"session.create","args":{"id":"k4","end_when_empty":"yes"}}')
jcheck "end_when_empty must be a boolean" "$out" '.ok == false and (.error | test("end_when_empty"))'
stop_daemon
finish
