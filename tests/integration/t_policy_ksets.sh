#!/usr/bin/env bash
# Bound addresses of allowed answers (docs/gateway.md "Kernel bindings (removed)"): the
# first connection right after an allowed answer works; its SYN is queued (the worker
# reads every SYN: the first flight's origin); its first bytes are still checked
# (sni_mismatch on a bound address); a port the rule does not list is refused; names
# allowed on every port and IPv6 connect; a reload and the session's removal leave
# nothing of it in the table. Until issue 14 the answer's addresses also went into kernel
# sets (allow4/allow6, bound4any/bound6any) that no rule read any more: this test
# checked their elements, TTLs and metrics; the sets are gone and it checks that no set
# of the kind is in the ruleset and that nothing of the session's mark is left in it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

# A second resolver whose answers carry a long TTL (the lab's has TTL 0): clamped to max.
ip -n "$PEER" addr add 198.18.1.3/24 dev peer0
ip netns exec "$PEER" dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts \
	--bind-interfaces --listen-address=198.18.1.3 --address=/web.test/198.18.1.2 \
	--local-ttl=3600 --user=root --pid-file= 2>/dev/null &
cleanup "kill $!"
ip netns exec "$PEER" nft -f - <<'NFT'
table inet sgkcount {
	counter tls_data {}
	chain in {
		type filter hook input priority 0;
		tcp dport 443 ip length > 120 counter name tls_data
	}
}
NFT
cleanup "ip netns exec '$PEER' nft delete table inet sgkcount"
tls_data() { ip netns exec "$PEER" nft -j list counter inet sgkcount tls_data | jq '.nftables[1].counter.packets'; }

METRICS_PORT=$((30000 + $$ % 20000))
GW_ENFORCE=true gw_config "$T_TMP/c.yaml" "  resolvers: [198.18.1.2, 2001:db8:1::2, 198.18.1.3]
  dns_ttl_min: 3s
  dns_ttl_max: 5s
policies:
  default:
    allow:
      - domain: api.web.test
        ports: [443]
      - domain: \"*.ok.web.test\""
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack
sg session create --id k1 >/dev/null && sg session start k1 >/dev/null
in_sess k1 sleep infinity &
cleanup "kill $!"
check "session holds a process" wait_for "session process" 5 sh -c "grep -q . '$CG2/$SG_PARENT/k1/cgroup.procs'"
ev1() { wait_ev 5 "$1" >/dev/null 2>&1; evq "$1" | head -1; }
MARK=$(printf '0x%08x' "$(ev1 '.event == "session.create" and .session_id == "k1"' | jq '.mark')")

