#!/usr/bin/env bash
# Reads keep their coverage without drowning the journal (issue 18.6): on the default
# sensitive paths plus the session's workdir, the first read of a file in a session is a
# full file.read; repeated reads of it are one file.read line with repeat: true, count,
# first_ts and last_ts per interval, never dropped. The same command run 100 times adds
# only a handful of lines beyond its first run (the figures are printed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

W=$T_TMP/work
mkdir -p "$W" && echo w >"$W/notes.txt"
# Credential places under /root that may not exist here: made for the test, removed after.
made=()
for d in /root/.ssh /root/.aws /run/secrets; do
	[ -d "$d" ] || { mkdir -p "$d" && made+=("$d"); }
done
echo k >"/root/.ssh/sgt-$$"; echo a >"/root/.aws/sgt-$$"; echo s >"/run/secrets/sgt-$$"
echo r >"/root/.sgt-$$"
cleanup "rm -f /root/.ssh/sgt-$$ /root/.aws/sgt-$$ /run/secrets/sgt-$$ /root/.sgt-$$; for d in ${made[*]:-}; do rmdir \$d; done"
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  file_marks: [\"/\"]"   # sensitive_paths: the defaults
start_daemon a --config "$T_TMP/c.yaml"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 300 >/dev/null 2>&1 &
KEEP=$!
cleanup "kill $KEEP"

evq() { ev "$1" s1 | jq -c "select($2)"; }
evhas() { [ -n "$(evq "$1" "$2")" ]; }
reads() { ev file.read s1 | wc -l; }

# ---- coverage -------------------------------------------------------------------------
for p in /etc/hostname "/root/.sgt-$$" "/root/.ssh/sgt-$$" "/root/.aws/sgt-$$" \
	"/run/secrets/sgt-$$" "$W/notes.txt"; do
	sgrun --session s1 -- cat "$p" >/dev/null
	check "a read of $p: file.read" wait_for "read $p" 10 evhas file.read \
		".path == \"$p\" and (.repeat | not) and (.pid | type) == \"number\""
done
sgrun --session s1 -- cat /usr/share/common-licenses/GPL-3 >/dev/null 2>&1
sleep 1
check "control: a read outside them gives nothing" test -z "$(evq file.read '.path | startswith("/usr/share")')"

# ---- the same command 100 times ----------------------------------------------------------
sgrun --session s1 -- cat /etc/issue >/dev/null 2>&1 || true
sleep 1
first=$(reads)
# 99 more runs: execs of cat from a shell in the session (99 sgruns take minutes here).
sgrun --session s1 -- sh -c 'for i in $(seq 99); do cat /etc/issue; done' >/dev/null
sleep 1
during=$(reads)
kill "$KEEP" 2>/dev/null
stop_daemon   # the summary lines of what is pending are written at stop
check "daemon exits 0 at SIGTERM" test $? -eq 0
final=$(reads)
echo "# file.read lines: $first after the first run, $during after 100 runs (before the" \
	"summary), $final with the summary lines: +$((final - first)) for 99 more runs"
check "99 more runs add at most a handful of file.read lines (+$((final - first)))" \
	test $((final - first)) -le 5
e=$(ev file.read s1 | jq -c 'select(.path == "/etc/issue" and .repeat == true)')
jcheck "the summary line: count 99, first_ts <= last_ts" "$e" \
	'.count == 99 and .first_ts <= .last_ts and (.canonical_path == "/etc/issue")'
n=$(ev file.read s1 | jq -c 'select(.path == "/etc/issue" and (.repeat | not))' | wc -l)
check "/etc/issue read in full once ($n)" test "$n" -eq 1
ev file.read s1 | jq -r 'select(.repeat == true) | "# summary: \(.path) count \(.count)"'
finish
