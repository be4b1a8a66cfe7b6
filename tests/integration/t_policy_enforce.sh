#!/usr/bin/env bash
# Egress policy enforced by the gateway (cgroup mode, and interface mode for a sandbox), end to end with real peers: an
# allowed name resolves and connects at once; a blocked name is answered REFUSED /
# NXDOMAIN by the gateway itself; an address without an allowed answer, a private range,
# another resolver, DoT, a DoH endpoint, UDP/443 (and with quic: sni the Initial's SNI
# through the name rules), an ECH ClientHello, an SNI or Host of
# another name on a shared address are all blocked. Every case checks the client's
# outcome, the event and its reason, and that nothing reached the upstream namespace
# (nft counters there).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
LAB_RESOLVER=unbound   # the issue's resolver: unbound serves the allowed and blocked names
command -v unbound >/dev/null || { echo "missing unbound"; echo "0 passed, 1 failed"; exit 1; }
command -v kdig >/dev/null || { echo "missing kdig"; echo "0 passed, 1 failed"; exit 1; }
lab_up

# ---- extra upstream: another resolver, an IP-only sink, a private address, counters --
ip -n "$PEER" addr add 198.18.1.3/24 dev peer0
ip -n "$PEER" addr add 198.18.1.4/24 dev peer0
ip -n "$PEER" addr add 10.255.77.1/32 dev peer0
ip -n "$GWNS" route add 10.255.77.1/32 via 198.18.1.2
ip netns exec "$PEER" dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts \
	--bind-interfaces --listen-address=198.18.1.3 --address=/web.test/198.18.1.2 \
	--log-queries --log-facility="$T_TMP/dns2.log" --user=root --pid-file= 2>/dev/null &
cleanup "kill $!"
ip netns exec "$PEER" socat -u TCP-LISTEN:9000,bind=198.18.1.4,fork,reuseaddr OPEN:/dev/null,wronly &
cleanup "kill $!"
ip netns exec "$PEER" nft -f - <<'NFT'
table inet sgcount {
	counter ip_only {}
	counter private {}
	counter resolver2 {}
	counter dot {}
	counter quic {}
	counter tls_data {}
	counter http_data {}
	counter resolver1 {}
	chain in {
		type filter hook input priority 0;
		ip daddr 198.18.1.4 counter name ip_only
		ip daddr 10.255.77.1 counter name private
		ip daddr 198.18.1.3 udp dport 53 counter name resolver2
		ip daddr 198.18.1.2 udp dport 53 counter name resolver1
		tcp dport 853 counter name dot
		udp dport 443 counter name quic
		tcp dport 443 ip length > 120 counter name tls_data
		tcp dport 80 ip length > 100 counter name http_data
	}
}
NFT
cleanup "ip netns exec '$PEER' nft delete table inet sgcount"
# cnt NAME: packets counted so far
cnt() { ip netns exec "$PEER" nft -j list counter inet sgcount "$1" | jq '.nftables[1].counter.packets'; }

printf 'doh.web.test\n198.18.1.9\n' >"$T_TMP/doh.txt"
METRICS_PORT=$((20000 + $$ % 20000))
GW_ENFORCE=true gw_config "$T_TMP/c.yaml" "  resolvers: [198.18.1.2, 2001:db8:1::2]
  doh_list: $T_TMP/doh.txt
  block_burst: 1000
  dns_ttl_min: 2m
policies:
  default:
    allow:
      - domain: api.web.test
      - domain: \"*.ok.web.test\"
      - domain: doh.web.test
  nx:
    allow:
      - domain: api.web.test
    dns_blocked_answer: nxdomain
  report:
    mode: report
  quicsni:
    quic: sni
    allow:
      - cidr: 198.18.1.2/32
        ports: [443]
    deny:
      - domain: example.com
  quicok:
    quic: sni
    allow:
      - cidr: 198.18.1.2/32
        ports: [443]"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack
sg session create --id s1 >/dev/null && sg session start s1 >/dev/null
sg session create --id s2 --policy nx >/dev/null && sg session start s2 >/dev/null
sg session create --id s3 --policy report >/dev/null && sg session start s3 >/dev/null
sg session create --id q1 --policy quicsni >/dev/null && sg session start q1 >/dev/null
sg session create --id q2 --policy quicok >/dev/null && sg session start q2 >/dev/null
for s in s1 s2 s3 q1 q2; do   # a session lives while it holds a process
	in_sess $s sleep infinity &
	cleanup "kill $!"
