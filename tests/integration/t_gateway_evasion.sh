#!/usr/bin/env bash
# Issue 14's attacks on the packet path, each from a session in an enforcing gateway
# with real clients (tests/integration/gw_attacks.py: raw byte streams from Python,
# dig, a TCP Fast Open client and server), each measured at the upstream (a sink that
# logs every byte it receives, nft counters in the upstream namespace) and in the
# journal, each next to a control case that shows the lab would see the leak:
#   split first bytes (TLS, HTTP), two SNIs and a bad length, 1,000 mutated
#   ClientHellos to another allowed name's address, Fast Open data, datagrams and a
#   SYN from port 53, two DNS questions and the case of a name, a keep-alive request
#   to another Host, a request behind an empty line and h2c on a bound address, and
#   names that are no names ("[pi.web.test", an address as SNI or another one as Host),
#   as uid 65534 and as root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
command -v python3 >/dev/null || { echo "missing python3"; echo "0 passed, 1 failed"; exit 1; }
ATK=$SRC/tests/integration/gw_attacks.py
lab_up

# ---- upstream: a second resolver (b.web.test on its own address), sinks, counters ----
ip -n "$PEER" addr add 198.18.1.3/24 dev peer0
ip -n "$PEER" addr add 198.18.1.4/24 dev peer0
ip -n "$PEER" addr add 198.18.1.5/24 dev peer0
ip netns exec "$PEER" dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts \
	--bind-interfaces --listen-address=198.18.1.3 --address=/b.web.test/198.18.1.5 \
	--address=/web.test/198.18.1.2 --local-ttl=3600 --user=root --pid-file= 2>/dev/null &
cleanup "kill $!"
mkdir -p "$T_TMP/sa" "$T_TMP/sb" "$T_TMP/st"
ip netns exec "$PEER" sysctl -qw net.ipv4.tcp_fastopen=0x203
SINK_ADDR=198.18.1.2 ip netns exec "$PEER" python3 "$ATK" sink "$T_TMP/sa" 7443 7080 7445 &
cleanup "kill $!"
SINK_ADDR=198.18.1.5 ip netns exec "$PEER" python3 "$ATK" sink "$T_TMP/sb" 8443 8446 8447 &
cleanup "kill $!"
SINK_TFO=1 SINK_ADDR=198.18.1.2 ip netns exec "$PEER" python3 "$ATK" sink "$T_TMP/st" 8444 &
cleanup "kill $!"
ip netns exec "$PEER" nft -f - <<'NFT'
table inet sgevade {
	counter syn_data {}
	counter udp9999 {}
	counter tcp9000 {}
	counter resolver1 {}
	counter h2c {}
	chain in {
		type filter hook input priority 0;
		tcp flags & (syn | ack) == syn ip length > 80 counter name syn_data
		udp dport 9999 counter name udp9999
		ip daddr 198.18.1.4 tcp dport 9000 counter name tcp9000
		ip daddr 198.18.1.2 udp dport 53 counter name resolver1
		ip daddr 198.18.1.2 tcp dport 8080 ip length > 100 counter name h2c
	}
}
NFT
cleanup "ip netns exec '$PEER' nft delete table inet sgevade"
cnt() { ip netns exec "$PEER" nft -j list counter inet sgevade "$1" | jq '.nftables[1].counter.packets'; }
sz() { stat -c %s "$1" 2>/dev/null || echo 0; }
# blocked_budget 0: every blocked attempt on its own line, so each of the 1,000 mutated
# hellos below has its record (past a budget they would be counted in summaries and the
# kernel's flood limit would refuse most of them unread: t_gateway_flood tests that).
# grows FILE SIZE: waits up to 5 s for FILE to grow past SIZE (a held flight goes out
# when the client's TCP sends it again)
grows() { wait_for "$1 grows" 5 sh -c "[ \$(stat -c %s '$1' 2>/dev/null || echo 0) -gt $2 ]"; }

GW_ENFORCE=true gw_config "$T_TMP/c.yaml" "  resolvers: [198.18.1.2, 198.18.1.3]
  dns_ttl_min: 1h
  dns_ttl_max: 1h
  block_burst: 1000000
  blocked_budget: 0
policies:
  default:
    allow:
      - domain: api.web.test
      - domain: b.web.test"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack
