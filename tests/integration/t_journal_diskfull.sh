#!/usr/bin/env bash
# A full disk: the journal never leaves half a line, holds what it can in memory,
# counts what it had to drop, and reports both as events as soon as space returns.
. "$(dirname "$0")/lib.sh"
require_root

M=$T_TMP/small
mkdir -p "$M"
mount -t tmpfs -o size=1g tmpfs "$M"
cleanup "umount -l '$M'"
S=$M/state

# Leave ~1 MiB free, then write forever: the disk fills within a second, and the
# writer's in-memory hold (set to 4 MiB here) overflows soon after: some are dropped.
fallocate -l 1023m "$M/filler"
"$BIN/sg_genjournal" --forever --stall-buffer 4194304 "$S" 0 2>"$T_TMP/gen.err" &
pid=$!
cleanup "kill -9 $pid"
sleep 3
check "the writer is still alive while the disk is full" kill -0 "$pid"
partial=$(tail -c1 "$S"/journal/*.jsonl | od -An -c | tr -d ' ')
check "no partial line on disk while full" test "$partial" = '\n'
rm -f "$M/filler"
# Stop as soon as the stall is reported: the writer refills 1 GiB within seconds.
wait_for "the disk-full report" 20 sh -c "cat '$S'/journal/*.jsonl | grep -q '\"event\":\"journal.disk_full\"'"
kill -TERM "$pid"
wait "$pid"
check "clean close after space returned" test $? -eq 0
check "the full disk is reported" test "$(count_events "$S" journal.disk_full)" -ge 1
lost=$(journal_lines "$S" | grep '"event":"journal.disk_full"' | head -n1 | jq .lost)
held=$(journal_lines "$S" | grep '"event":"journal.disk_full"' | head -n1 | jq .held)
echo "disk full report: held=$held lost=$lost"
check "what was dropped is counted" test "$lost" -gt 0
check "dropped events become sensor.loss" \
	sh -c "cat '$S'/journal/*.jsonl | grep '\"event\":\"sensor.loss\"' | grep -q '\"sensor\":\"journal\"'"
check "the journal verifies after the stall" "$BIN/sandgate" verify "$S"
finish
