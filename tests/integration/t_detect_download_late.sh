#!/usr/bin/env bash
# Download-and-run while the kernel audit records of the execs are late. With the audit
# exec source, the connector holds each session exec until its audit record claims it
# (at most 2 s). Records come late when the audit source is behind (a burst of execs,
# another audit listener, a loaded host); the file events of what the exec did must not
# be recorded before the exec itself, or detection cannot tie the file to the download.
# The lab makes the audit source late for real: its thread alone is stopped (ptrace,
# tests/tools/sg_freeze.c) for 1.5 s while the session downloads, chmods and runs a
# script. Control: an exec during the stop has no line until the thread runs again, so
# the lab does make the records late.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root
for t in curl python3; do command -v $t >/dev/null || { echo "$t missing"; exit 1; }; done

http_peer sgdll $((150 + $$ % 50))
printf '#!/bin/sh\nsleep 0.2\n' >"$WWW/run.sh"
wait_for "http peer" 10 curl -sf -o /dev/null "$URL/run.sh"

write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  sensitive_paths: []
detection:
  rate_limit: 1000"
start_daemon a --config "$T_TMP/c.yaml"
W=$T_TMP/work
mkdir -p "$W"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 300 >/dev/null 2>&1 &
KEEP=$!
cleanup "kill $KEEP"
seen() { journal_lines "$SG_STATE" | grep -qF -- "$1"; }
none() { ! "$@"; }
sgrun --session s1 -- /bin/true warm-up
wait_for "the warm-up exec" 10 seen warm-up

TID=
for t in /proc/"$DPID"/task/*; do
	[ "$(cat "$t/comm" 2>/dev/null)" = sg-auditsrc ] && TID=${t##*/}
done
check "the audit source thread is there (sg-auditsrc)" test -n "$TID"

# freeze: stops the audit source thread for 3 s, in the background ($FZ).
freeze() {
	rm -f "$T_TMP/frozen"
	"$BIN/sg_freeze" "$TID" 3000 "$T_TMP/frozen" &
	FZ=$!
	wait_for "the audit source stopped" 5 test -e "$T_TMP/frozen"
}
still_stopped() { [ "$(cut -d' ' -f3 "/proc/$DPID/task/$TID/stat")" = t ]; }

# Control: while the thread is stopped, an exec has no line yet.
freeze
sgrun --session s1 -- /bin/true held-marker
sleep 0.2
check "control: the audit source is still stopped after the exec" still_stopped
check "control: an exec while the audit source is stopped has no line yet" \
	none seen held-marker
wait "$FZ"
wait_for "the held exec after the stop" 10 seen held-marker

freeze
sgrun --session s1 -- sh -c "curl -s -o $W/dl $URL/run.sh?v=late; chmod +x $W/dl; $W/dl" \
	>/dev/null 2>&1
check "the download ran while the audit source was stopped" still_stopped
wait "$FZ"
sgrun --session s1 -- /bin/true end-marker
wait_for "the last exec" 10 seen end-marker
sleep 1

curl_seq=$(journal_lines "$SG_STATE" | jq -s '[.[] | select(.event == "process.exec" and
	any(.args[]?; test("v=late$")))][0].seq')
write_seq=$(journal_lines "$SG_STATE" | jq -s --arg p "$W/dl" '[.[] | select(
	(.event == "file.write" or .event == "file.create") and .path == $p)][0].seq')
check "curl's exec is recorded before the file it wrote ($curl_seq < $write_seq)" \
	test "${curl_seq:-null}" != null -a "${write_seq:-null}" != null -a \
	"${curl_seq:-0}" -lt "${write_seq:-0}"
# An exec_of_downloaded_file alert whose refs hold the file event of the download.
alerted() {
	journal_lines "$SG_STATE" | jq -se --arg p "$W/dl" '
		[.[] | select((.event | startswith("file.")) and .path == $p) | .seq] as $q |
		any(.[]; .event == "alert" and .rule == "exec_of_downloaded_file" and
		    any(.refs[]; . as $x | $q | index($x) != null))' >/dev/null
}
check "download, chmod +x, run while the records are late: exec_of_downloaded_file" alerted
n=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "process.exec" and
	any(.args[]?; test("v=late$")))' | wc -l)
check "curl's exec is recorded exactly once ($n)" test "$n" -eq 1
if [ "$FAILED" -gt 0 ]; then
	journal_lines "$SG_STATE" | jq -c 'select(.session_id == "s1" and .event != "file.mount" and .event != "file.unmount" and (.event == "alert" or
		.event == "process.exec" or (.event | startswith("file.")))) |
		[.seq, .ts, .event, .pid, .path, .exe, .args, .args_source, .rule, .refs]' >&2
fi
stop_daemon
check "daemon exits 0" test $? -eq 0
finish