sg session create --id e1 >/dev/null && sg session start e1 >/dev/null
in_sess e1 sleep infinity &
cleanup "kill $!"
check "session holds a process" wait_for "session process" 5 sh -c "grep -q . '$CG2/$SG_PARENT/e1/cgroup.procs'"
ev1() { wait_ev 8 "$1" >/dev/null 2>&1; evq "$1" | head -1; }
atk() { in_sess e1 python3 "$ATK" "$@"; }
out=$(in_sess e1 dig +short +time=2 +tries=1 @198.18.1.2 api.web.test A)
check "api.web.test resolves in the session ($out)" test "$out" = 198.18.1.2
out=$(in_sess e1 dig +short +time=2 +tries=1 @198.18.1.3 b.web.test A)
check "b.web.test resolves to its own address ($out)" test "$out" = 198.18.1.5

# ---- split first bytes: 8 one-byte segments, then the rest ----------------------------------
s0=$(sz "$T_TMP/sa/7443.log")
out=$(atk split 198.18.1.2 7443 bad.web.test)
check "split ClientHello with SNI bad.web.test to api's address: reset ($out)" test "$out" = reset
check "upstream got none of its bytes" test "$(sz "$T_TMP/sa/7443.log")" = "$s0"
e=$(ev1 '.event == "net.connect" and .sni == "bad.web.test" and .dst.port == 7443')
echeck "net.connect: blocked sni_mismatch, the SNI read (parse tls)" "$e" \
	'.verdict == "blocked" and .reason == "sni_mismatch" and .parse == "tls"'
out=$(atk split 198.18.1.2 7443 api.web.test)
grows "$T_TMP/sa/7443.log" "$s0"
check "control: the same split hello with SNI api.web.test arrives whole, in order ($(( $(sz "$T_TMP/sa/7443.log") - s0 )) bytes)" \
	sh -c "grep -q api.web.test '$T_TMP/sa/7443.log' && [ $(( $(sz "$T_TMP/sa/7443.log") - s0 )) -ge 100 ]"
s0=$(sz "$T_TMP/sa/7080.log")
out=$(atk split 198.18.1.2 7080 -H bad.web.test)
check "split HTTP head with Host bad.web.test: reset ($out)" test "$out" = reset
check "upstream got none of it" test "$(sz "$T_TMP/sa/7080.log")" = "$s0"
e=$(ev1 '.event == "net.connect" and .http_host == "bad.web.test" and .dst.port == 7080')
echeck "net.connect: blocked host_mismatch (parse http)" "$e" '.verdict == "blocked" and .reason == "host_mismatch" and .parse == "http"'
out=$(atk split 198.18.1.2 7080 -H api.web.test)
grows "$T_TMP/sa/7080.log" "$s0"
check "control: split HTTP head with the allowed Host arrives" grep -q 'Host: api.web.test' "$T_TMP/sa/7080.log"

# ---- unparseable first flights --------------------------------------------------------------
s0=$(sz "$T_TMP/sa/7445.log")
out=$(atk hello 198.18.1.2 7445 api.web.test two_sni)
check "ClientHello with two server_names: reset ($out)" test "$out" = reset
e=$(ev1 '.event == "net.connect" and .dst.port == 7445')
echeck "net.connect: blocked tls_malformed" "$e" '.verdict == "blocked" and .reason == "tls_malformed"'
out=$(atk hello 198.18.1.2 7445 api.web.test badlen)
check "ClientHello with a bad length: refused ($out)" sh -c "[ '$out' = reset ] || [ '$out' = silent ]"
check "upstream got none of either" test "$(sz "$T_TMP/sa/7445.log")" = "$s0"
out=$(atk hello 198.18.1.2 7445 api.web.test ok)
check "control: a valid hello to the same port arrives" grows "$T_TMP/sa/7445.log" "$s0"

