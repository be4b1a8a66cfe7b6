#!/usr/bin/env bash
# sandgate query answers the investigation questions of issue 8 over a scripted journal
# (tests/tools/sg_genevents.c) written by the real writer across several segments. Each
# answer is checked twice: against a known count, and byte for byte against the same
# question asked of the raw lines with jq (the baseline). Then: a rebuilt index equals the
# incremental one, and a corrupt index is moved aside and rebuilt.
. "$(dirname "$0")/lib.sh"
require_root

S=$T_TMP/state
"$BIN/sg_genevents" --segment-bytes 3000 "$S" >/dev/null
segs=$(ls "$S"/journal/*.jsonl | wc -l)
check "the scenario spans several segments ($segs)" test "$segs" -ge 3

# q DESCRIPTION COUNT JQ_FILTER -- QUERY_ARGS...: the query's jsonl output has COUNT
# lines and is exactly the journal lines the jq filter selects, in order.
q() {
	local what=$1 want=$2 filter=$3
	shift 4
	local got exp
	got=$("$BIN/sandgate" query --state-dir "$S" "$@")
	exp=$(cat "$S"/journal/*.jsonl | jq -R -r "(fromjson | $filter) as \$m | select(\$m) | .")
	if [ "$(printf '%s' "$got" | grep -c .)" -eq "$want" ] && [ "$got" = "$exp" ]; then
		pass "$what ($want lines)"
	else
		fail "$what: want $want lines equal to jq's, got $(printf '%s' "$got" | grep -c .)"
		diff <(echo "$exp") <(echo "$got") | head -5
	fi
}

q "what s-alpha did between 10:00:02 and 10:00:09.5" 8 \
	'.session_id == "s-alpha" and .ts >= "2026-06-29T10:00:02" and .ts <= "2026-06-29T10:00:09.5"' -- \
	--session s-alpha --since 2026-06-29T10:00:02Z --until 2026-06-29T10:00:09.5Z
q "which sessions read /etc/shadow" 2 '.path == "/etc/shadow"' -- --path /etc/shadow
q "anything under /etc/ (path or new_path)" 4 \
	'((.path // "") | startswith("/etc/")) or ((.new_path // "") | startswith("/etc/"))' -- --path '/etc/*'
q "who went to evil.example.test (case, trailing dot)" 2 \
	'((.qname // "") | ascii_downcase | rtrimstr(".")) == "evil.example.test" or .domain == "evil.example.test"' -- \
	--domain EVIL.example.test.
q "pypi.* by prefix" 3 '.domain == "pypi.org" or .qname == "pypi.org"' -- --domain 'pypi.*'
q "who installed requests (any version)" 2 '.event == "package.install" and .name == "requests"' -- \
	--package requests
q "who installed requests 2.31.0" 1 '.event == "package.install" and .name == "requests" and .resolved_version == "2.31.0"' -- \
	--package requests@2.31.0
q "npm scoped package with version" 1 '.name == "@scope/left-pad"' -- --package @scope/left-pad@1.3.0
q "sessions that ended by oom" 1 '.event == "session.terminate" and .reason == "oom"' -- \
	--event session.terminate --reason oom
q "everything with reason timeout" 2 '.reason == "timeout"' -- --reason timeout
q "anything done as uid 0" 2 '.uid == 0 or .euid == 0' -- --uid 0
q "event list" 4 '.event == "session.terminate" or .event == "session.pause"' -- \
	--event session.terminate,session.pause
q "filters combine (file.read as uid 0)" 1 '.event == "file.read" and .uid == 0' -- --event file.read --uid 0
q "a path with control and invalid UTF-8 bytes is found by prefix" 1 \
	'.event == "file.write" and ((.path // "") | startswith("/tmp/we"))' -- --path '/tmp/we*'
q "no filter: every line, byte for byte" "$(cat "$S"/journal/*.jsonl | wc -l)" 'true' --

table=$("$BIN/sandgate" query --state-dir "$S" --session s-alpha --format table)
check "table: one row per event" test "$(grep -c . <<<"$table")" -eq 13
check "table: the child of bash is indented under it" \
	grep -qE '^2026-06-29T10:00:02\.[0-9]+Z  s-alpha    process\.exec cmd=pip' <<<"$table"
check "table: bash itself is not indented" \
	grep -qE '^2026-06-29T10:00:01\.[0-9]+Z  s-alpha  process\.exec cmd=bash' <<<"$table"

table=$("$BIN/sandgate" query --state-dir "$S" --session s-alpha --event file.read --format table)
check "table: a filtered row keeps its depth in the session's process tree" \
	grep -qE '^2026-06-29T10:00:09\.[0-9]+Z  s-alpha    file\.read path=/etc/shadow' <<<"$table"

check "relative --since excludes the scenario's past events" \
	test "$("$BIN/sandgate" query --state-dir "$S" --since -1h --session s-alpha | wc -l)" -eq 0
check "a bad time is refused" bash -c "! '$BIN/sandgate' query --state-dir '$S' --since yesterday 2>/dev/null"
check "a bad uid is refused" bash -c "! '$BIN/sandgate' query --state-dir '$S' --uid x 2>/dev/null"

dump() { sqlite3 "$S/index/index.db" "SELECT * FROM events ORDER BY seq; SELECT kind, names.value, p.value FROM names, json_each(names.seqs) AS p ORDER BY 3, 1, 2; SELECT * FROM cursor;"; }
before=$(dump)
check "reindex succeeds" "$BIN/sandgate" reindex --state-dir "$S"
check "the rebuilt index equals the incremental one" test "$before" = "$(dump)"

head -c 4096 /dev/urandom >"$S/index/index.db"
rm -f "$S/index/index.db-wal" "$S/index/index.db-shm"
got=$("$BIN/sandgate" query --state-dir "$S" --path /etc/shadow | wc -l)
check "a corrupt index is moved aside" test -f "$S/index/index.db.corrupt"
check "and rebuilt: answers are right again" test "$got" -eq 2
check "rebuilt index equals the first one" test "$before" = "$(dump)"
finish
