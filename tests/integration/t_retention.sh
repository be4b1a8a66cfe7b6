#!/usr/bin/env bash
# Retention with a fake clock (SANDGATE_RETENTION_NOW): sealed segments past the hot
# period move to STATE/cold as zstd seekable files with manifests, each move recorded as
# a retention.archive event; `query --include-cold` reads them back byte for byte; past
# the cold period they are purged (retention.purge) except those a legal hold covers.
# `sandgate verify` checks the cold files against their manifests and the whole chain;
# after a purge it still passes on what remains, bridging each purged range with its
# tombstone's Merkle state, and says which range it verified; a forged or missing
# tombstone fails.
. "$(dirname "$0")/lib.sh"
require_root
command -v zstd >/dev/null || { echo "zstd missing"; echo "0 passed, 1 failed"; exit 1; }

S=$T_TMP/d1
"$BIN/sg_genevents" --segment-bytes 3000 "$S" >/dev/null
mkdir "$T_TMP/orig"
cp "$S"/journal/*.jsonl "$T_TMP/orig/"
nseg=$(ls "$S"/journal/*.jsonl | wc -l)
CONF=$T_TMP/conf.yaml
cat >"$CONF" <<'YAML'
gateway: {enabled: false}
host: genhost
retention:
  hot: 1d
  cold: 30d
  interval: 200ms
  hold_sessions: [s-beta]
YAML

ncold() { ls "$S"/cold/*.zst 2>/dev/null | wc -l; }
cold_at_least() { [ "$(ncold)" -ge "$1" ]; }
events_of() { cat "$S"/journal/*.jsonl | grep -c "\"event\":\"$1\"" || true; }
events_at_least() { [ "$(events_of "$1")" -ge "$2" ]; }

SANDGATE_RETENTION_NOW=2026-12-10T00:00:00Z start_daemon d1 --config "$CONF" || exit 1
check "every sealed segment of the scenario goes cold ($nseg)" wait_for "cold" 30 cold_at_least "$nseg"
check "each move is a retention.archive event" wait_for "archive events" 10 events_at_least retention.archive "$nseg"
check "the daemon exits 0 at SIGTERM" stop_daemon
ok=1
for f in "$T_TMP"/orig/*.jsonl; do
	n=$(basename "$f")
	zstd -q -d -c "$S/cold/$n.zst" | cmp -s - "$f" || ok=0
	[ "$(jq -r .sha256 "$S/cold/$n.manifest.json")" = "$(sha256sum <"$f" | cut -d' ' -f1)" ] || ok=0
	[ "$(jq -r .checkpoint "$S/cold/$n.manifest.json")" != null ] || ok=0
	[ ! -e "$S/journal/$n" ] || ok=0
done
check "cold files decompress (plain zstd) to the original bytes; manifests hold sha256 and checkpoint" test $ok -eq 1

check "without --include-cold, cold lines are not answered" \
	test "$("$BIN/sandgate" query --state-dir "$S" --path /etc/shadow | wc -l)" -eq 0
check "--include-cold answers from the cold tier, byte for byte" \
	test "$("$BIN/sandgate" query --state-dir "$S" --include-cold --path /etc/shadow)" = \
	     "$(cat "$T_TMP"/orig/*.jsonl | grep '"path":"/etc/shadow"')"

check "verify checks the cold tier with the hot one: the whole chain holds" \
	"$BIN/sandgate" verify "$S" 2>/dev/null
first=$(ls "$S"/cold/*.jsonl.zst | head -n1)
cp "$first" "$T_TMP/saved.zst"
m=${first%.zst}.manifest.json
cp "$m" "$T_TMP/saved.manifest"
jq -c '.sha256 = "00"' "$T_TMP/saved.manifest" >"$m"
check "a cold segment that does not match its manifest fails verify" \
	bash -c "! '$BIN/sandgate' verify '$S' 2>&1 | grep -q ok: && ! '$BIN/sandgate' verify '$S' 2>/dev/null"
cp "$T_TMP/saved.manifest" "$m"
before=$("$BIN/sandgate" query --state-dir "$S" --include-cold)
check "reindex covers the cold tier" "$BIN/sandgate" reindex --state-dir "$S"
check "after reindex, --include-cold answers the same" \
	test "$("$BIN/sandgate" query --state-dir "$S" --include-cold)" = "$before"
check "and cold lines stay out of plain answers" \
	test "$("$BIN/sandgate" query --state-dir "$S" --path /etc/shadow | wc -l)" -eq 0

SANDGATE_RETENTION_NOW=2027-06-01T00:00:00Z start_daemon d1 --config "$CONF" || exit 1
check "past the cold period, unheld segments are purged" wait_for "purge" 30 events_at_least retention.purge 1
check "the daemon exits 0 at SIGTERM again" stop_daemon
ok=1
for m in "$S"/cold/*.manifest.json; do
	jq -e '.sessions["s-beta"]' "$m" >/dev/null || ok=0
done
check "only segments holding the held session s-beta are left" test $ok -eq 1
check "some held data is left" test "$(ls "$S"/cold/*.manifest.json | wc -l)" -ge 1
check "the held session's lines are all still answered" \
	test "$("$BIN/sandgate" query --state-dir "$S" --include-cold --session s-beta)" = \
	     "$(cat "$T_TMP"/orig/*.jsonl | grep '"session_id":"s-beta"')"
check "s-alpha's lines outside held segments are gone" \
	test "$("$BIN/sandgate" query --state-dir "$S" --include-cold --session s-alpha | wc -l)" -lt 13
# The index forgot the purged segments whole: its names postings (one row per name and
# segment, docs/investigation.md) list no line that is gone.
orphans=$(sqlite3 "$S/index/index.db" "SELECT count(*) FROM names, json_each(names.seqs) AS p
	WHERE p.value NOT IN (SELECT seq FROM events)")
check "no names posting of the index lists a purged line ($orphans do)" test "$orphans" = 0
check "each purge leaves a tombstone with the Merkle state after it" \
	test "$(ls "$S"/cold/*.purged.json | wc -l)" -eq "$(events_of retention.purge)" -a \
	     "$(jq -s 'map(select(.tree.size == .last_seq + 1)) | length' "$S"/cold/*.purged.json)" -eq "$(events_of retention.purge)"
out=$("$BIN/sandgate" verify "$S" 2>/dev/null)
echo "$out"
first_kept=$(cat "$S"/cold/*.manifest.json | jq -s 'map(.first_seq) | min')
check "verify passes on what remains after the purge" "$BIN/sandgate" verify "$S" >/dev/null 2>&1
says_range() { grep -qE "^verified: seq $first_kept\.\.[0-9]+ except [0-9]+ purged seqs in [0-9]+ range\(s\): 0\.\." <<<"$out"; }
check "and says what it verified: from seq $first_kept, the purged ranges named" says_range
t=$(ls "$S"/cold/*.purged.json | tail -n1)
cp "$t" "$T_TMP/tomb"
jq -c '.tree.hashes[0] = ("00" * 32)' "$T_TMP/tomb" >"$t"
check "a forged tombstone tree fails verify (the next checkpoint's root does not match)" \
	bash -c "'$BIN/sandgate' verify '$S' 2>&1 | grep -q 'rewritten\|modified'"
rm "$t"
check "a missing tombstone fails verify: the purged range shows as deleted" \
	bash -c "'$BIN/sandgate' verify '$S' 2>&1 | grep -q ': deleted: '"
cp "$T_TMP/tomb" "$t"
check "with the tombstone back, verify passes again" "$BIN/sandgate" verify "$S" >/dev/null 2>&1
finish
