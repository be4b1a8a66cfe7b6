#!/usr/bin/env bash
# Every journal line of a representative session validates against the event schema
# (docs/schema/, JSON Schema draft 2020-12, python3-jsonschema from Debian) and has
# unique keys at every depth: lifecycle, a paused change, execs and exits, file create/
# write/rename/delete/read and a mount, DNS, connections and flows through the gateway,
# tool calls and a model summary, alerts, a refused control peer, a reload,
# heartbeats and checkpoints, the daemon's start and stop. Control: the validator
# rejects a line with a second "source" (the pre-2026-12 package.install shape) and a
# line missing a required field.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
PY=/usr/bin/python3
$PY -c 'import jsonschema' 2>/dev/null || { echo "missing python3-jsonschema"; echo "0 passed, 1 failed"; exit 1; }
V="$PY $SRC/docs/schema/validate.py"
lab_up

W=$T_TMP/work
mkdir -p "$W"
gw_config "$T_TMP/c.yaml" "  flow_interim_interval: 1s
journal:
  heartbeat_interval: 1s
audit:
  sensitive_paths: [\"$W/secret\"]"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack

sg session create --id v1 --tenant t --user u --template tpl --memory 256M --pids 100 \
	--timeout 600 --workdir "$W" --actor schema >/dev/null
sg session start v1 >/dev/null
echo key >"$W/secret"
in_sess v1 sh -c "echo a > '$W/f1'; echo b >> '$W/f1'; mv '$W/f1' '$W/f2'; rm '$W/f2'; cat '$W/secret' >/dev/null"
in_sess v1 unshare -m sh -c "mkdir -p '$W/m'; mount -t tmpfs sgschema '$W/m'; umount '$W/m'"
in_sess v1 dig +short +time=2 +tries=1 @198.18.1.2 web.test A >/dev/null
in_sess v1 curl -sk -o /dev/null --max-time 5 --resolve web.test:443:198.18.1.2 https://web.test/f100k
in_sess v1 curl -s -o /dev/null --max-time 5 -H 'Host: plain.web.test' http://198.18.1.2/f100k
in_sess v1 sh -c 'exit 4'
sg tool --session v1 --name shell --status success --input-summary 'ls token=abc123' \
	--output-summary ok --call-id c1 --duration-ms 12 >/dev/null
out=$(req '{"verb":"model.summary","args":{"session_id":"v1","model":"m1","input_summary":"hi","output_summary":"yo","input":"full in","output":"full out","call_id":"c2","input_tokens":3,"output_tokens":4}}')
check "model.summary recorded" grep -q '"ok":true' <<<"$out"
sg session pause v1 >/dev/null
touch "$W/while-paused"
sg session resume v1 >/dev/null
# a session process asking the control socket: refused and journaled (a contained run
# does not even see the socket: t_contain_run.sh; a privileged one reaches it)
ip netns exec "$GWNS" "$BIN/sandgate" run --privileged --control "$SG_SOCK" --session v1 -- \
	"$BIN/sandgate" status --control "$SG_SOCK" >/dev/null 2>&1
"$BIN/sandgate" reload --control "$SG_SOCK" >/dev/null
sleep 2.5   # flows end (short conntrack timeouts), heartbeats and checkpoints are written
sg session terminate v1 --reason normal >/dev/null
sg session cleanup v1 --fs preserved >/dev/null
stop_daemon

types=$(journal_lines "$SG_STATE" | jq -r .event | sort -u | tr '\n' ' ')
echo "types: $types"
for t in session.create session.start session.pause session.resume session.terminate \
	session.cleanup session.attach process.exec process.exit file.create file.write \
	file.rename file.delete file.read file.mount file.unmount net.dns net.connect net.flow \
	tool.invoke model.summary control.denied daemon.reload daemon.start \
	daemon.stop gateway.start journal.open journal.checkpoint journal.heartbeat alert; do
	check "the session produced $t" grep -qw "$t" <<<"$types"
done
out=$($V --types "$SG_STATE"/journal/*.jsonl 2>&1)
rc=$?
echo "$out"
check "every line is one object with unique keys, valid against the schema" test $rc -eq 0
check "... all of them ($(journal_lines "$SG_STATE" | wc -l) lines)" \
	grep -q "^$(journal_lines "$SG_STATE" | wc -l) lines, 0 bad" <<<"$out"

# ---- control: the validator sees what it must ---------------------------------------------
l=$(journal_lines "$SG_STATE" | grep '"event":"session.start"' | head -1)
dup=${l%\}},\"source\":\"https://pypi.org/simple\"\}
check "control: a second \"source\" is rejected" sh -c "! printf '%s\n' '$dup' | $V - >/dev/null"
nofield=$(jq -c 'del(.host_id)' <<<"$l")
check "control: a missing required field is rejected" sh -c "! printf '%s\n' '$nofield' | $V - >/dev/null"
check "control: the untouched line passes" sh -c "printf '%s\n' '$l' | $V - >/dev/null"
finish
