#!/usr/bin/env bash
# audit.file_modify: false (no FAN_MODIFY): a write is reported at the close of a file
# opened for writing. Also the paths of many events read at once, across a directory
# rename (the sensor reuses a directory's path within one read of the queue).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

W=$T_TMP/work
mkdir -p "$W"
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  file_marks: [\"/\"]
  file_modify: false
  sensitive_paths: []"
start_daemon a --config "$T_TMP/c.yaml"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 120 &
KEEP=$!
cleanup "kill $KEEP"

fev() { ev "$1" s1 | jq -c --arg p "$2" 'select(.path == $p)'; }
has() { [ -n "$(fev "$1" "$2")" ]; }

# ---- writes at close ------------------------------------------------------------------------
sgrun --session s1 -- dd if=/dev/zero of="$W/big" bs=4k count=500 status=none
wait_for "file.write of big" 10 has file.write "$W/big"
n=$(fev file.write "$W/big" | wc -l)
check "500 writes, one file.write at the close ($n)" test "$n" -eq 1
e=$(fev file.write "$W/big")
jcheck "file.write fields" "$e" '(.pid | type) == "number" and .uid == 0 and .source == "kernel"'

# ---- many files, a directory renamed between them ------------------------------------------
sgrun --session s1 -- sh -c 'mkdir d1 && cd d1 && for i in $(seq 100); do echo x >f$i; done &&
	cd .. && mv d1 d2 && cd d2 && for i in $(seq 100); do echo y >g$i; done; echo z >../end'
wait_for "file.write of end" 10 has file.write "$W/end"
n=$(ev file.create s1 | jq -r .path | grep -c "^$W/d[12]/[fg][0-9]*$")
check "200 creates with a path ($n)" test "$n" -eq 200
n=$(ev file.create s1 | jq -r .path | grep -c "^$W/d2/g[0-9]*$")
check "every create after the rename under the new name ($n)" test "$n" -eq 100
n=$(ev file.write s1 | jq -r .path | grep -c "^$W/d[12]/[fg][0-9]*$")
check "200 writes ($n)" test "$n" -eq 200
n=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "sensor.loss")' | wc -l)
journal_lines "$SG_STATE" | jq -c 'select(.event == "sensor.loss") | {sensor, lost, why}' | sed 's/^/# /'
check "no loss" test "$n" -eq 0

# ---- the last close left to the kernel (a descriptor in flight on a unix socket) -------
# With no FAN_MODIFY the close is the write's only trace, and the kernel's worker makes
# it: counted as loss with its reason (the control: the same write closed by the process).
sgrun --session s1 -- sh -c "echo ctl >'$W/ctl.txt'"
wait_for "control write" 10 has file.write "$W/ctl.txt"
sgrun --session s1 -- "$BIN/sg_fileops" inflight "$W/flight.txt"
kl() { journal_lines "$SG_STATE" | jq -c 'select(.event == "sensor.loss" and .sensor == "fanotify" and (.why | contains("kernel thread")))'; }
klhas() { [ -n "$(kl)" ]; }
check "fd in flight, closed by the kernel: sensor.loss naming it" wait_for "kthread loss" 10 klhas
kl | sed 's/^/# /'
check "control: the same write closed by the process is a file.write" has file.write "$W/ctl.txt"

kill "$KEEP" 2>/dev/null
stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
finish
