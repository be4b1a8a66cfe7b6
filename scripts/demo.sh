#!/usr/bin/env bash
# Installs what is missing, builds, and runs sandgated on its embedded defaults (state
# in /var/lib/sandgate, control socket /run/sandgate/control.sock) for a short demo: a
# session created, run in, paused, resumed, terminated and cleaned up for real, what the
# journal recorded about it, the signed checkpoints, and `sandgate verify` passing.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "scripts/demo.sh: run as root" >&2
	exit 1
fi
bash scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/release -j"$(nproc)" --target sandgated sandgate
BIN=$PWD/build/release
STATE=/var/lib/sandgate
SOCK=/run/sandgate/control.sock

if [ -S "$SOCK" ] && "$BIN/sandgate" status >/dev/null 2>&1; then
	echo "demo: a sandgated is already running on $SOCK; stop it first" >&2
	exit 1
fi

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "starting sandgated on the embedded defaults (no config file)"
"$BIN/sandgated" &
DPID=$!
trap 'kill -TERM $DPID 2>/dev/null; wait $DPID 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done

say "sandgate status (over the control socket)"
"$BIN/sandgate" status

SID=demo-$(date +%s)
W=$(mktemp -d /tmp/sandgate-demo.XXXXXX)
say "a session: its own cgroup with limits (memory 256M, 64 pids), workdir $W"
"$BIN/sandgate" session create --id "$SID" --tenant demo --user agent --template shell \
	--memory 268435456 --pids 64 --workdir "$W" --actor demo-script
"$BIN/sandgate" session start "$SID" --actor demo-script >/dev/null

say "the agent runs commands inside it (sandgate run): output passes through, exit status returns"
"$BIN/sandgate" run --session "$SID" --cwd "$W" -- sh -c 'echo "hello from $(cat /proc/self/cgroup | tail -n1)"; echo data > notes.txt'
"$BIN/sandgate" tool --session "$SID" --name shell --status success --call-id call-1 \
	--input-summary 'echo hello; write notes.txt with token ghp_abcdefghijklmnopqrstuvwxyz0123456789' \
	--output-summary 'ok' --duration-ms 12 >/dev/null

say "pause (the kernel freezes the cgroup), a change while paused, resume"
"$BIN/sandgate" session pause "$SID" --reason api --actor demo-script >/dev/null
echo changed > "$W/notes.txt"
"$BIN/sandgate" session resume "$SID" --actor demo-script >/dev/null

say "terminate and clean up (workdir deleted)"
"$BIN/sandgate" session terminate "$SID" --reason normal --actor demo-script >/dev/null
"$BIN/sandgate" session cleanup "$SID" --fs deleted --actor demo-script >/dev/null

say "what the journal says about $SID (one JSON event per line; tokens redacted)"
cat "$STATE"/journal/*.jsonl | jq -c --arg s "$SID" 'select(.session_id == $s)
	| {seq, event, source} + (del(.ts, .seq, .prev, .event, .host, .session_id, .source)
	| with_entries(select(.key | IN("reason","actor","exit_status","fs_state","tool","status","input_summary","changed_while_paused","cmd","resources"))))'

say "stopping the daemon (SIGTERM: final checkpoint, clean close)"
kill -TERM "$DPID"
wait "$DPID" || true
trap - EXIT

say "the journal's last lines (one JSON event per line, hash-chained)"
tail -n 6 "$STATE"/journal/*.jsonl | cut -c1-220

say "the last signed checkpoint (C2SP tlog-checkpoint, Ed25519)"
awk 'BEGIN{RS=""} {p=l; l=$0} END{printf "%s\n\n%s\n", p, l}' "$STATE/journal/checkpoints"

say "verifier key for the SIEM: $STATE/keys/journal.pub"
cat "$STATE/keys/journal.pub"; echo

say "sandgate verify $STATE"
"$BIN/sandgate" verify --key "$STATE/keys/journal.pub" "$STATE"