# ---- allowed name with a port list: (mark . address . port), TTL clamped to the minimum ----
out=$(in_sess k1 dig +short +time=2 +tries=1 @198.18.1.2 api.web.test A)
n=$(in_sess k1 curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve api.web.test:443:198.18.1.2 https://api.web.test/f100k)
check "allowed name resolves ($out)" test "$out" = 198.18.1.2
check "first connection right after the answer works" test "$n" = 102400
check "no bound-address set in the ruleset (allow4/6, bound4/6any)" sh -c "! ip netns exec '$GWNS' nft list table inet sandgate 2>/dev/null | grep -Eq 'set (allow[46]|bound[46]any) '"
check "nothing of the session's mark is in the table after the answer" sh -c "! ip netns exec '$GWNS' nft list table inet sandgate 2>/dev/null | grep -q '$MARK \.'"
e=$(ev1 '.event == "net.connect" and .sni == "api.web.test" and .session_id == "k1"')
echeck "the flow still has its net.connect (bound_address)" "$e" '.verdict == "allowed" and .reason == "bound_address" and .domain == "api.web.test"'
m=$(curl -s "http://127.0.0.1:$METRICS_PORT/metrics" 2>/dev/null)
k=$(grep -c kbind <<<"$m")
check "metrics: no kernel set series any more ($k)" test "$k" = 0
check "metrics: the flood limit's series instead" grep -Eq '^sandgate_gateway_flood_limits_total 0' <<<"$m"

# ---- the first bytes are still checked on a bound address -------------------------------
before=$(tls_data)
in_sess k1 curl -sk -o /dev/null --max-time 5 --resolve evil.web.test:443:198.18.1.2 https://evil.web.test/f100k
rc=$?
check "SNI of another name on the bound address: reset (curl rc $rc)" sh -c "[ $rc = 35 ] || [ $rc = 56 ]"
check "sni_mismatch: no ClientHello reached upstream" test "$(tls_data)" = "$before"
e=$(ev1 '.event == "net.connect" and .sni == "evil.web.test"')
echeck "net.connect sni_mismatch" "$e" '.verdict == "blocked" and .reason == "sni_mismatch"'

# ---- a port the rule does not list: not in the set, queued, refused ---------------------------
in_sess k1 curl -s -o /dev/null --max-time 5 http://198.18.1.2/f100k
rc=$?
check "port 80 of a 443-only name: refused (curl rc $rc)" sh -c "[ $rc = 7 ] || [ $rc = 52 ] || [ $rc = 56 ]"

# ---- any port: (mark . address) in bound4any, TTL clamped to the maximum; IPv6 --------------
in_sess k1 dig +short +time=2 +tries=1 @198.18.1.3 b.ok.web.test A >/dev/null
n=$(in_sess k1 curl -s -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve b.ok.web.test:80:198.18.1.2 http://b.ok.web.test/f100k)
check "any-port name: plain HTTP connects ($n)" test "$n" = 102400
# A SYN the peer refused: the worker saw only the SYN (nothing to decide on); its
# net.connect is written at its end, from conntrack (late: true).
q0=$(queued)
in_sess k1 curl -s -o /dev/null --max-time 5 http://198.18.1.2:9999/
rc=$?
check "closed port of a bound any-port address refused by the peer (curl rc $rc)" test "$rc" = 7
check "its SYN was queued ($(( $(queued) - q0 )))" test $(( $(queued) - q0 )) -ge 1
e=$(connect_ev_port k1 9999)
echeck "net.connect of the flow no worker saw, at its end: late, a bound address, its name" "$e" \
	'.late == true and .verdict == "allowed" and .reason == "bound_address" and .domain != null and .parse == "no_data" and .proto == "tcp"'
echeck "its net.flow has the same flow_id" "$(flow_ev_id "$(jq -r '.flow_id' <<<"$e")")" '.session_id == "k1"'
check "one net.connect for the first api.web.test flow" \
	test "$(evq '.event == "net.connect" and .sni == "api.web.test" and .dst.ip == "198.18.1.2"' | wc -l)" = 1
in_sess k1 dig +short +time=2 +tries=1 @2001:db8:1::2 api.web.test AAAA >/dev/null
n=$(in_sess k1 curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve api.web.test:443:[2001:db8:1::2] https://api.web.test/f100k)
check "IPv6: connects ($n)" test "$n" = 102400

# ---- a reload, removal with the session --------------------------------------------------------
# A reload may allow less: every binding leaves the kernel (flows go through the worker).
in_sess k1 dig +short +time=2 +tries=1 @198.18.1.3 c.ok.web.test A >/dev/null
out=$(sg reload 2>&1)
check "reload flushed the kernel bindings ($out)" sh -c "! ip netns exec '$GWNS' nft list table inet sandgate 2>/dev/null | grep -q '$MARK \\.'"
n=$(in_sess k1 curl -s -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve c.ok.web.test:80:198.18.1.2 http://c.ok.web.test/f100k)
check "after the reload the bound name still connects through the worker ($n)" test "$n" = 102400
in_sess k1 dig +short +time=2 +tries=1 @198.18.1.3 c.ok.web.test A >/dev/null
sg session terminate k1 >/dev/null
sg session cleanup k1 >/dev/null
check "session removal flushed its elements" wait_for "sets empty" 5 sh -c "! ip netns exec '$GWNS' nft list table inet sandgate 2>/dev/null | grep -q '$MARK \.'"
finish
