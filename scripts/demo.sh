#!/usr/bin/env bash
# Installs what is missing, builds, and runs sandgated on its embedded defaults (state
# in /var/lib/sandgate, control socket /run/sandgate/control.sock; the gateway, on by
# default, moved into a lab namespace the demo makes and removes) for a short demo: a
# session created, run in (exec, file, DNS, HTTP), paused, resumed, terminated and
# cleaned up for real; what the journal recorded about it (audit and gateway events
# included), the signed checkpoints, and `sandgate verify` passing.
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
# The build tree reads the rules and data of the source tree (common/paths.h).
export SANDGATE_DATA_DIR=${SANDGATE_DATA_DIR:-$PWD/data} SANDGATE_RULES_DIR=${SANDGATE_RULES_DIR:-$PWD/rules}
STATE=/var/lib/sandgate
SOCK=/run/sandgate/control.sock

if [ -S "$SOCK" ] && "$BIN/sandgate" status >/dev/null 2>&1; then
	echo "demo: a sandgated is already running on $SOCK; stop it first" >&2
	exit 1
fi

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# A small lab, as the tests build it: the session's processes live in namespace $GW
# (where the gateway works), and an upstream namespace $PEER answers DNS (dnsmasq,
# *.web.test -> 198.18.1.2) and HTTP (socat). Addresses from 198.18.0.0/15 only; the
# initial namespace's network is not touched.
GW=sgdemo-gw
PEER=sgdemo-peer
lab_down() {
	for ns in $GW $PEER; do
		{ ip netns pids $ns 2>/dev/null | xargs -r kill -9; } 2>/dev/null || true
		ip netns del $ns 2>/dev/null || true
	done
	rm -rf /etc/netns/$GW
}
lab_down
ip netns add $GW && ip netns add $PEER
ip -n $GW link set lo up && ip -n $PEER link set lo up
ip -n $GW link add gw0 type veth peer name peer0 netns $PEER
ip -n $GW addr add 198.18.1.1/24 dev gw0 && ip -n $GW link set gw0 up
ip -n $PEER addr add 198.18.1.2/24 dev peer0 && ip -n $PEER link set peer0 up
mkdir -p /etc/netns/$GW && echo "nameserver 198.18.1.2" >/etc/netns/$GW/resolv.conf
ip netns exec $PEER dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts \
	--bind-interfaces --listen-address=198.18.1.2 --address=/web.test/198.18.1.2 \
	--user=root --pid-file= 2>/dev/null &
CONF=$(mktemp /tmp/sandgate-demo.XXXXXX.yaml)
HTTPD=$CONF.httpd
cat >"$HTTPD" <<'SH'
#!/bin/sh
# Read the request head first: closing with it unread would reset the connection.
cr=$(printf '\r')
while IFS= read -r line; do [ "$line" = "$cr" ] || [ -z "$line" ] && break; done
printf 'HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n'
SH
chmod +x "$HTTPD"
ip netns exec $PEER socat TCP-LISTEN:80,bind=198.18.1.2,fork,reuseaddr EXEC:"$HTTPD" &
cat >"$CONF" <<YAML
# Everything on the embedded defaults but the gateway (on by default, enforcing, in the
# daemon's own namespace): here it works in the lab namespace, and the default policy
# (which embedded allows nothing) allows web.test and its subdomains through the lab
# resolver, nothing else.
gateway:
  netns: $GW
  resolvers: [198.18.1.2]
policies:
  default:
    allow:
      - domain: web.test
      - domain: "*.web.test"
YAML

say "starting sandgated: embedded defaults (state $STATE, socket $SOCK), gateway in namespace $GW"
"$BIN/sandgated" --config "$CONF" &
DPID=$!
trap 'kill -TERM $DPID 2>/dev/null; wait $DPID 2>/dev/null || true; lab_down; rm -f "$CONF" "$CONF.httpd"' EXIT
for _ in $(seq 200); do [ -S "$SOCK" ] && ip netns exec $GW nft list table inet sandgate >/dev/null 2>&1 && break; sleep 0.05; done
# Short conntrack timeouts in the lab so a closed connection's net.flow comes at once.
for k in tcp_timeout_time_wait=1 tcp_timeout_close=1 tcp_timeout_close_wait=1 \
	tcp_timeout_fin_wait=1 tcp_timeout_last_ack=1 udp_timeout=1 udp_timeout_stream=2; do
	ip netns exec $GW sysctl -qw net.netfilter.nf_conntrack_$k || true