done
check "sessions hold a process" wait_for "session processes" 5 sh -c "grep -q . '$CG2/$SG_PARENT/s1/cgroup.procs' && grep -q . '$CG2/$SG_PARENT/s3/cgroup.procs'"
# ev1 JQ: the first event matching, after waiting for it
ev1() { wait_ev 5 "$1" >/dev/null 2>&1; evq "$1" | head -1; }

# ---- allowed name: resolves, and the first connection right after it works ---------------
out=$(in_sess s1 dig +short +time=2 +tries=1 @198.18.1.2 api.web.test A)
n=$(in_sess s1 curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve api.web.test:443:198.18.1.2 https://api.web.test/f100k)
check "allowed name resolves" test "$out" = 198.18.1.2
check "allowed name connects at once after its answer" test "$n" = 102400
e=$(ev1 '.event == "net.dns" and .qname == "api.web.test" and .session_id == "s1"')
echeck "net.dns allowed: reason, rule, mode" "$e" '.verdict == "allowed" and
	.reason == "allowed_domain" and (.rule | test("policy default line")) and .mode == "enforce"'
e=$(ev1 '.event == "net.connect" and .sni == "api.web.test" and .session_id == "s1"')
echeck "net.connect allowed: bound_address, domain, geo null" "$e" '.verdict == "allowed" and
	.reason == "bound_address" and .domain == "api.web.test" and .geo == null'
# One record per fact: the exchange with a configured resolver is its net.dns, which
# carries the flow (tuple, the query's and the answer's IP bytes). Neither a net.connect
# nor (once conntrack forgets it: 1 s here) a net.flow repeats it.
e=$(ev1 '.event == "net.dns" and .qname == "api.web.test" and .session_id == "s1"')
qport=$(jq -r '.flow.src.port // 0' <<<"$e")
echeck "net.dns allowed: carries its flow (tuple, bytes, packets)" "$e" \
	'.flow.proto == "udp" and .flow.dst.ip == "198.18.1.2" and .flow.dst.port == 53 and
	 .flow.src.port > 0 and .flow.bytes_out > 28 and .flow.bytes_in > .flow.bytes_out and
	 .flow.packets_out == 1 and .flow.packets_in == 1 and (.flow.flow_id | type) == "number"'
sleep 3
check "no net.connect or net.flow repeats the resolver exchange" test -z \
	"$(evq "(.event == \"net.connect\" or .event == \"net.flow\") and .proto == \"udp\" and .src.port == $qport")"

# Two allowed names on one address: both stay bound, both SNIs pass.
in_sess s1 dig +short +time=2 +tries=1 @198.18.1.2 a.ok.web.test A >/dev/null
n=$(in_sess s1 curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve a.ok.web.test:443:198.18.1.2 https://a.ok.web.test/f100k)
m=$(in_sess s1 curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve api.web.test:443:198.18.1.2 https://api.web.test/f100k)
check "two allowed names on one address: both connect ($n/$m)" test "$n/$m" = 102400/102400
e=$(ev1 '.event == "net.connect" and .sni == "a.ok.web.test"')
echeck "net.connect second name: bound_address, wildcard rule" "$e" '.verdict == "allowed" and .reason == "bound_address" and (.rule | test("line"))'

# ---- blocked name: answered by the gateway, never asked upstream ------------------------
before=$(cnt resolver1)
t0=$(date +%s%N)
out=$(in_sess s1 dig +time=2 +tries=1 @198.18.1.2 evil.web.test A)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "blocked name: REFUSED" grep -q "status: REFUSED" <<<"$out"
check "blocked name: answered at once (${ms} ms)" test "$ms" -lt 1000
check "blocked name never reached the resolver" test "$(cnt resolver1)" = "$before"
e=$(ev1 '.event == "net.dns" and .qname == "evil.web.test"')
echeck "net.dns blocked: not_allowed, REFUSED" "$e" '.verdict == "blocked" and
	.reason == "not_allowed" and .rcode == "REFUSED" and .status == "blocked" and .session_id == "s1"'
out=$(in_sess s2 dig +time=2 +tries=1 @198.18.1.2 evil.web.test A)
check "policy nx: blocked name gets NXDOMAIN" grep -q "status: NXDOMAIN" <<<"$out"
e=$(ev1 '.event == "net.dns" and .qname == "evil.web.test" and .session_id == "s2"')
echeck "net.dns policy nx: NXDOMAIN sent" "$e" '.verdict == "blocked" and .reason == "not_allowed" and .rcode == "NXDOMAIN"'
out=$(in_sess s1 dig +time=2 +tries=1 @198.18.1.2 use-application-dns.net A)
check "canary use-application-dns.net: NXDOMAIN" grep -q "status: NXDOMAIN" <<<"$out"
e=$(ev1 '.event == "net.dns" and .qname == "use-application-dns.net"')
echeck "net.dns canary: reason canary_domain" "$e" '.verdict == "blocked" and .reason == "canary_domain" and .rcode == "NXDOMAIN"'
out=$(in_sess s1 dig +time=2 +tries=1 @2001:db8:1::2 evil.web.test AAAA)
check "blocked name over IPv6: REFUSED (answer sent over IPv6)" grep -q "status: REFUSED" <<<"$out"
out=$(in_sess s1 dig +tcp +time=2 +tries=1 @198.18.1.2 evil.web.test A)
check "blocked name over TCP: no answer (connection reset)" bash -c '! grep -q "status: NOERROR" <<<"$1"' _ "$out"
e=$(ev1 '.event == "net.dns" and .qname == "evil.web.test" and .transport == "tcp"')
echeck "net.dns over TCP blocked" "$e" '.verdict == "blocked" and .reason == "not_allowed" and .status == "blocked"'
check "blocked names never reached the resolver" test "$(cnt resolver1)" = "$before"

# ---- an address nobody resolved: reset at once -------------------------------------------
t0=$(date +%s%N)
in_sess s1 curl -s -o /dev/null --max-time 5 http://198.18.1.4:9000/
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "IP without DNS: refused (curl rc $rc, ${ms} ms)" sh -c "[ $rc = 7 ] && [ $ms -lt 1500 ]"
check "IP without DNS: nothing reached upstream" test "$(cnt ip_only)" = 0
e=$(ev1 '.event == "net.connect" and .dst.ip == "198.18.1.4"')
echeck "net.connect blocked: not_allowed" "$e" '.verdict == "blocked" and .reason == "not_allowed" and .rule == null'

# ---- a private range -----------------------------------------------------------------------
in_sess s1 curl -s -o /dev/null --max-time 5 http://10.255.77.1:9000/
check "private range: refused" test $? = 7
check "private range: nothing reached upstream" test "$(cnt private)" = 0
e=$(ev1 '.event == "net.connect" and .dst.ip == "10.255.77.1"')
echeck "net.connect private_range with its class" "$e" '.verdict == "blocked" and .reason == "private_range" and .range == "rfc1918"'

# ---- SNI and Host of another name on the bound address -----------------------------------
before=$(cnt tls_data)
in_sess s1 curl -sk -o /dev/null --max-time 5 --resolve evil.web.test:443:198.18.1.2 https://evil.web.test/f100k
rc=$?
check "SNI of another name: reset (curl rc $rc)" sh -c "[ $rc = 35 ] || [ $rc = 56 ]"
check "SNI mismatch: no ClientHello reached upstream" test "$(cnt tls_data)" = "$before"
e=$(ev1 '.event == "net.connect" and .sni == "evil.web.test"')
echeck "net.connect sni_mismatch" "$e" '.verdict == "blocked" and .reason == "sni_mismatch" and .domain != null'
before=$(cnt http_data)
in_sess s1 curl -s -o /dev/null --max-time 5 -H 'Host: evil.web.test' http://198.18.1.2/f100k
rc=$?
check "Host of another name: reset (curl rc $rc)" sh -c "[ $rc = 52 ] || [ $rc = 56 ]"
check "Host mismatch: no request reached upstream" test "$(cnt http_data)" = "$before"
e=$(ev1 '.event == "net.connect" and .http_host == "evil.web.test"')
echeck "net.connect host_mismatch" "$e" '.verdict == "blocked" and .reason == "host_mismatch"'

# ---- DNS elsewhere: another resolver, DoT, DoH -------------------------------------------
out=$(in_sess s1 dig +time=1 +tries=1 @198.18.1.3 api.web.test A)
check "another resolver: no answer" bash -c '! grep -q "status: NOERROR" <<<"$1"' _ "$out"
check "another resolver: nothing reached it" test "$(cnt resolver2)" = 0
e=$(ev1 '.event == "net.dns" and .resolver == "198.18.1.3:53"')
echeck "net.dns resolver_not_allowed" "$e" '.verdict == "blocked" and .reason == "resolver_not_allowed"'
in_sess s1 kdig +tls +time=2 +retry=0 @198.18.1.2 api.web.test >/dev/null 2>&1
check "DoT (kdig +tls): fails" test $? != 0
check "DoT: nothing reached port 853" test "$(cnt dot)" = 0
e=$(ev1 '.event == "net.connect" and .dst.port == 853')
echeck "net.connect dot" "$e" '.verdict == "blocked" and .reason == "dot"'
before=$(cnt tls_data)
in_sess s1 curl -sk -o /dev/null --max-time 5 --doh-url https://doh.web.test/dns-query --doh-insecure \
	--resolve doh.web.test:443:198.18.1.2 https://api.web.test/
check "curl --doh-url to a listed DoH name: fails" test $? != 0
check "DoH: no ClientHello reached upstream" test "$(cnt tls_data)" = "$before"
e=$(ev1 '.event == "net.connect" and .sni == "doh.web.test"')
echeck "net.connect doh_endpoint" "$e" '.verdict == "blocked" and .reason == "doh_endpoint"'

# ---- UDP/443 and an ECH ClientHello -----------------------------------------------------------
in_sess s1 python3 -c '
import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(bytes([0xc3, 0, 0, 0, 1]) + bytes(1200), ("198.18.1.2", 443))'
e=$(ev1 '.event == "net.connect" and .proto == "udp" and .dst.port == 443')
echeck "net.connect udp/443: quic" "$e" '.verdict == "blocked" and .reason == "quic"'
check "UDP/443: nothing reached upstream" test "$(cnt quic)" = 0
# quic: sni: the SNI read from the QUIC Initial (RFC 9001 A.2's client Initial, SNI
# example.com) goes through the name rules: denied in q1, allowed by the CIDR in q2.
cat >"$T_TMP/quic.py" <<'PY'
import re, socket, sys
pkt = bytes.fromhex(re.sub(r"[^0-9a-fA-F]", "", open(sys.argv[1]).read()))
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(pkt, ("198.18.1.2", 443))
PY
before=$(cnt quic)
in_sess q1 python3 "$T_TMP/quic.py" "$SRC/tests/data/parsers/quic_v1_rfc9001_a2.hex"
e=$(ev1 '.event == "net.connect" and .session_id == "q1" and .dst.port == 443')
echeck "quic: sni: SNI from the Initial, denied by name" "$e" '.proto == "udp" and .parse == "quic" and .sni == "example.com" and .verdict == "blocked" and .reason == "denied_domain"'
check "quic denied: nothing reached upstream" test "$(cnt quic)" = "$before"
in_sess q2 python3 "$T_TMP/quic.py" "$SRC/tests/data/parsers/quic_v1_rfc9001_a2.hex"
e=$(ev1 '.event == "net.connect" and .session_id == "q2" and .dst.port == 443')
echeck "quic: sni: SNI from the Initial, allowed" "$e" '.sni == "example.com" and .verdict == "allowed" and .reason == "allowed_cidr"'
check "quic allowed: the Initial reached upstream" wait_for "quic packet upstream" 3 sh -c "[ \$(ip netns exec '$PEER' nft -j list counter inet sgcount quic | jq '.nftables[1].counter.packets') -gt $before ]"
cat >"$T_TMP/ech.py" <<'PY'
import os, socket, struct, sys
def ext(t, b): return struct.pack(">HH", t, len(b)) + b
name = b"api.web.test"
sni = ext(0, struct.pack(">HBH", len(name) + 3, 0, len(name)) + name)
ver = ext(0x2b, b"\x02\x03\x04")
groups = ext(0x0a, b"\x00\x02\x00\x1d")
ks = ext(0x33, struct.pack(">HHH", 36, 0x1d, 32) + os.urandom(32))
ech = ext(0xfe0d, b"\x00\x00\x01\x00\x01\x07\x00\x20" + os.urandom(32) + b"\x00\x40" + os.urandom(64))
exts = sni + ver + groups + ks + ech
body = b"\x03\x03" + os.urandom(32) + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00"
body += struct.pack(">H", len(exts)) + exts
hs = b"\x01" + struct.pack(">I", len(body))[1:] + body
rec = b"\x16\x03\x01" + struct.pack(">H", len(hs)) + hs
s = socket.create_connection(("198.18.1.2", 443), timeout=3)
s.sendall(rec)
try:
    d = s.recv(100)
    print("reset" if not d else "answered")
except (ConnectionResetError, socket.timeout) as e:
    print("reset" if isinstance(e, ConnectionResetError) else "timeout")
PY
before=$(cnt tls_data)
out=$(in_sess s1 python3 "$T_TMP/ech.py")
check "ECH ClientHello: reset ($out)" test "$out" = reset
check "ECH: no ClientHello reached upstream" test "$(cnt tls_data)" = "$before"
e=$(ev1 '.event == "net.connect" and .ech == true')
echeck "net.connect ech, outer SNI logged" "$e" '.verdict == "blocked" and .reason == "ech" and .sni == "api.web.test"'

# ---- interface mode: a sandbox behind its own veth, the same policy ---------------------
sg session create --id box --iface gwsbx >/dev/null && sg session start box >/dev/null
in_sbx() { ip netns exec "$SBX" "$@"; }
out=$(in_sbx dig +time=2 +tries=1 @198.18.1.2 evil.web.test A)
check "sandbox: blocked name REFUSED (answer routed back to the veth)" grep -q "status: REFUSED" <<<"$out"
e=$(ev1 '.event == "net.dns" and .qname == "evil.web.test" and .session_id == "box"')
echeck "sandbox: net.dns blocked" "$e" '.verdict == "blocked" and .reason == "not_allowed" and .rcode == "REFUSED"'
out=$(in_sbx dig +short +time=2 +tries=1 @198.18.1.2 api.web.test A)
n=$(in_sbx curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve api.web.test:443:198.18.1.2 https://api.web.test/f100k)
check "sandbox: allowed name resolves and connects" test "$out/$n" = 198.18.1.2/102400
in_sbx curl -s -o /dev/null --max-time 5 http://198.18.1.4:9000/
check "sandbox: IP without DNS refused" test $? = 7
check "sandbox: nothing reached upstream" test "$(cnt ip_only)" = 0

# ---- report-only: everything flows, events say would_block ------------------------------------
out=$(in_sess s3 dig +short +time=2 +tries=1 @198.18.1.2 evil.web.test A)
check "report mode: a blocked name still resolves" test "$out" = 198.18.1.2
n=$(in_sess s3 curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve evil.web.test:443:198.18.1.2 https://evil.web.test/f100k)
check "report mode: the connection works" test "$n" = 102400
e=$(ev1 '.event == "net.dns" and .qname == "evil.web.test" and .session_id == "s3"')
echeck "report mode: net.dns would_block" "$e" '.verdict == "would_block" and .mode == "report" and .reason == "not_allowed"'
e=$(ev1 '.event == "net.connect" and .sni == "evil.web.test" and .session_id == "s3"')
echeck "report mode: net.connect would_block" "$e" '.verdict == "would_block" and .mode == "report"'

# ---- accounting --------------------------------------------------------------------------------
m=$(curl -s "http://127.0.0.1:$METRICS_PORT/metrics" 2>/dev/null)
check "metrics: blocked attempts counted" grep -Eq '^sandgate_gateway_blocked_(flows|dns)_total [1-9]' <<<"$m"
# Issue 18.5: no series carries a session id (series churn); the session's own figures
# are in the journal (the verdicts above).
check "metrics: no per-session label" bash -c '! grep -q "session=" <<<"$1"' _ "$m"
# With the gateway's counters (the gateway is on by default since 18.6) the exposition is
# as clean as t_daemon_health's without them.
check "promtool check metrics is clean with the gateway's counters" \
	sh -c 'printf "%s\n" "$1" | promtool check metrics' _ "$m"
finish
