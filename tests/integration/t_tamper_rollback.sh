#!/usr/bin/env bash
# What the daemon cannot prevent, the journal shows (issue 15, item 4):
#  - rollback: the journal's state is saved, events are written, the daemon is killed
#    (-9), the segment and `checkpoints` are cut back and the state restored, and the
#    daemon restarted normally. Plain `sandgate verify` passes (the cut journal is
#    consistent by itself), but the witness (journal.witness_dir, a tmpfs: another
#    filesystem) holds the cut checkpoints: `verify --witness` fails naming the missing
#    seqs, and the restart itself records journal.rollback with the critical alert.
#    Control: the same without the cut verifies against the witness.
#  - unclean stop: after kill -9, daemon.start says previous_stop "unclean" with the
#    previous run's last seq and time; after a clean stop, "clean".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root
command -v jq >/dev/null || { echo "missing jq"; echo "0 passed, 1 failed"; exit 1; }

W=$T_TMP/witness
mkdir -p "$W"
mount -t tmpfs -o size=16m,mode=0700 sgwitness-$$ "$W" || { fail "mount the witness"; finish; }
cleanup "umount '$W'"
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
journal:
  witness_dir: $W
  checkpoint_interval: 200ms"

# echeck DESCRIPTION JSON JQ-EXPR: JSON must be there and the expression true for it
echeck() { check "$1" bash -c '[ -n "$2" ] && jq -e "$1" >/dev/null <<<"$2"' _ "$3" "$2"; }
# last_seq STATE: the seq of the journal's last complete line
last_seq() { journal_lines "$1" | tail -n1 | jq .seq; }
# witnessed_max: the largest size among the witness's notes
witnessed_max() { awk 'BEGIN { RS = "" } NR % 2 == 1 { split($0, l, "\n"); if (l[2] > m) m = l[2] } END { print m + 0 }' "$W"/*.checkpoints; }
# start_ev STATE: the last daemon.start
start_ev() { journal_lines "$1" | jq -c 'select(.event == "daemon.start")' | tail -n1; }

# ---- rollback ---------------------------------------------------------------------------
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
S=$SG_STATE
sg session create --id before1 >/dev/null
check "checkpoints reach the witness" wait_for "witness" 5 sh -c "[ \"\$(awk 'BEGIN{RS=\"\"} END{print NR}' '$W'/*.checkpoints 2>/dev/null)\" -ge 2 ]"
sleep 0.5
# The agent saves the state (stopping the daemon for a moment so state and checkpoints
# agree) ...
kill -STOP "$DPID"
cp "$S/journal/state" "$T_TMP/state.saved"
N=$(awk '$1 == "size" { print $2 }' "$T_TMP/state.saved")
SEG=$(awk '$1 == "segment" { print $2 }' "$T_TMP/state.saved")
OFF=$(awk '$1 == "offset" { print $2 }' "$T_TMP/state.saved")
# ... and the notes the state covers (one more may be in the file already).
awk -v n="$N" 'BEGIN { RS = ""; ORS = "\n\n" } NR % 2 == 1 { split($0, l, "\n"); keep = (l[2] <= n) } keep' \
	"$S/journal/checkpoints" >"$T_TMP/checkpoints.saved"
kill -CONT "$DPID"
# ... does its work (recorded), which the witness sees checkpointed ...
for i in 1 2 3 4 5; do sg session create --id evil$i >/dev/null; done
check "the work is journaled" test "$(count_events "$S" session.create)" -ge 6
sleep 1
WMAX=$(witnessed_max)
check "the witness saw checkpoints past the saved state ($WMAX > $N)" test "$WMAX" -gt "$N"
# ... kills the daemon and cuts everything back to the saved state.
kill -9 "$DPID"; wait "$DPID" 2>/dev/null
for f in "$S"/journal/*.jsonl; do [[ $(basename "$f") > $SEG ]] && rm -f "$f"; done
truncate -s "$OFF" "$S/journal/$SEG"
cp "$T_TMP/checkpoints.saved" "$S/journal/checkpoints"
cp "$T_TMP/state.saved" "$S/journal/state"
check "the work is gone from the journal" test "$(count_events "$S" session.create)" -lt 6
NCUT=$(( $(last_seq "$S") + 1 ))
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon restarts"; finish; }
wait_for "alert" 5 sh -c "perl -ne 'print if /\\n\\z/' '$S'/journal/*.jsonl | grep -q journal-rollback"
stop_daemon
check "plain verify passes on the rolled-back journal" "$BIN/sandgate" verify "$S"
out=$("$BIN/sandgate" verify --witness "$W" "$S" 2>&1)
printf '%s\n' "$out" >"$T_TMP/verify.out"
echo "# verify --witness: $(tail -n1 <<<"$out")"
check "verify against the witness fails" test -n "$out" -a "$("$BIN/sandgate" verify --witness "$W" "$S" >/dev/null 2>&1; echo $?)" = 1
# The cut journal holds lines 0..NCUT-1 (the state's checkpoint line included); verify
# knows the last witnessed size that still matches, which is at most NCUT.
A=$(sed -n 's/.*witnessed seq \([0-9]*\)\.\.\([0-9]*\) are missing.*/\1/p' <<<"$out")
check "it names the missing range seq $A..$((WMAX - 1)) (cut at $NCUT)" \
	sh -c "[ -n '$A' ] && [ '$A' -ge '$N' ] && [ '$A' -le '$NCUT' ] && grep -q 'witnessed seq $A\.\.$((WMAX - 1)) are missing' '$T_TMP/verify.out'"
check "the kind is rolled_back" grep -q "rolled_back" <<<"$out"
e=$(journal_lines "$S" | jq -c 'select(.event == "journal.rollback")' | head -1)
echo "# $e"
echeck "the restart recorded journal.rollback with the range" "$e" \
	".journal_size == $NCUT and .witnessed_size == $WMAX and .missing_first == $NCUT and .missing_last == $((WMAX - 1))"
a=$(journal_lines "$S" | jq -c 'select(.event == "alert" and .rule == "journal-rollback")' | head -1)
echeck "critical alert journal-rollback" "$a" '.severity == "critical"'
# The same journal verified against one witnessed note beyond its end (--checkpoint).
awk -v n="$WMAX" 'BEGIN { RS = ""; ORS = "\n\n" } NR % 2 == 1 { split($0, l, "\n"); keep = (l[2] == n) } keep' \
	"$W"/*.checkpoints | head -c 4096 >"$T_TMP/one.note"
check "a single witnessed note also catches it (--checkpoint)" sh -c "! '$BIN/sandgate' verify --checkpoint '$T_TMP/one.note' '$S' >/dev/null 2>&1"

# ---- control: kill -9 without a cut; unclean and clean stops -----------------------------
umount "$W" && mount -t tmpfs -o size=16m,mode=0700 sgwitness-$$ "$W"
start_daemon b --config "$T_TMP/c.yaml" || { fail "daemon b starts"; finish; }
S=$SG_STATE
sg session create --id ok1 >/dev/null
sleep 1
kill -9 "$DPID"; wait "$DPID" 2>/dev/null
LAST=$(last_seq "$S")
LAST_TS=$(journal_lines "$S" | tail -n1 | jq -r .ts)
start_daemon b --config "$T_TMP/c.yaml" || { fail "daemon b restarts"; finish; }
e=$(start_ev "$S")
echo "# $e"
echeck "after kill -9: daemon.start says unclean, with the last seq $LAST and its time" "$e" \
	".previous_stop == \"unclean\" and .previous_last_seq == $LAST and .previous_last_ts == \"$LAST_TS\" and (.previous_last_heartbeat | type) == \"string\""
check "alert daemon-unclean-stop" wait_for "alert" 5 sh -c "perl -ne 'print if /\\n\\z/' '$S'/journal/*.jsonl | grep -q '\"rule\":\"daemon-unclean-stop\"'"
stop_daemon
start_daemon b --config "$T_TMP/c.yaml" || { fail "daemon b restarts"; finish; }
e=$(start_ev "$S")
echeck "after a clean stop: daemon.start says clean" "$e" '.previous_stop == "clean"'
stop_daemon
e=$(journal_lines "$S" | jq -c 'select(.event == "daemon.start")' | head -1)
echeck "the first start of a journal: previous_stop null" "$e" '.previous_stop == null and .previous_last_seq == null'
check "control: no rollback -> verify against the witness passes" "$BIN/sandgate" verify --witness "$W" "$S"
out=$("$BIN/sandgate" verify --witness "$W" "$S" 2>&1)
check "control: it says how many witnessed checkpoints matched" grep -q "^witnessed: " <<<"$out"
check "control: no journal.rollback" test "$(count_events "$S" journal.rollback)" = 0
finish