done

say "sandgate status (over the control socket)"
"$BIN/sandgate" status

SID=demo-$(date +%s)
W=$(mktemp -d /tmp/sandgate-demo.XXXXXX)
say "a session: its own cgroup with limits (memory 256M, 64 pids), workdir $W"
# The demo's commands run as root (sandgate run as root), so the session says so: a
# session of another user would raise root-in-nonroot-session on every event.
"$BIN/sandgate" session create --id "$SID" --tenant demo --user root --template shell \
	--memory 268435456 --pids 64 --workdir "$W" --actor demo-script
"$BIN/sandgate" session start "$SID" --actor demo-script >/dev/null

# The agent's long-lived process (its shell, say): the session lives while it does.
"$BIN/sandgate" run --session "$SID" -- sleep 600 &

say "the agent runs commands inside it (sandgate run): a file, a DNS lookup, an HTTP fetch"
ip netns exec $GW "$BIN/sandgate" run --session "$SID" --cwd "$W" -- sh -c \
	'echo "hello from $(tail -n1 /proc/self/cgroup)"; echo data > notes.txt; dig +short web.test; curl -s http://web.test/'
say "and two the policy blocks: a name not allowed (the gateway answers REFUSED), an address nobody resolved (reset)"
ip netns exec $GW "$BIN/sandgate" run --session "$SID" --cwd "$W" -- sh -c \
	'dig +time=2 +tries=1 exfil.example | grep -o "status: [A-Z]*"; curl -sS --max-time 3 http://198.18.1.9/ || true'
say "and a download-and-run pipeline (base64 -d | sh): detection pairs the pipe and alerts"
ip netns exec $GW "$BIN/sandgate" run --session "$SID" --cwd "$W" -- sh -c \
	'echo ZWNobyBoZWxsbyBmcm9tIGEgcGlwZQo= | base64 -d | sh'
for _ in $(seq 50); do
	grep -q "\"event\":\"alert\",\"host\":\"[^\"]*\",\"session_id\":\"$SID\"" "$STATE"/journal/*.jsonl && break
	sleep 0.2
done
say "waiting for the flows' end records (net.flow comes when conntrack forgets a flow)"
for _ in $(seq 100); do
	[ "$(cat "$STATE"/journal/*.jsonl | grep -c "\"event\":\"net.flow\",\"host\":\"[^\"]*\",\"session_id\":\"$SID\"")" -ge 3 ] && break
	sleep 0.2
done
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
	| with_entries(select(.key | IN("reason","actor","exit_status","fs_state","tool","status",
	  "input_summary","changed_while_paused","cmd","args","path","qname","answers","dst",
	  "domain","http_host","verdict","rcode","bytes_out","bytes_in","exit_code","rule",
	  "severity","summary","refs"))))'

say "stopping the daemon (SIGTERM: final checkpoint, clean close)"
kill -TERM "$DPID"
wait "$DPID" || true
trap - EXIT
lab_down
rm -f "$CONF" "$HTTPD"

say "the journal's last lines (one JSON event per line, hash-chained)"
cat "$STATE"/journal/*.jsonl | tail -n 6 | cut -c1-220

say "the last signed checkpoint (C2SP tlog-checkpoint, Ed25519)"
awk 'BEGIN{RS=""} {p=l; l=$0} END{printf "%s\n\n%s\n", p, l}' "$STATE/journal/checkpoints"

say "verifier key for the SIEM: $STATE/keys/journal.pub"
cat "$STATE/keys/journal.pub"; echo

say "sandgate verify $STATE"
"$BIN/sandgate" verify --key "$STATE/keys/journal.pub" "$STATE"
