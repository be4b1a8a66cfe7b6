#!/usr/bin/env bash
# Bad requests to the session verbs: a clear error each, no change of state (registry,
# cgroups, journal), and the daemon keeps serving.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

write_config "$T_TMP/c.yaml" "gateway: {enabled: false}"
start_daemon a --config "$T_TMP/c.yaml"
sg session create --id s1 >/dev/null
sg session create --id s2 >/dev/null && sg session start s2 >/dev/null
before_show=$(sg session list | jq -S .)
before_cg=$(count_children)
before_ev=$(journal_lines "$SG_STATE" | grep -c '"event":"session\.')

# refused REASON-REGEX CLI-ARGS...: exits non-zero with one line naming the problem.
refused() {
	local want=$1 out rc
	shift
	out=$("$BIN/sandgate" "$@" --control "$SG_SOCK" 2>&1 >/dev/null)
	rc=$?
	check "refused: $* ($out)" sh -c "[ $rc -ne 0 ] && [ \$(printf '%s\n' \"\$1\" | wc -l) -eq 1 ] && printf '%s' \"\$1\" | grep -Eq \"\$2\"" _ "$out" "$want"
}
refused 'already exists' session create --id s1
refused 'unknown session' session start nope
refused 'unknown session' session show nope
refused 'cannot resume' session resume s1
refused 'cannot resume' session resume s2
refused 'cannot clean up' session cleanup s2
refused 'cannot start' session start s2
refused 'cannot pause' session pause s1
refused 'id' session create --id '../etc'
refused 'id' session create --id '.hidden'
refused 'unknown policy' session create --id s9 --policy nosuch
refused 'workdir' session create --id s9 --workdir relative/dir
refused 'workdir' session create --id s9 --workdir /
refused 'cgroup' session create --id s9 --cgroup /elsewhere/x
refused 'reason' session terminate s2 --reason because
refused 'reason' session pause s2 --reason whim
refused 'fs' session cleanup s1 --fs shredded
refused 'bad value' session create --id s9 --memory lots
refused 'status' tool --session s2 --name x --status maybe
refused 'unknown session' tool --session nope --name x --status success
refused 'SHA-256|not a' detail get 1234
refused 'no such detail' detail get 0000000000000000000000000000000000000000000000000000000000000000
out=$(sgrun --session s1 -- true 2>&1)
rc=$?
check "refused: run in a created session ($out)" sh -c "[ $rc -eq 125 ] && grep -q 'running session' <<'X'
$out
X"

# Raw requests: malformed JSON, wrong types, unknown arguments.
out=$(req '{"verb":"session.create","args":{"id":"s9",')
jcheck "malformed JSON" "$out" '.ok == false and (.error | test("malformed"))'
out=$(req '{"verb":"session.create","args":{"id":"s9","memory":"big"}}')
jcheck "wrong type" "$out" '.ok == false and (.error | test("memory"))'
out=$(req '{"verb":"session.create","args":{"id":"s9","colour":"red"}}')
jcheck "unknown argument" "$out" '.ok == false and (.error | test("colour"))'
out=$(req '{"verb":"session.create","args":{"id":"s9","cpus":-1}}')
jcheck "negative cpus" "$out" '.ok == false'
out=$(req '{"verb":"session.create","args":{"id":"s9","iface":["a/b"]}}')
jcheck "bad interface name" "$out" '.ok == false'
out=$(req '{"verb":"session.attach","args":{"id":"s1"}}')
jcheck "attach to a created session" "$out" '.ok == false'
out=$(req '{"verb":"session.whois","args":{"pid":-4}}')
jcheck "whois bad pid" "$out" '.ok == false'
out=$(req '{"verb":"session.start","args":{"id":"s1","id":"s2"}}')
jcheck "duplicate keys" "$out" '.ok == false'

check "registry unchanged" test "$(sg session list | jq -S .)" = "$before_show"
check "no cgroup made or lost" test "$(count_children)" -eq "$before_cg"
check "no session event from refused requests" \
	test "$(journal_lines "$SG_STATE" | grep -c '"event":"session\.')" -eq "$before_ev"
check "no stray registry file" test "$(ls "$SG_STATE/sessions" | sort | tr '\n' ' ')" = "s1.json s2.json "
check "still serving" sh -c "'$BIN/sandgate' status --control '$SG_SOCK' >/dev/null"
stop_daemon
check "the daemon exits 0 (no sanitizer report)" test $? -eq 0
finish
