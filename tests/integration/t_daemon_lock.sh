#!/usr/bin/env bash
# One daemon per state directory (issue 18.3): a second sandgated on the same directory
# exits non-zero before touching anything, naming the holder's pid; the first keeps its
# control socket and its journal, which still verifies. Control case: a second daemon on
# another directory starts.
. "$(dirname "$0")/lib.sh"
require_root

cat >"$T_TMP/c.yaml" <<YAML
gateway: {enabled: false}
journal:
  checkpoint_interval: 200ms
  heartbeat_interval: 500ms
YAML

start_daemon one --config "$T_TMP/c.yaml"
first=$DPID
state=$SG_STATE
check "the lock file names the holder" test "$(cat "$state/sandgated.lock")" = "$first"
before=$(journal_lines "$state" | wc -l)
segs_before=$(ls "$state"/journal/*.jsonl | wc -l)

# The second: same state dir, its own control socket (so only the lock can stop it).
out=$(timeout 10 "$BIN/sandgated" --config "$T_TMP/c.yaml" --state-dir "$state" \
	--control "$T_TMP/two.sock" 2>&1)
rc=$?

echo "second daemon: rc=$rc: $out"
check "the second daemon exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124
check "its message names the holder's pid" grep -q "pid $first" <<<"$out"
check "it did not create its control socket" test ! -e "$T_TMP/two.sock"
check "it opened no segment" test "$(ls "$state"/journal/*.jsonl | wc -l)" -eq "$segs_before"
check "it wrote no daemon.start" test "$(count_events "$state" daemon.start)" -eq 1
check "the first daemon still answers" "$BIN/sandgate" status --control "$SG_SOCK"

# The same through the control socket path given twice: still refused.
timeout 10 "$BIN/sandgated" --config "$T_TMP/c.yaml" --state-dir "$state" \
	--control "$SG_SOCK" >"$T_TMP/three.log" 2>&1
rc=$?

check "a second daemon on the same socket and state is refused" test "$rc" -ne 0 -a "$rc" -ne 124
check "the first daemon keeps its socket" "$BIN/sandgate" status --control "$SG_SOCK"

# Control case: another state dir starts fine alongside.
start_daemon other --config "$T_TMP/c.yaml"
check "a daemon on another state dir starts" kill -0 "$DPID"
stop_daemon
DPID=$first
sleep 1
after=$(journal_lines "$state" | wc -l)
check "the first journal kept growing" test "$after" -gt "$before"
stop_daemon
check "the first daemon stops cleanly" test $? -eq 0
check "the journal verifies" "$BIN/sandgate" verify "$state"

# After the holder exits, the lock is free again and the journal still verifies.
start_daemon one --config "$T_TMP/c.yaml"
check "a restart after the holder's exit takes the lock" \
	test "$(cat "$state/sandgated.lock")" = "$DPID"
stop_daemon
check "the journal verifies after the restart" "$BIN/sandgate" verify "$state"
finish
