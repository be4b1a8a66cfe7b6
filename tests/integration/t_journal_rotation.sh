#!/usr/bin/env bash
# Segments rotate by size and by age; every new segment starts by quoting the checkpoint
# that closed the previous one, and the whole chain verifies across them.
. "$(dirname "$0")/lib.sh"
require_root

S=$T_TMP/size
"$BIN/sg_genjournal" --segment-bytes 200000 "$S" 20000 >/dev/null
segs=$(ls "$S"/journal/*.jsonl | wc -l)
echo "size rotation: $segs segments"
check "rotates by size" test "$segs" -ge 10
ok=1
prev=""
for seg in "$S"/journal/*.jsonl; do
	first=$(head -n1 "$seg")
	if [ -n "$prev" ]; then
		want=$(tail -n1 "$prev" | jq -r .note)
		got=$(jq -r .previous_checkpoint <<<"$first")
		[ "$(jq -r .event <<<"$first")" = journal.segment ] || ok=0
		[ "$(tail -n1 "$prev" | jq -r .event)" = journal.checkpoint ] || ok=0
		[ "$got" = "$want" ] || ok=0
	fi
	name=$(basename "$seg" .jsonl)
	[ "$(jq -r .seq <<<"$first")" -eq "$((10#$name))" ] || ok=0
	prev=$seg
done
check "each segment is named by its first seq and quotes the previous checkpoint" test $ok -eq 1
check "the chain verifies across segments" "$BIN/sandgate" verify "$S"

# By age, in the daemon, with fsync after every write.
cat >"$T_TMP/age.yaml" <<YAML
gateway: {enabled: false}
journal:
  segment_max_age: 1s
  heartbeat_interval: 200ms
  checkpoint_interval: 100ms
  fsync: always
YAML
start_daemon age --config "$T_TMP/age.yaml"
sleep 3.5
stop_daemon
segs=$(ls "$SG_STATE"/journal/*.jsonl | wc -l)
echo "age rotation: $segs segments in 3.5 s"
check "rotates by age" test "$segs" -ge 3
check "the daemon's journal verifies" "$BIN/sandgate" verify "$SG_STATE"
finish
