#!/bin/bash
# nft/ against the real kernel: install, probe, session elements, atomic re-install,
# fail closed (cgroup mode and interface mode), fail-open, render and template.
# Root only. Everything runs in network namespaces this script creates (addresses from
# 198.18.0.0/15 and 2001:db8::/32); the initial namespace's ruleset is never touched.
# Needs: nftables, iproute2, dnsmasq (dnsmasq-base), dig (bind9-dnsutils), socat.
set -u

BIN=${SANDGATE_BIN:-$(dirname "$0")/../../build/dev}
SRC=${SANDGATE_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TOOL=$BIN/sg_nfttool
PASS=0
FAIL=0
P=sgnft-$$
GW=$P-gw
PEER=$P-peer
SBX=$P-sbx
CGV2=/sys/fs/cgroup/unified
[ -f "$CGV2/cgroup.procs" ] || CGV2=/sys/fs/cgroup
CG=$CGV2/$P
SESS=$CG/sess
PIDS=()
TMP=$(mktemp -d)

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for ns in "$GW" "$PEER" "$SBX"; do ip netns del "$ns" 2>/dev/null; done
	rmdir "$SESS" "$CG" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

ok() { PASS=$((PASS + 1)); echo "ok   $1"; }
ko() { FAIL=$((FAIL + 1)); echo "FAIL $1"; }
check() { local name=$1; shift; if "$@" >"$TMP/out" 2>&1; then ok "$name"; else ko "$name"; sed 's/^/     /' "$TMP/out" | head -20; fi; }
gw() { ip netns exec "$GW" "$@"; }
nftl() { gw nft "$@" 2>/dev/null; }
handles() { nftl -a list table inet sandgate | grep -o '# handle [0-9]*' | tr '\n' ' '; }
# dig for sg.test from the gateway namespace, as a host process or inside the session.
dig_host() { gw dig +short +time=1 +tries=1 "@$1" sg.test A; }
# Join the cgroup first: `ip netns exec` remounts /sys, hiding the cgroup v2 tree.
dig_sess() { sh -c 'echo $$ > "$1/cgroup.procs" && exec ip netns exec "$2" dig +short +time=1 +tries=1 "@$3" sg.test A' sh "$SESS" "$GW" "$1"; }
not() { ! "$@"; }
qcount() { nftl list chain inet sandgate session | grep -o 'packets [0-9]*' | tr '\n' ' '; }
host_not_queued() { local a b; a=$(qcount); dig_host 198.18.1.2 >/dev/null; tcp_host 198.18.1.2; b=$(qcount); echo "$a / $b"; [ "$a" = "$b" ]; }
answered() { "$@" | grep -qx 198.18.5.5; }
unanswered() { ! "$@" | grep -q 198.18.5.5; }
tcp_sbx() { ip netns exec "$SBX" socat -T2 - "TCP:$1:7,connect-timeout=2" <<<ping | grep -qx ping; }
tcp_host() { gw socat -T2 - "TCP:$1:7,connect-timeout=2" <<<ping | grep -qx ping; }
tcp_sess() { sh -c 'echo $$ > "$1/cgroup.procs" && exec ip netns exec "$2" socat -T2 - "TCP:$3:7,connect-timeout=2"' sh "$SESS" "$GW" "$1" <<<ping | grep -qx ping; }

if [ "$(id -u)" != 0 ]; then echo "t_nft_ruleset: needs root"; echo "0 passed, 1 failed"; exit 1; fi
for t in nft dnsmasq dig socat; do
	command -v $t >/dev/null || { echo "t_nft_ruleset: missing $t"; echo "0 passed, 1 failed"; exit 1; }
done
INIT_RULESET=$(nft list ruleset 2>/dev/null | md5sum)

# --- lab: sbx --(198.18.0.0/30)-- gw --(198.18.1.0/30, 2001:db8:1::/64)-- peer ---------
for ns in "$GW" "$PEER" "$SBX"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip -n "$GW" link add gw0 type veth peer name peer0 netns "$PEER"
ip -n "$GW" link add gwsbx type veth peer name sbx0 netns "$SBX"
ip -n "$GW" addr add 198.18.1.1/30 dev gw0
ip -n "$GW" addr add 2001:db8:1::1/64 dev gw0 nodad
ip -n "$GW" addr add 198.18.0.1/30 dev gwsbx
ip -n "$PEER" addr add 198.18.1.2/30 dev peer0
ip -n "$PEER" addr add 2001:db8:1::2/64 dev peer0 nodad
ip -n "$SBX" addr add 198.18.0.2/30 dev sbx0
for l in "$GW gw0" "$GW gwsbx" "$PEER peer0" "$SBX sbx0"; do set -- $l; ip -n "$1" link set "$2" up; done
ip -n "$SBX" route add default via 198.18.0.1
ip -n "$PEER" route add 198.18.0.0/30 via 198.18.1.1
gw sysctl -qw net.ipv4.ip_forward=1      # the gateway namespace's own, never the initial one
ip netns exec "$PEER" dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts --bind-interfaces \
	--listen-address=198.18.1.2 --listen-address=2001:db8:1::2 --address=/sg.test/198.18.5.5 \
	--user=root --pid-file= 2>"$TMP/dnsmasq.log" &
PIDS+=($!)
ip netns exec "$PEER" socat TCP-LISTEN:7,bind=198.18.1.2,fork,reuseaddr EXEC:cat &
PIDS+=($!)
mkdir -p "$SESS"
CGID=$(stat -c %i "$SESS")
for i in $(seq 50); do dig_host 198.18.1.2 2>/dev/null | grep -q 198.18.5.5 && break; sleep 0.1; done

# --- install and probe ------------------------------------------------------------------
check "probe picks compat on this kernel" sh -c "'$TOOL' --netns '$GW' probe | grep -qx 'queue: compat'"
check "install in one batch in the namespace" sh -c "'$TOOL' --netns '$GW' install | grep -q compat"
check "nft lists table inet sandgate in the namespace" sh -c \
	"ip netns exec '$GW' nft list table inet sandgate 2>/dev/null | grep -q 'chain session'"
check "maps and chains are all there" sh -c "ip netns exec '$GW' nft list table inet sandgate 2>/dev/null |
	grep -c -E 'map (cgroup|iface)_sessions|chain (prerouting|output|prerouting_verdict|output_verdict|session|deny) ' | grep -qx 8"
check "no probe table left behind" sh -c "! ip netns exec '$GW' nft list tables | grep -q probe"
check "host DNS answered with no session" answered dig_host 198.18.1.2
check "cgroup process answered before it is a session" answered dig_sess 198.18.1.2

# --- session elements ----------------------------------------------------------------
H0=$(handles)
check "session add" "$TOOL" --netns "$GW" add --id 7 --cgroup "$CGID"
check "cgroup map holds the element" sh -c "ip netns exec '$GW' nft list map inet sandgate cgroup_sessions |
	grep -q '$CGID : 0x53000007'"
check "add changed map elements only (handles unchanged)" test "$(handles)" = "$H0"
check "cgroup already mapped: second add refused" not "$TOOL" --netns "$GW" add --id 8 --cgroup "$CGID"

# --- fail closed: nothing reads the queues ---------------------------------------------
check "fail closed: session DNS (udp) gets no answer" unanswered dig_sess 198.18.1.2
check "fail closed: session DNS over IPv6 gets no answer" unanswered dig_sess 2001:db8:1::2
check "session DNS went through the queue rule" sh -c "ip netns exec '$GW' nft list chain inet sandgate session 2>/dev/null |
	grep 'udp dport 53' | grep -q 'packets [1-9]'"
check "fail closed: session TCP connect gets nothing" not tcp_sess 198.18.1.2
check "host DNS still answered" answered dig_host 198.18.1.2
check "host DNS over IPv6 still answered" answered dig_host 2001:db8:1::2
check "host TCP untouched" tcp_host 198.18.1.2
check "host traffic never queued: queue counters unchanged by host DNS and TCP" host_not_queued

check "session del" "$TOOL" --netns "$GW" del --id 7 --cgroup "$CGID"
check "del changed map elements only (handles unchanged)" test "$(handles)" = "$H0"
check "cgroup map empty after del" sh -c "! ip netns exec '$GW' nft list map inet sandgate cgroup_sessions | grep -q ' : 0x'"
check "cgroup process answered again after del" answered dig_sess 198.18.1.2
check "del of an absent element fails (ENOENT)" sh -c "! '$TOOL' --netns '$GW' del --id 7 --cgroup '$CGID' 2>/dev/null"

# --- atomic re-install -------------------------------------------------------------------
"$TOOL" --netns "$GW" add --id 7 --cgroup "$CGID" >/dev/null
H1=$(handles)
check "failing re-install (forced native queue) is refused" sh -c "! '$TOOL' --netns '$GW' --qimpl native install 2>/dev/null"
check "failed re-install left the old table whole" test "$(handles)" = "$H1"
check "failed re-install kept the session element" sh -c "ip netns exec '$GW' nft list map inet sandgate cgroup_sessions | grep -q '0x53000007'"
check "re-install with the session in the same batch" "$TOOL" --netns "$GW" install --id 7 --cgroup "$CGID"
check "re-install replaced the table" test "$(handles)" != "$H1"
check "re-installed table holds the session" sh -c "ip netns exec '$GW' nft list map inet sandgate cgroup_sessions | grep -q '0x53000007'"
check "still fail closed after re-install" unanswered dig_sess 198.18.1.2
check "exactly one sandgate table" sh -c "ip netns exec '$GW' nft list tables | grep -c sandgate | grep -qx 1"

# --- fail-open, only by option -----------------------------------------------------------
check "fail-open install" "$TOOL" --netns "$GW" --fail-open install --id 7 --cgroup "$CGID"
check "fail-open: session DNS answered (bypass)" answered dig_sess 198.18.1.2
check "back to fail closed" "$TOOL" --netns "$GW" install --id 7 --cgroup "$CGID"
check "fail closed again" unanswered dig_sess 198.18.1.2

# --- interface mode: sandbox behind its own veth, routed by the gateway namespace --------
check "sandbox DNS answered before its interface is a session" answered ip netns exec "$SBX" dig +short +time=1 +tries=1 @198.18.1.2 sg.test A
check "iface session add" "$TOOL" --netns "$GW" add --id 9 --iface gwsbx
check "iface map holds the element" sh -c "ip netns exec '$GW' nft list map inet sandgate iface_sessions | grep -q '\"gwsbx\" : 0x53000009'"
check "fail closed: sandbox DNS gets no answer" unanswered ip netns exec "$SBX" dig +short +time=1 +tries=1 @198.18.1.2 sg.test A
check "fail closed: sandbox TCP gets nothing" not tcp_sbx 198.18.1.2
check "gateway host DNS untouched in interface mode" answered dig_host 198.18.1.2
check "iface session del" "$TOOL" --netns "$GW" del --id 9 --iface gwsbx
check "sandbox DNS answered after del" answered ip netns exec "$SBX" dig +short +time=1 +tries=1 @198.18.1.2 sg.test A

# --- render and template --------------------------------------------------------------
check "render (native) equals nft/sandgate.nft" diff -u "$SRC/nft/sandgate.nft" <("$BIN/sandgate" nft render --queue native)
check "render (compat) names the xt target" sh -c "'$BIN/sandgate' nft render --queue compat | grep -q 'xt target NFQUEUE rev 3'"
check "render reports fail-open" sh -c "'$BIN/sandgate' nft render --queue compat --fail-open | grep -q 'FAIL-OPEN'"
sed -E 's/counter queue .*$/counter drop/' "$SRC/nft/sandgate.nft" >"$TMP/check.nft"
check "template parses and loads (queue swapped for drop)" ip netns exec "$PEER" nft -c -f "$TMP/check.nft"

check "uninstall" "$TOOL" --netns "$GW" uninstall
check "table gone" sh -c "! ip netns exec '$GW' nft list tables | grep -q sandgate"
check "uninstall again is fine" "$TOOL" --netns "$GW" uninstall
check "initial namespace ruleset untouched" test "$(nft list ruleset 2>/dev/null | md5sum)" = "$INIT_RULESET"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