# ---- what cannot be read on a bound address: another protocol, h2c ------------------------
s0=$(sz "$T_TMP/sa/7080.log")
out=$(atk send 198.18.1.2 7080 '\r\nGET / HTTP/1.1\r\nHost: bad.web.test\r\n\r\n')
check "a request behind an empty line (servers skip it, the reader does not): reset ($out)" test "$out" = reset
check "upstream got none of it" test "$(sz "$T_TMP/sa/7080.log")" = "$s0"
e=$(ev1 '.event == "net.connect" and .dst.port == 7080 and .reason == "first_flight_unknown"')
echeck "net.connect: blocked first_flight_unknown" "$e" '.verdict == "blocked" and .parse == "unknown"'
h0=$(cnt h2c)
out=$(in_sess e1 curl -s -o /dev/null -w '%{http_code}' --max-time 5 --http2-prior-knowledge \
	--resolve api.web.test:8080:198.18.1.2 http://api.web.test:8080/f100k)
check "h2c (prior knowledge) to the allowed name: refused, its later streams cannot be read ($out)" test "$out" = 000
check "no request reached nginx's h2c port" test "$(cnt h2c)" = "$h0"
e=$(ev1 '.event == "net.connect" and .dst.port == 8080')
echeck "net.connect: blocked h2c_not_followed" "$e" '.verdict == "blocked" and .reason == "h2c_not_followed"'

# ---- 1,000 mutated ClientHellos (SNI api.web.test) to b.web.test's address ------------------
n0=$(evq '.event == "net.connect" and .dst.ip == "198.18.1.5"' | wc -l)
seed=${MUTATION_SEED:-$$}
out=$(atk mutate 198.18.1.5 8443 api.web.test 1000 "$seed")
echo "# mutation seed $seed (MUTATION_SEED=$seed replays it), outcomes: $out"
check "all 1000 mutated hellos recorded" wait_for "1000 net.connect" 60 sh -c \
	"[ \$(cat '$SG_STATE'/journal/*.jsonl | grep -c '\"dst\":{\"ip\":\"198.18.1.5\"') -ge $((n0 + 1000)) ]"
allowed=$(evq '.event == "net.connect" and .dst.ip == "198.18.1.5" and .verdict != "blocked"' | wc -l)
check "none allowed without a matching SNI ($allowed allowed)" test "$allowed" = 0
evq '.event == "net.connect" and .dst.ip == "198.18.1.5"' | jq -r '"# \(.verdict) \(.reason) \(.parse) late=\(.late)"' | sort | uniq -c
if [ "$allowed" != 0 ]; then
	# What to read when it fails (seen once in CI, 2026-12-02, not reproduced here):
	# the allowed lines whole, every line of the same source ports, the sink's sockets.
	echo "# allowed lines:"
	evq '.event == "net.connect" and .dst.ip == "198.18.1.5" and .verdict != "blocked"' | head -5 | sed 's/^/#   /'
	for p in $(evq '.event == "net.connect" and .dst.ip == "198.18.1.5" and .verdict != "blocked"' |
		jq -r '.src.port' | head -5); do
		echo "# every line of source port $p:"
		evq ".src.port == $p" | sed 's/^/#   /'
	done
	echo "# sink sockets: $(ip netns exec "$PEER" ss -Htn state established '( sport = :8443 )' | wc -l)," \
		"conntrack entries to :8443: $(in_gw conntrack -L -p tcp --dport 8443 2>/dev/null | wc -l)"
	evq '.event == "sensor.loss"' | head -5 | sed 's/^/#   /'
fi
check "b.web.test's upstream got no byte of them" test "$(sz "$T_TMP/sb/8443.log")" = 0
out=$(atk hello 198.18.1.5 8443 b.web.test ok)
check "control: a hello with SNI b.web.test to its address arrives" grows "$T_TMP/sb/8443.log" 0

# ---- names that are no names ----------------------------------------------------------------
# The mutated hellos above found, in CI on 2026-12-03, SNI "[pi.web.test" let out to
# b.web.test's address on its bound name alone: a name opening with "[" passed for an
# IPv6 literal, that is for "no name". Sent on purpose here, as uid 65534 and as root in
# a default `sandgate run`, each measured at the sink (port 8447): such a name, an SNI
# that is the destination's own address (RFC 6066 allows none), and a Host naming
# another address. Control: the Host that is the destination's own address, and the
# allowed SNI, arrive.
chmod 0711 "$T_TMP"
mkdir -m 0755 "$T_TMP/nb" && cp "$ATK" "$T_TMP/nb/"
atk_as() {   # atk_as UID|root ARGS...
	local u=$1
	shift
	ip netns exec "$GWNS" "$BIN/sandgate" run --control "$SG_SOCK" --session e1 \
		$([ "$u" = root ] || echo "--uid $u") --cwd / -- python3 "$T_TMP/nb/gw_attacks.py" "$@"
}
for who in 65534 root; do
	uid=$([ "$who" = root ] && echo 0 || echo "$who")
	for sni in "[pi.web.test" 198.18.1.5; do
		s0=$(sz "$T_TMP/sb/8447.log")
		out=$(atk_as "$who" hello 198.18.1.5 8447 "$sni" ok)
		check "$who: hello with SNI $sni to b.web.test's address: reset ($out)" test "$out" = reset
		check "$who: the upstream got none of it" test "$(sz "$T_TMP/sb/8447.log")" = "$s0"
		e=$(ev1 ".event == \"net.connect\" and .dst.port == 8447 and .sni == \"$sni\" and .uid == $uid")
		echeck "$who: net.connect: blocked invalid_name, the SNI as sent" "$e" \
			'.verdict == "blocked" and .reason == "invalid_name" and .parse == "tls"'
	done
	s0=$(sz "$T_TMP/sb/8447.log")
	out=$(atk_as "$who" send 198.18.1.5 8447 'GET / HTTP/1.1\r\nHost: 198.18.1.4\r\n\r\n')
	check "$who: a request with Host 198.18.1.4 to b.web.test's address: reset ($out)" test "$out" = reset
	check "$who: the upstream got none of it" test "$(sz "$T_TMP/sb/8447.log")" = "$s0"
	e=$(ev1 ".event == \"net.connect\" and .dst.port == 8447 and .http_host == \"198.18.1.4\" and .uid == $uid")
	echeck "$who: net.connect: blocked invalid_name, the Host as sent" "$e" \
		'.verdict == "blocked" and .reason == "invalid_name" and .parse == "http"'
done
s0=$(sz "$T_TMP/sb/8447.log")
out=$(atk_as 65534 send 198.18.1.5 8447 'GET / HTTP/1.1\r\nHost: 198.18.1.5\r\n\r\n')
grows "$T_TMP/sb/8447.log" "$s0"
check "control: Host 198.18.1.5 (the destination itself) arrives" grep -q 'Host: 198.18.1.5' "$T_TMP/sb/8447.log"
s0=$(sz "$T_TMP/sb/8447.log")
out=$(atk_as 65534 hello 198.18.1.5 8447 b.web.test ok)
check "control: SNI b.web.test arrives" grows "$T_TMP/sb/8447.log" "$s0"

# ---- a FIN ahead of the first flight ----------------------------------------------------------
# Unprivileged, from a sandbox behind its own interface (interface mode) whose session
# has --net-rate 16kbit (2,000 bytes/second, one bucket for both directions, in the
# kernel before the queue): 1,400 bytes of UDP empty the bucket, so the ClientHello's
# segment (963 bytes, SNI api.web.test to b.web.test's address) is dropped ahead of the
# queue and the 52-byte FIN right after it is not. (A local socket learns of the drop and
# sends the FIN with the data again; a routed sandbox's TCP does not.) Until 2026-12-03
# the gateway took a FIN with nothing read for "no data, allowed" and let the hello
# through unread when TCP sent it again.
sg session create --id e2 --iface gwsbx --net-rate 16kbit >/dev/null && sg session start e2 >/dev/null
out=$(ip netns exec "$SBX" dig +short +time=2 +tries=1 @198.18.1.3 b.web.test A)
check "the sandbox resolves b.web.test ($out)" test "$out" = 198.18.1.5
fin_first() {
	sleep 1.2   # a full bucket again
	ip netns exec "$SBX" python3 "$ATK" finfirst 198.18.1.5 8443 "$1" 198.18.1.4 9997 1400
}
s0=$(sz "$T_TMP/sb/8443.log")
out=$(fin_first api.web.test)
check "FIN ahead of its hello (SNI api.web.test to b.web.test's address): reset ($out)" test "$out" = reset
n=$(( $(sz "$T_TMP/sb/8443.log") - s0 ))
check "the upstream got none of it ($n bytes)" test "$n" = 0
e=$(ev1 '.event == "net.connect" and .session_id == "e2" and .dst.ip == "198.18.1.5"')
echeck "net.connect: blocked sni_mismatch, read when TCP sent it again" "$e" \
	'.verdict == "blocked" and .reason == "sni_mismatch" and .sni == "api.web.test"'
s0=$(sz "$T_TMP/sb/8443.log")
out=$(fin_first b.web.test)
check "control: the same with SNI b.web.test arrives once the bucket refills ($out)" \
	grows "$T_TMP/sb/8443.log" "$s0"
check "control: the bucket dropped the first sending" sh -c \
	"ip netns exec '$GWNS' nft -j list counters table inet sandgate | jq -e '[.nftables[].counter? | select(.name? // \"\" | startswith(\"drops_\")) | .packets] | add > 0' >/dev/null"
sg session cleanup e2 >/dev/null 2>&1

# ---- a tuple used again at once -------------------------------------------------------------
# Unprivileged: a connection with SNI b.web.test is let out; the client resets it
# (SO_LINGER 0) and at once connects again from the same source port (conntrack makes a
# new entry, undecided) with SNI api.web.test. The worker must not take the new
# connection for the old one, whose verdict it still holds until the conntrack thread
# reads the old entry's end. (Port 8446, not 8443: the mutated hellos' blocked entries
# to 8443 live on in conntrack, up to 300 s, and a source port the kernel hands out to
# 8443 again meets one of them: refused in the kernel, which is not what is measured
# here. The kernel's source-port sequence per destination is shared by every network
# namespace (RFC 6056's table): seen when two runs of this lab ran at once.)
out=$(atk reuse 198.18.1.5 8446 b.web.test api.web.test 20)
check "20 reused tuples, SNI api.web.test on the second connection: each reset ($out)" \
	test "$out" = "silent/reset=20"
check "the upstream got no hello with SNI api.web.test ($(grep -c api.web.test "$T_TMP/sb/8446.log") lines)" \
	sh -c "! grep -q api.web.test '$T_TMP/sb/8446.log'"
out=$(atk reuse 198.18.1.5 8446 b.web.test b.web.test 3)
check "control: with SNI b.web.test both connections are let out ($out)" test "$out" = "silent/silent=3"

# ---- TCP Fast Open: data in the SYN ---------------------------------------------------------
in_gw sysctl -qw net.ipv4.tcp_fastopen=5
sd0=$(cnt syn_data)
s0=$(sz "$T_TMP/st/8444.log")
out=$(in_gw python3 "$ATK" tfo 198.18.1.2 8444 api.web.test)
grows "$T_TMP/st/8444.log" "$s0"
check "control: outside a session a SYN carries data to the upstream ($(cnt syn_data) SYNs with data)" \
	sh -c "[ $(cnt syn_data) -gt $sd0 ] && [ $(sz "$T_TMP/st/8444.log") -gt $s0 ]"
sd0=$(cnt syn_data)
s0=$(sz "$T_TMP/st/8444.log")
out=$(atk tfo 198.18.1.2 8444 bad.web.test)
check "Fast Open request with Host bad.web.test from the session: refused ($out)" test "$out" = reset
check "no SYN with data reached the upstream, nor its bytes" \
	sh -c "[ $(cnt syn_data) = $sd0 ] && [ $(sz "$T_TMP/st/8444.log") = $s0 ]"
e=$(ev1 '.event == "net.connect" and .dst.port == 8444 and .http_host == "bad.web.test"')
echeck "net.connect: blocked host_mismatch, read after the handshake" "$e" '.verdict == "blocked" and .reason == "host_mismatch"'
out=$(atk tfo 198.18.1.2 8444 api.web.test)
grows "$T_TMP/st/8444.log" "$s0"
check "Fast Open with the allowed Host works (data stripped off the SYN, sent after it)" \
	sh -c "[ $(sz "$T_TMP/st/8444.log") -gt $s0 ] && [ $(cnt syn_data) = $sd0 ]"

# ---- from port 53 ---------------------------------------------------------------------------
u0=$(cnt udp9999)
in_gw python3 "$ATK" udp53 198.18.1.4 9999 >/dev/null
check "control: a host process's datagram from port 53 arrives" test "$(cnt udp9999)" -gt "$u0"
u0=$(cnt udp9999)
atk udp53 198.18.1.4 9999 >/dev/null
sleep 1
check "a session's datagram from port 53 to 198.18.1.4:9999 does not arrive" test "$(cnt udp9999)" = "$u0"
e=$(ev1 '.event == "net.connect" and .dst.port == 9999')
echeck "net.connect: udp, src port 53, dst 198.18.1.4:9999 (not swapped), blocked" "$e" \
	'.proto == "udp" and .src.port == 53 and .dst.ip == "198.18.1.4" and .verdict == "blocked"'
t0=$(cnt tcp9000)
out=$(atk tcp53 198.18.1.4 9000)
check "a TCP connection from port 53: refused ($out), nothing arrived" sh -c "[ '$(cnt tcp9000)' = '$t0' ]"
e=$(ev1 '.event == "net.connect" and .dst.port == 9000 and .src.port == 53')
echeck "net.connect: tcp, src port 53, dst 198.18.1.4:9000, blocked" "$e" \
	'.proto == "tcp" and .dst.ip == "198.18.1.4" and .verdict == "blocked"'

# ---- DNS: two questions, the case of a name -------------------------------------------------
r0=$(cnt resolver1)
out=$(atk qd2 198.18.1.2 api.web.test evil.web.test)
check "a query with two questions is answered REFUSED by the gateway ($out)" grep -q "rcode=5" <<<"$out"
check "it never reached the resolver" test "$(cnt resolver1)" = "$r0"
e=$(ev1 '.event == "net.dns" and .reason == "multiple_questions"')
echeck "net.dns: blocked, both names on record" "$e" \
	'.verdict == "blocked" and .qdcount == 2 and .questions == ["api.web.test", "evil.web.test"]'
in_sess e1 dig +short +time=2 +tries=1 @198.18.1.2 ApI.wEb.TeSt A >/dev/null
check "control: a single question reaches the resolver" test "$(cnt resolver1)" -gt "$r0"
e=$(ev1 '.event == "net.dns" and .qname_raw == "ApI.wEb.TeSt"')
echeck "net.dns keeps the name as sent (qname_raw) beside the normalised qname" "$e" '.qname == "api.web.test"'

# ---- keep-alive: a second request to another Host -------------------------------------------
s0=$(sz "$T_TMP/sa/7080.log")
c0=$(grep -c 'Host: api.web.test' "$T_TMP/sa/7080.log" 2>/dev/null || true)
out=$(atk keepalive 198.18.1.2 7080 api.web.test bad.web.test)
check "second request with Host bad.web.test on the same connection: reset ($out)" test "$out" = reset
grows "$T_TMP/sa/7080.log" "$s0"
check "upstream got the first request, not the second" sh -c \
	"! grep -q 'Host: bad.web.test' '$T_TMP/sa/7080.log' && [ \$(grep -c 'Host: api.web.test' '$T_TMP/sa/7080.log') -gt ${c0:-0} ]"
q='.event == "net.connect" and .http_host == "bad.web.test" and .reason == "host_mismatch" and .dst.port == 7080'
wait_ev 8 "$q" >/dev/null 2>&1
e=$(evq "$q" | tail -1)   # the split attack's record came first
id=$(jq -r '.flow_id' <<<"$e" 2>/dev/null)
first=$(evq ".event == \"net.connect\" and .flow_id == ${id:-0} and .http_host == \"api.web.test\"" | head -1)
echeck "the flow's first request is on record as allowed, the same flow_id" "$first" '.verdict == "allowed"'
c0=$(grep -c 'Host: api.web.test' "$T_TMP/sa/7080.log")
out=$(atk keepalive 198.18.1.2 7080 api.web.test api.web.test)
check "control: two requests to the allowed Host both arrive" wait_for "two more" 5 sh -c \
	"[ \$(grep -c 'Host: api.web.test' '$T_TMP/sa/7080.log') -ge $((c0 + 2)) ]"
n=$(in_sess e1 curl -s -o /dev/null -o /dev/null -w '%{size_download} %{num_connects} ' --max-time 5 \
	--resolve api.web.test:80:198.18.1.2 http://api.web.test/f100k http://api.web.test/f100k)
check "curl: two requests over one keep-alive connection ($n)" test "$n" = "102400 1 102400 0 "
n=$(in_sess e1 curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve api.web.test:443:198.18.1.2 https://api.web.test/f100k)
check "curl: HTTPS to the allowed name ($n)" test "$n" = 102400
finish
