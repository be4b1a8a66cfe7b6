#!/usr/bin/env bash
# kill -9 in a loop during heavy writing. After every kill the journal must reopen,
# record any torn tail it cut as journal.recovery, keep every line a published checkpoint
# covers, and verify - also against the last checkpoint published before the kill.
. "$(dirname "$0")/lib.sh"
require_root

ROUNDS=${SANDGATE_CRASH_ROUNDS:-50}
S=$T_TMP/crash
torn=0
lost_cp=0
bad_verify=0

for ((r = 1; r <= ROUNDS; r++)); do
	"$BIN/sg_genjournal" --forever "$S" 0 2>"$T_TMP/gen.err" &
	pid=$!
	# Random moment: 20-300 ms into the burst.
	sleep "0.$(printf '%03d' $((RANDOM % 280 + 20)))"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	# The newest checkpoint anyone outside could have seen before the crash.
	# (A note is body, blank line, signatures: two paragraphs.)
	awk 'BEGIN{RS=""} {p=l; l=$0} END{if (NR) printf "%s\n\n%s\n", p, l}' \
		"$S/journal/checkpoints" >"$T_TMP/published.note" 2>/dev/null
	# Reopen (this is where recovery happens) and close cleanly.
	if ! "$BIN/sg_genjournal" "$S" 5 2>>"$T_TMP/gen.err"; then
		bad_verify=$((bad_verify + 1))
		echo "round $r: reopen failed: $(tail -n1 "$T_TMP/gen.err")"
		continue
	fi
	if [ -s "$T_TMP/published.note" ] &&
		! "$BIN/sandgate" verify --checkpoint "$T_TMP/published.note" "$S" >/dev/null 2>&1; then
		lost_cp=$((lost_cp + 1))
		echo "round $r: lines covered by a published checkpoint were lost"
	fi
done
torn=$(count_events "$S" journal.recovery)
opens=$(count_events "$S" journal.open)
echo "rounds=$ROUNDS recoveries=$torn opens=$opens lines=$(journal_lines "$S" | wc -l)"
check "every reopen succeeded" test "$bad_verify" -eq 0
check "no line covered by a published checkpoint was lost" test "$lost_cp" -eq 0
# A kill can land before the writer even opened its segment; every reopen opens one.
check "every start opened a segment" test "$opens" -ge "$ROUNDS"
check "saved torn bytes match the recoveries" \
	test "$(ls "$S"/journal/torn-*.bin 2>/dev/null | wc -l)" -eq "$torn"
check "the whole journal verifies" "$BIN/sandgate" verify "$S"

# Kills land mid-line only now and then; make the two torn shapes happen for sure:
# half a line (a write cut short) and a whole line that does not chain (garbage).
before=$(count_events "$S" journal.recovery)
last=$(ls "$S"/journal/*.jsonl | tail -n1)
printf '{"ts":"2026-01-01T00:00:00.000000Z","seq":99' >>"$last"
"$BIN/sg_genjournal" "$S" 5 >/dev/null 2>&1
last=$(ls "$S"/journal/*.jsonl | tail -n1)
printf 'not a journal line\n' >>"$last"
"$BIN/sg_genjournal" "$S" 5 >/dev/null 2>&1
check "half a line and a non-chaining line are both cut and recorded" \
	test "$(count_events "$S" journal.recovery)" -eq $((before + 2))
rec=$(journal_lines "$S" | grep '"event":"journal.recovery"' | tail -n1)
check "the recovery names the cut seq, the bytes and where they were saved" \
	sh -c "echo '$rec' | jq -e '.cut_bytes == 19 and (.cut_at_seq|type) == \"number\" and (.saved_to|test(\"torn-\"))' >/dev/null"
check "the journal verifies after the forced tears" "$BIN/sandgate" verify "$S"

# The daemon itself, killed while idle-writing heartbeats and checkpoints.
cat >"$T_TMP/fast.yaml" <<YAML
gateway: {enabled: false}
journal:
  checkpoint_interval: 50ms
  heartbeat_interval: 100ms
YAML
for ((r = 1; r <= 5; r++)); do
	start_daemon dk --config "$T_TMP/fast.yaml"
	sleep 0.3
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null
done
start_daemon dk --config "$T_TMP/fast.yaml"
stop_daemon
check "daemon journal verifies after 5 kill -9" "$BIN/sandgate" verify "$T_TMP/dk"
finish
