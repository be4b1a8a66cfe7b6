#!/usr/bin/env bash
# The CLI's global options (interface.md): --version on both programs (CMake's project
# VERSION), --control and --state-dir before the subcommand as well as after it, the
# later one winning; a global option without its value is a usage error (exit 2).
. "$(dirname "$0")/lib.sh"
require_root
. "$(dirname "$0")/session_helpers.sh"

want=$(sed -n 's/^project(sandgate VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
check "project() has a version ($want)" test -n "$want"
check "sandgate --version prints it" test "$("$BIN/sandgate" --version)" = "sandgate $want"
check "sandgated --version prints it" test "$("$BIN/sandgated" --version)" = "sandgated $want"

write_config "$T_TMP/g.yaml" "gateway: {enabled: false}"
start_daemon g1 --config "$T_TMP/g.yaml"
S=$SG_SOCK
check "--control before the subcommand: session list" \
	sh -c "'$BIN/sandgate' --control '$S' session list | jq -e 'type == \"array\" or type == \"object\"' >/dev/null"
check "--control=PATH before the subcommand: status" \
	sh -c "'$BIN/sandgate' --control='$S' status | grep -q next_seq"
check "--control after the subcommand still works" \
	sh -c "'$BIN/sandgate' status --control '$S' | grep -q next_seq"
check "the later --control wins (bad before, good after)" \
	sh -c "'$BIN/sandgate' --control /nonexistent/x.sock status --control '$S' | grep -q next_seq"
out=$("$BIN/sandgate" --control "$S" session create --id g-s1 2>&1)
check "--control before: session create" sh -c "echo '$out' | jq -e '.id == \"g-s1\"' >/dev/null"
"$BIN/sandgate" --control "$S" session terminate g-s1 >/dev/null 2>&1
"$BIN/sandgate" --control "$S" session cleanup g-s1 >/dev/null 2>&1
check "--state-dir before the subcommand: query" \
	sh -c "'$BIN/sandgate' --state-dir '$SG_STATE' query --event session.create | grep -q g-s1"
check "--state-dir=DIR before, and --control ignored by query" \
	sh -c "'$BIN/sandgate' --control '$S' --state-dir='$SG_STATE' query --event session.create | grep -q g-s1"
check "--state-dir after the subcommand still works" \
	sh -c "'$BIN/sandgate' query --state-dir '$SG_STATE' --event session.create | grep -q g-s1"
"$BIN/sandgate" --control 2>"$T_TMP/err"
check "--control without a value: exit 2" test $? -eq 2
check "... and says so" grep -q -- "--control needs a value" "$T_TMP/err"
"$BIN/sandgate" --bogus status 2>"$T_TMP/err"
check "an unknown global option: exit 2, named" sh -c "test $? -eq 2 && grep -q -- \"--bogus\" '$T_TMP/err'"
"$BIN/sandgate" --control "$S" 2>/dev/null
check "globals without a subcommand: exit 2" test $? -eq 2
stop_daemon
finish
