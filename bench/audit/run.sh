#!/usr/bin/env bash
# Exec completeness of the proc connector sensor on a storm of short-lived processes,
# and file events per second, measured end to end through the journal.
#
#   SANDGATE_BIN=build/rel [EXEC_SOURCE=audit] bench/audit/run.sh [N_TRUE] [N_PIPE] [N_FILES]
#
# EXEC_SOURCE: audit.exec_source (proc_connector, the default, or audit). N_FILES=0
# skips the file measure.
# Runs as root. Starts a daemon (state in a temp dir), one session, and inside it:
#   1. N_TRUE (10000) x /bin/true from a shell loop, at full speed;
#   2. N_PIPE (3333) x sh -c '/bin/true | /bin/true' (3 execs each);
#   3. N_FILES (20000) files created, written and deleted by one process.
# Then counts, from the journal: process.exec events, those with argv_complete, and
# sensor.loss; file events and their rate. Prints one result line per measure.
set -u
BIN=${SANDGATE_BIN:?SANDGATE_BIN must point at the build directory}
# The build tree reads the rules and data of the source tree (common/paths.h).
export SANDGATE_DATA_DIR=${SANDGATE_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/data} SANDGATE_RULES_DIR=${SANDGATE_RULES_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/rules}
N_TRUE=${1:-10000}
N_PIPE=${2:-3333}
N_FILES=${3:-20000}
T=$(mktemp -d /tmp/sgbench.XXXXXX)
PARENT=sgbench-$$
CG2=/sys/fs/cgroup/unified
[ -d "$CG2" ] || CG2=/sys/fs/cgroup

cleanup() {
	# The session's processes and its holder (the namespaces' keeper, in .holder-b1: it
	# outlives a daemon stop on purpose, sessions are adopted by the next daemon).
	local c
	for c in b1 .holder-b1; do
		[ -d "$CG2/$PARENT/$c" ] && echo 1 >"$CG2/$PARENT/$c/cgroup.kill"
	done
	sleep 0.2
	[ -n "${KEEP:-}" ] && kill "$KEEP" 2>/dev/null
	[ -n "${DPID:-}" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID"
	for h in "$CG2" /sys/fs/cgroup/memory /sys/fs/cgroup/cpu /sys/fs/cgroup/pids; do
		[ -d "$h/$PARENT" ] || continue
		for d in "$h/$PARENT"/*/ "$h/$PARENT"/.holder-*/; do [ -d "$d" ] && rmdir "$d"; done
		rmdir "$h/$PARENT"
	done 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
[ -n "${BENCH_KEEP_LOG:-}" ] && trap "cp \"\$T\"/daemon.log /tmp/sgbench-daemon.log; cat \"\$T\"/state/journal/*.jsonl > /tmp/sgbench-journal.jsonl; cleanup" EXIT

printf 'gateway: {enabled: false}\ncgroup:\n  parent: %s\naudit:\n  sensitive_paths: []\n  exec_source: %s\n' "$PARENT" \
	"${EXEC_SOURCE:-proc_connector}" >"$T/c.yaml"
"$BIN/sandgated" --config "$T/c.yaml" --state-dir "$T/state" --control "$T/sock" \
	>"$T/daemon.log" 2>&1 &
DPID=$!
for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.05; done
sg() { "$BIN/sandgate" "$@" --control "$T/sock"; }
mkdir -p "$T/w"
sg session create --id b1 --workdir "$T/w" >/dev/null && sg session start b1 >/dev/null
"$BIN/sandgate" run --control "$T/sock" --session b1 -- sleep 3600 &
KEEP=$!

lines() { cat "$T"/state/journal/*.jsonl; }
# settle: waits until the journal stops growing (the sensors have caught up).
settle() {
	local a b
	b=-1
	while :; do
		sleep 1
		a=$(lines | wc -l)
		[ "$a" -eq "$b" ] && return
		b=$a
	done
}
run() { "$BIN/sandgate" run --control "$T/sock" --session b1 -- "$@"; }

# The daemon's CPU (user + system ticks), read before the storm and after it settled.
cpu() { awk '{ print $14 + $15 }' "/proc/$DPID/stat"; }
c0=$(cpu)
t0=$(date +%s.%N)
run sh -c "i=0; while [ \$i -lt $N_TRUE ]; do /bin/true; i=\$((i+1)); done" storm-true
t1=$(date +%s.%N)
run sh -c "i=0; while [ \$i -lt $N_PIPE ]; do sh -c '/bin/true | /bin/true'; i=\$((i+1)); done" storm-pipe
t2=$(date +%s.%N)
settle
c1=$(cpu)
want=$((N_TRUE + 3 * N_PIPE))
# The storm's execs: every exec in the session but the two loop shells (storm-* marker)
# and the keep-alive sleep.
lines | jq -c 'select(.event == "process.exec" and .session_id == "b1")' |
	jq -c 'select(((.args // []) | index(["storm-true"]) or index(["storm-pipe"])) | not) |
	       select(.cmd != "sleep" or .args != ["3600"])' >"$T/execs"
seen=$(grep -c . "$T/execs")
complete=$(jq -c 'select(.argv_complete)' "$T/execs" | wc -l)
incomplete=$(jq -c 'select(.argv_complete | not)' "$T/execs" | wc -l)
lost=$(lines | jq -s '[.[] | select(.event == "sensor.loss" and .sensor == "proc_connector") | .lost] | add // 0')
alost=$(lines | jq -s '[.[] | select(.event == "sensor.loss" and .sensor == "audit") | (.lost // 1)] | add // 0')
echo "execs started by the storm:     $want ($N_TRUE /bin/true in $(echo "$t1 - $t0" | bc) s, $N_PIPE pipelines in $(echo "$t2 - $t1" | bc) s)"
echo "process.exec events (storm):    $seen of $want"
echo "  with argv_complete:           $complete ($(echo "scale=4; 100 * $complete / $want" | bc) %)"
echo "  argv_complete false:          $incomplete (reported as such, nothing invented)"
echo "sensor.loss proc_connector:     $lost (connector events the kernel dropped, any process)"
echo "daemon CPU during the storm:    $(echo "($c1 - $c0) * 1000 / $(getconf CLK_TCK)" | bc) ms ($(echo "($c1 - $c0) * 1000000 / $(getconf CLK_TCK) / $want" | bc) ms per 1000 execs; includes the fanotify thread)"
echo "sensor.loss audit:              $alost (audit records lost, any process; ENOBUFS counts 1)"
[ "$N_FILES" -gt 0 ] || exit 0

# ---- file events per second ------------------------------------------------------------
before=$(lines | wc -l)
f0=$(date +%s.%N)
run sh -c "cd '$T/w' && i=0; while [ \$i -lt $N_FILES ]; do echo x >f\$i; i=\$((i+1)); done; rm -f f*"
f1=$(date +%s.%N)
settle
f2=$(date +%s.%N)
nf=$(lines | tail -n +"$((before + 1))" | grep -c '"event":"file\.' || true)
floss=$(lines | jq -s '[.[] | select(.event == "sensor.loss" and .sensor == "fanotify")] | length')
echo "file events: $nf for $N_FILES create+write+delete in $(echo "$f1 - $f0" | bc) s (want $((3 * N_FILES))); all journaled after $(echo "$f2 - $f0" | bc) s incl. settle; fanotify overflows reported: $floss"
