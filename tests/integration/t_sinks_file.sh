#!/usr/bin/env bash
# File sinks follow the journal from durable cursors: every line arrives once and in
# order (the file is fdatasync'd before its cursor moves), a filter keeps only the types
# asked for plus every journal.checkpoint, a sink that cannot write retries with backoff
# and catches up, and a restart resumes where the sink stood. An OCSF sink renders the
# same lines as OCSF 1.8 events. A sink at verbosity minimal gets exactly the journal's
# lines of the minimal types (no heartbeats), byte for byte.
. "$(dirname "$0")/lib.sh"
require_root

ALL=$T_TMP/all.jsonl
LATE=$T_TMP/late/daemon.jsonl
OCSF=$T_TMP/ocsf.jsonl
MIN=$T_TMP/min.jsonl
CONF=$T_TMP/conf.yaml
cat >"$CONF" <<YAML
gateway: {enabled: false}
journal:
  heartbeat_interval: 100ms
  checkpoint_interval: 50ms
  segment_max_bytes: 8192
sinks:
  - name: all
    kind: file
    path: $ALL
  - name: ocsf
    kind: file
    format: ocsf
    path: $OCSF
  - name: min
    kind: file
    verbosity: minimal
    path: $MIN
  - name: late
    kind: file
    path: $LATE
    events: ["daemon.*"]
    retry_min: 50ms
    retry_max: 400ms
YAML

lines() { [ -f "$1" ] && grep -c . "$1" || echo 0; }
at_least() { [ "$(lines "$1")" -ge "$2" ]; }
# The seqs in FILE are exactly 0, 1, 2, ... (no loss, no duplicate, in order).
contiguous() { jq -r .seq "$1" | awk '$1 != NR - 1 { bad = 1 } END { exit bad }'; }
prefix_of_journal() {
	local n
	# A snapshot: the sink may append between counting its lines and comparing them.
	cp "$1" "$T_TMP/prefix.snap"
	n=$(lines "$T_TMP/prefix.snap")
	cmp -s "$T_TMP/prefix.snap" <(cat "$SG_STATE"/journal/*.jsonl | head -n "$n")
}
starts_in() { [ "$(grep -c '"event":"daemon.start"' "$1")" -eq "$2" ]; }

check "the config is valid" "$BIN/sandgated" --check-config "$CONF"
start_daemon d1 --config "$CONF" || exit 1
check "the file sink receives the journal" wait_for "40 lines" 30 at_least "$ALL" 40
check "its lines are the journal's, byte for byte, in order" prefix_of_journal "$ALL"
check "a sink that cannot open its file has written nothing" test ! -e "$LATE"
mkdir "$T_TMP/late"
check "once it can, it catches up" wait_for "late sink" 20 at_least "$LATE" 5
check "the filter passes daemon.* and every checkpoint, nothing else" \
	test "$(jq -r .event "$LATE" | grep -cvE '^(daemon\.start|journal\.checkpoint)$')" -eq 0
check "the filtered sink has the daemon.start line" starts_in "$LATE" 1
check "the daemon exits 0 at SIGTERM" stop_daemon
check "cursors are kept in the state dir" test -s "$SG_STATE/sinks/all.cursor"

start_daemon d1 --config "$CONF" || exit 1
check "after a restart the sink resumes" wait_for "second start" 20 starts_in "$ALL" 2
check "the daemon exits 0 at SIGTERM again" stop_daemon
check "zero loss, zero duplicates, in order (seq 0..$(($(lines "$ALL") - 1)))" contiguous "$ALL"
check "still the journal's own bytes" prefix_of_journal "$ALL"
check "the OCSF sink carries every line as an OCSF event with the native line in raw_data" \
	test "$(jq -r .raw_data "$OCSF" | head -n "$(lines "$ALL")")" = "$(cat "$ALL")"
check "OCSF events have class, type and metadata" \
	test "$(jq -c 'select(.class_uid == null or .type_uid == null or .metadata.version != "1.8.0")' "$OCSF" | wc -l)" -eq 0
check "the full sink has heartbeats" grep -q '"event":"journal.heartbeat"' "$ALL"
MINRE='"prev":"[0-9a-f]{64}","event":"(alert|sensor\.loss|session\.[a-z_]+|package\.install|resource\.limit|control\.denied|daemon\.[a-z_]+|gateway\.start|retention\.[a-z_]+|journal\.(checkpoint|open|segment|recovery|disk_full))"'
min_ok() {
	test "$(cat "$MIN")" = "$(cat "$SG_STATE"/journal/*.jsonl | grep -E "$MINRE" | head -n "$(lines "$MIN")")" && return
	diff <(cat "$MIN") <(cat "$SG_STATE"/journal/*.jsonl | grep -E "$MINRE" | head -n "$(lines "$MIN")") | head -n 6
	return 1
}
check "the minimal sink: exactly the journal's lines of minimal types, in order" min_ok
check "the minimal sink has daemon.start, checkpoints, and no heartbeat" bash -c \
	"grep -q daemon.start '$MIN' && grep -q journal.checkpoint '$MIN' && ! grep -q journal.heartbeat '$MIN'"
finish
