#!/usr/bin/env bash
# Reload of a large policy (10k names, 1k CIDRs) while an established flow keeps sending:
# wall time of `sandgate reload` (config parse + policy compile + swap), against a
# 1-name policy in the same run as baseline, medians of RUNS reloads each, and whether
# the flow lost anything. Root; a two-namespace lab of its own (198.18.0.0/15 only).
# Usage: bench/policy-reload/run.sh [BUILD_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=$(realpath "${1:-build/pe-rel}")
# The build tree reads the rules and data of the source tree (common/paths.h).
export SANDGATE_DATA_DIR=${SANDGATE_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/data} SANDGATE_RULES_DIR=${SANDGATE_RULES_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/rules}
RUNS=${2:-7}
T=$(mktemp -d /tmp/sgbench-reload.XXXXXX)
GW=sgbr-$$-gw
PEER=sgbr-$$-peer
PIDS=()
down() {
	"$BIN/sandgate" session terminate b1 --control "$T/sock" >/dev/null 2>&1 || true
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for ns in $GW $PEER; do
		ip netns pids $ns 2>/dev/null | xargs -r kill -9 2>/dev/null || true
		ip netns del $ns 2>/dev/null || true
	done
	for h in /sys/fs/cgroup/unified /sys/fs/cgroup/memory /sys/fs/cgroup/cpu /sys/fs/cgroup/pids /sys/fs/cgroup; do
		[ -d "$h/sgbench-$$" ] || continue
		for d in "$h/sgbench-$$"/*/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
		rmdir "$h/sgbench-$$" 2>/dev/null || true
	done
	rm -rf "$T"
}
trap down EXIT
ip netns add $GW && ip netns add $PEER
ip -n $GW link set lo up && ip -n $PEER link set lo up
ip -n $GW link add gw0 type veth peer name peer0 netns $PEER
ip -n $GW addr add 198.18.1.1/24 dev gw0 && ip -n $GW link set gw0 up
ip -n $PEER addr add 198.18.1.2/24 dev peer0 && ip -n $PEER link set peer0 up
ip netns exec $PEER socat -u TCP-LISTEN:9000,bind=198.18.1.2,fork,reuseaddr OPEN:$T/sink.bin,creat,append &
PIDS+=($!)

# policy FILE NAMES CIDRS: the config with a default policy of that size (the flow's
# own CIDR always in it)
policy() {
	{
		printf 'cgroup:\n  parent: sgbench-%s\ngateway:\n  enabled: true\n  netns: %s\n' $$ $GW
		printf '  resolvers: [198.18.1.2]\npolicies:\n  default:\n    allow:\n'
		printf '      - cidr: 198.18.1.2/32\n        ports: [9000]\n'
		awk -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "      - domain: host%d.bench%d.example\n", i, i % 97 }'
		awk -v n="$3" 'BEGIN { for (i = 0; i < n; i++) printf "      - cidr: 198.19.%d.%d/32\n", int(i / 250), i % 250 + 1 }'
	} >"$1"
}
policy "$T/big.yaml" 10000 1000
policy "$T/small.yaml" 1 0
cp "$T/small.yaml" "$T/c.yaml"
SOCK=$T/sock
"$BIN/sandgated" --config "$T/c.yaml" --state-dir "$T/state" --control "$SOCK" 2>"$T/daemon.log" &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$SOCK" ] && ip netns exec $GW nft list table inet sandgate >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN/sandgate" session create --id b1 --control "$SOCK" >/dev/null
"$BIN/sandgate" session start b1 --control "$SOCK" >/dev/null
# The established flow: 1 KiB every 10 ms for the whole run, counting send errors.
cat >"$T/flow.py" <<'PY'
import socket, sys, time
s = socket.create_connection(("198.18.1.2", 9000), timeout=3)
sent = 0
stop = time.time() + float(sys.argv[1])
try:
    while time.time() < stop:
        s.sendall(b"x" * 1024); sent += 1024; time.sleep(0.01)
    s.close(); print("ok", sent)
except OSError as e:
    print("error", sent, e)
PY
ip netns exec $GW "$BIN/sandgate" run --control "$SOCK" --session b1 -- \
	python3 "$T/flow.py" $((RUNS * 2 + 8)) >"$T/flow.out" &
FLOW=$!
sleep 1
ms() { local t0=$(date +%s%N); "$BIN/sandgate" reload --control "$SOCK" >/dev/null; echo $(( ($(date +%s%N) - t0) / 1000000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
small=() big=()
for i in $(seq "$RUNS"); do   # interleaved: small, big, small, big, ...
	cp "$T/small.yaml" "$T/c.yaml"; small+=($(ms))
	cp "$T/big.yaml" "$T/c.yaml"; big+=($(ms))
done
wait $FLOW || true
sleep 0.5
ms_small=$(printf '%s\n' "${small[@]}" | median)
ms_big=$(printf '%s\n' "${big[@]}" | median)
inner=$(grep -o 'policies reloaded in [0-9]* us' "$T/daemon.log" | awk '{print $4}' | awk 'NR % 2 == 0' | median)
read -r status sent _ <"$T/flow.out"
got=$(stat -c %s "$T/sink.bin")
echo "policy: 10000 names + 1000 CIDRs ($(wc -c <"$T/big.yaml") bytes of YAML); $RUNS reloads each, interleaved"
echo "reload wall time (sandgate reload round trip), median: small ${ms_small} ms, big ${ms_big} ms"
echo "big: policy compile + swap inside the daemon (DoH list included), median: ${inner} us"
echo "established flow across $((RUNS * 2)) reloads: $status, sent $sent bytes, peer received $got bytes"
[ "$status" = ok ] && [ "$sent" = "$got" ] && [ "$ms_big" -lt 1000 ]
