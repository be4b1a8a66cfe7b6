#!/usr/bin/env bash
# Mutation test for `sandgate verify`: a journal of >= 100k events written by the real
# writer (sg_genjournal; sg_mutate --generate when it is missing) must verify, and each
# of >= 1000 random mutations (tests/tools/sg_mutate.c) must be caught with the right
# kind and a first bad seq in the range the mutation allows. Runs two workers.
# Env: SANDGATE_BIN (sandgate, sg_mutate, sg_genjournal), SG_MUT_EVENTS, SG_MUT_COUNT.
set -u

bin=${SANDGATE_BIN:?SANDGATE_BIN not set}
events=${SG_MUT_EVENTS:-100000}
count=${SG_MUT_COUNT:-1050}
kinds=(modified deleted reordered truncated bad_signature unknown_key rewritten)
tmp=$(mktemp -d /tmp/sg_mutation.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok()   { passed=$((passed + 1)); }
bad()  { failed=$((failed + 1)); echo "FAIL: $*"; }

if [ -x "$bin/sg_genjournal" ]; then
	# 1 MiB segments: a mutation rewrites one small file, not the whole journal.
	"$bin/sg_genjournal" --segment-bytes 1048576 "$tmp/state" "$events" >/dev/null ||
		bad "sg_genjournal failed"
else
	echo "note: no sg_genjournal in $bin, using the sg_mutate fixture writer"
	"$bin/sg_mutate" --generate "$tmp/state" "$events" || bad "fixture writer failed"
fi
key=$tmp/state/keys/journal.pub

out=$("$bin/sandgate" verify --key "$key" "$tmp/state" 2>&1)
if [ $? -eq 0 ]; then ok; else bad "untouched journal does not verify: $out"; fi
echo "$out"
"$bin/sandgate" verify --key "$key" "$tmp/state/journal" >/dev/null 2>&1 && ok ||
	bad "journal directory form does not verify"
"$bin/sandgate" verify --bogus "$tmp/state" >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "usage error does not exit 2"

# One mutation: prints nothing on success, a FAIL line otherwise.
mutate_one() {
	local i=$1 w=$2 kind=${kinds[$(( $1 % ${#kinds[@]} ))]}
	local exp lo hi accept out rc seq got ck=()
	# Hard links: sg_mutate replaces the files it changes (rename), never writes in place.
	rm -rf "$w" && mkdir -p "$w" && cp -al "$tmp/state/journal" "$w/journal" || return 1
	exp=$("$bin/sg_mutate" "$w" "$kind" "$i" "$w/proof" 2>&1) || {
		echo "FAIL: sg_mutate $kind seed $i: $exp"; return; }
	read -r _ lo hi accept <<<"$exp"
	[ "$kind" = truncated ] && ck=(--checkpoint "$w/proof")
	out=$("$bin/sandgate" verify --key "$key" "${ck[@]}" "$w" 2>&1 >/dev/null | tail -n 1)
	rc=${PIPESTATUS[0]}
	if ! [[ $out =~ seq\ ([0-9]+):\ ([a-z_]+): ]]; then
		echo "FAIL: $kind seed $i: not detected (exit $rc): $out"; return
	fi
	seq=${BASH_REMATCH[1]} got=${BASH_REMATCH[2]}
	if [[ ,$accept, != *,$got,* ]] || [ "$seq" -lt "$lo" ] || [ "$seq" -gt "$hi" ]; then
		echo "FAIL: $kind seed $i: expected $accept in [$lo,$hi], got: $out"
	fi
}

worker() {
	local slot=$1 i
	for ((i = slot; i < count; i += 2)); do
		mutate_one "$i" "$tmp/w$slot"
	done >"$tmp/res$slot" 2>&1
}

worker 0 & p0=$!
worker 1 & p1=$!
wait $p0 $p1
nfail=$(cat "$tmp/res0" "$tmp/res1" | grep -c '^FAIL' || true)
cat "$tmp/res0" "$tmp/res1" | grep '^FAIL' | head -n 20
passed=$((passed + count - nfail))
failed=$((failed + nfail))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
