#!/usr/bin/env bash
# Installs what is missing, builds, and runs sandgated on its embedded defaults (state
# in /var/lib/sandgate, control socket /run/sandgate/control.sock) for a short demo:
# the daemon's own events, the signed checkpoints, and `sandgate verify` passing.
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

say "waiting for a signed checkpoint"
sleep 1.5

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
