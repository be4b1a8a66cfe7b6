#!/usr/bin/env bash
# Bad input and faults at start: each gives a clear message naming the path or the line,
# a non-zero exit, and no journal written behind the operator's back.
. "$(dirname "$0")/lib.sh"
require_root

run_daemon() { # run_daemon NAME ARGS...: runs to exit (it must refuse), output in $OUT
	local name=$1
	shift
	OUT=$(timeout 10 "$BIN/sandgated" --control "$T_TMP/$name.sock" "$@" 2>&1)
	RC=$?
}

# A malformed config: --check-config lists every error with FILE:LINE.
cat >"$T_TMP/bad.yaml" <<YAML
host: x
journal:
  fsync: sometimes
  checkpoint_events: -5
nonsense_key: 1
YAML
out=$("$BIN/sandgated" --check-config "$T_TMP/bad.yaml" 2>&1)
rc=$?
check "--check-config fails on a bad file" test $rc -ne 0
check "--check-config names line 3" grep -q "bad.yaml:3" <<<"$out"
check "--check-config names line 4" grep -q "bad.yaml:4" <<<"$out"
check "--check-config names line 5" grep -q "bad.yaml:5" <<<"$out"
echo "host: fine" >"$T_TMP/ok.yaml"
check "--check-config passes a good file" "$BIN/sandgated" --check-config "$T_TMP/ok.yaml"
check "--check-config on the shipped example" \
	"$BIN/sandgated" --check-config "$SRC/daemon/sandgate.example.yaml"

run_daemon c1 --config "$T_TMP/bad.yaml" --state-dir "$T_TMP/c1"
check "daemon refuses a bad config" test $RC -ne 0
check "and names the line" grep -q "bad.yaml:3" <<<"$OUT"
check "and writes no journal" test ! -e "$T_TMP/c1/journal"

run_daemon c2 --config "$T_TMP/missing.yaml" --state-dir "$T_TMP/c2"
check "missing config file is named" grep -q "missing.yaml" <<<"$OUT"

# A state directory that cannot be written: a read-only mount.
mkdir -p "$T_TMP/ro"
mount -t tmpfs -o size=1m,ro tmpfs "$T_TMP/ro"
cleanup "umount '$T_TMP/ro'"
run_daemon ro --state-dir "$T_TMP/ro/state"
check "read-only state dir refused" test $RC -ne 0
check "and the path is named" grep -q "$T_TMP/ro/state" <<<"$OUT"

# A state directory owned by someone else.
mkdir -m 0700 "$T_TMP/other"
chown nobody "$T_TMP/other"
run_daemon other --state-dir "$T_TMP/other"
check "foreign-owned state dir refused" test $RC -ne 0
check "and the owner is named" grep -q "owned by uid" <<<"$OUT"

# A journal whose key went missing: never re-sealed with a new key.
"$BIN/sg_genjournal" "$T_TMP/k" 10 >/dev/null
rm -f "$T_TMP/k/keys/journal.key"
run_daemon k --state-dir "$T_TMP/k"
check "missing key for an existing journal refused" test $RC -ne 0
check "and the key path is named" grep -q "$T_TMP/k/keys/journal.key" <<<"$OUT"
check "and no new key was made" test ! -e "$T_TMP/k/keys/journal.key"

# A crash between writing the private key and its verifier key left only the first:
# the verifier key is derived from it and written again; the journal verifies with it.
"$BIN/sg_genjournal" "$T_TMP/p" 10 >/dev/null
pub=$(cat "$T_TMP/p/keys/journal.pub")
rm -f "$T_TMP/p/keys/journal.pub"
check "reopened without its verifier key" "$BIN/sg_genjournal" "$T_TMP/p" 10
check "the same verifier key is written again" test "$(cat "$T_TMP/p/keys/journal.pub" 2>/dev/null)" = "$pub"
check "and the journal verifies with it" "$BIN/sandgate" verify "$T_TMP/p"

# A key that is not a key.
"$BIN/sg_genjournal" "$T_TMP/g" 10 >/dev/null
chmod 600 "$T_TMP/g/keys/journal.key"
echo garbage >"$T_TMP/g/keys/journal.key"
run_daemon g --state-dir "$T_TMP/g"
check "corrupt key refused" test $RC -ne 0
check "and the key path is named" grep -q "$T_TMP/g/keys/journal.key" <<<"$OUT"

# A journal cut shorter than its last durable checkpoint: damage, not a crash.
"$BIN/sg_genjournal" "$T_TMP/t" 3000 >/dev/null
seg=$(ls "$T_TMP"/t/journal/*.jsonl | head -n1)
truncate -s 1000 "$seg"
run_daemon t --state-dir "$T_TMP/t"
check "journal shorter than its checkpoint refused" test $RC -ne 0
check "and the segment is named" grep -q "$(basename "$seg")" <<<"$OUT"
finish
