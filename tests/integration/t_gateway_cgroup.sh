#!/usr/bin/env bash
# The gateway in cgroup mode, end to end: a session's processes in the gateway's network
# namespace, DNS over UDP and TCP (net.dns with answers), HTTPS with SNI and the domain
# bound from the DNS answer, HTTP with Host, IPv6, net.flow byte counts matching what the
# peers transferred in both directions, h2c, and a host process that produces no event.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

METRICS_PORT=$((20000 + $$ % 20000))
gw_config "$T_TMP/c.yaml"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack
check "ruleset installed in the lab namespace" wait_for "ruleset" 10 sh -c "ip netns exec '$GWNS' nft list table inet sandgate >/dev/null 2>&1"
check "both queues bound by the daemon" wait_for "queues" 10 sh -c "ip netns exec '$GWNS' cat /proc/net/netfilter/nfnetlink_queue | awk '\$1==100||\$1==101' | wc -l | grep -qx 2"
wait_ev 5 '.event == "gateway.start"'
e=$(evq '.event == "gateway.start"' | head -1)
echeck "gateway.start: where, how, fail closed" "$e" ".netns == \"$GWNS\" and .queue_base == 100 and
	.queues == 2 and .queue_impl == \"compat\" and .mode == \"both\" and .cgroup_level == 2 and
	.fail_open == false"
sg session create --id s1 >/dev/null && sg session start s1 >/dev/null
in_sess s1 sleep infinity &
cleanup "kill $!"
check "session holds a process" wait_for "session process" 5 grep -q . "$CG2/$SG_PARENT/s1/cgroup.procs"

# ---- DNS over UDP and TCP ------------------------------------------------------------
out=$(in_sess s1 dig +short +time=2 +tries=1 @198.18.1.2 web.test A)
check "session DNS (udp) answered through the queue" test "$out" = 198.18.1.2
wait_ev 5 '.event == "net.dns" and .qname == "web.test" and .transport == "udp"'
e=$(evq '.event == "net.dns" and .qname == "web.test" and .transport == "udp"' | head -1)
echeck "net.dns udp: fields" "$e" '.session_id == "s1" and .source == "gateway" and
	.qtype == "A" and .rcode == "NOERROR" and .resolver == "198.18.1.2:53" and
	.verdict == "allowed" and .reason == "no_policy" and (.pid | type) == "number" and .uid == 0 and
	.status == "answered" and (.latency_ms | type) == "number"'
echeck "net.dns udp: answers with type, data, ttl" "$e" \
	'.answers | length == 1 and .[0].type == "A" and .[0].data == "198.18.1.2" and (.[0].ttl | type) == "number"'
out=$(in_sess s1 dig +tcp +short +time=2 +tries=1 @198.18.1.2 www.web.test AAAA)
check "session DNS (tcp) answered" test "$out" = 2001:db8:1::2
wait_ev 5 '.event == "net.dns" and .qname == "www.web.test" and .transport == "tcp"'
e=$(evq '.event == "net.dns" and .qname == "www.web.test"' | head -1)
echeck "net.dns tcp: fields" "$e" '.session_id == "s1" and .transport == "tcp" and
	.qtype == "AAAA" and .rcode == "NOERROR" and .answers[0].data == "2001:db8:1::2"'
# One query split over three TCP segments (TCP_NODELAY, pauses; the first holds one byte
# of the length prefix): the reassembler must join the pieces.
cat >"$T_TMP/split.py" <<'PY'
import socket, struct, time
def q(i, name):
    body = struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0)
    for l in name.split("."):
        body += bytes([len(l)]) + l.encode()
    body += b"\x00\x00\x01\x00\x01"
    return struct.pack(">H", len(body)) + body
s = socket.create_connection(("198.18.1.2", 53), timeout=3)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
m = q(7, "split.web.test")
for part in (m[:1], m[1:9], m[9:]):
    s.sendall(part)
    time.sleep(0.2)
got = b""
while len(got) < 2 or len(got) < 2 + struct.unpack(">H", got[:2])[0]:
    got += s.recv(4096)
print("answered" if got[5] & 0x0f == 0 else "error")
PY
out=$(in_sess s1 python3 "$T_TMP/split.py")
check "DNS over TCP, one query in three segments, answered" test "$out" = answered
wait_ev 5 '.event == "net.dns" and .qname == "split.web.test"'
e=$(evq '.event == "net.dns" and .qname == "split.web.test"' | head -1)
echeck "net.dns from a query split across segments" "$e" '.transport == "tcp" and .status == "answered" and .answers[0].data == "198.18.1.2" and .dns_id == 7'
out=$(in_sess s1 dig +short +time=2 +tries=1 @2001:db8:1::2 six.web.test AAAA)
check "session DNS to an IPv6 resolver answered" test "$out" = 2001:db8:1::2
wait_ev 5 '.event == "net.dns" and .qname == "six.web.test"'
e=$(evq '.event == "net.dns" and .qname == "six.web.test"' | head -1)
echeck "net.dns over IPv6: resolver [v6]:port" "$e" '.resolver == "[2001:db8:1::2]:53" and .answers[0].type == "AAAA"'
out=$(in_sess s1 dig +short +time=2 +tries=1 @198.18.1.2 nothere.example NS)
wait_ev 5 '.event == "net.dns" and .qname == "nothere.example"'
e=$(evq '.event == "net.dns" and .qname == "nothere.example"' | head -1)
echeck "net.dns: an error rcode is logged with no answers" "$e" '.rcode != "NOERROR" and .answers == []'

# ---- HTTPS with SNI, domain bound from the answer --------------------------------------
in_sess s1 dig +short +time=2 +tries=1 @198.18.1.2 api.web.test A >/dev/null
n=$(in_sess s1 curl -sk -o /dev/null -w '%{size_download}' https://api.web.test/f100k \
	--resolve api.web.test:443:198.18.1.2 --max-time 5)
check "session HTTPS works (allowed, observe mode)" test "$n" = 102400
wait_ev 5 '.event == "net.connect" and .sni == "api.web.test"'
e=$(evq '.event == "net.connect" and .sni == "api.web.test"' | head -1)
echeck "net.connect https: fields" "$e" '.session_id == "s1" and .proto == "tcp" and
	.dst.ip == "198.18.1.2" and .dst.port == 443 and .src.ip == "198.18.1.1" and
	(.src.port | type) == "number" and .domain == "api.web.test" and .http_host == null and
	.verdict == "allowed" and .reason == "no_policy" and .rule == null and .parse == "tls" and
	.uid == 0 and (.pid | type) == "number" and (.flow_id | type) == "number"'
fid=$(jq -r .flow_id <<<"$e")
wait_ev 15 ".event == \"net.flow\" and .flow_id == $fid"
e=$(evq ".event == \"net.flow\" and .flow_id == $fid" | head -1)
echeck "net.flow https: names carried over, final, counters" "$e" '.session_id == "s1" and
	.sni == "api.web.test" and .domain == "api.web.test" and .final == true and
	.proto == "tcp" and .dst.port == 443 and .bytes_in >= 102400 and
	.bytes_in < 102400 * 1.2 + 20000 and .packets_in > 0 and .packets_out > 0 and
	(.duration_ms | type) == "number"'

# ---- HTTP with Host; 1 MiB in ------------------------------------------------------------
# sh execs curl: the pid it prints is curl's, the one sock_diag must find.
n=$(in_sess s1 sh -c 'echo $$ >"$1"; exec curl -s -o /dev/null -w "%{size_download}" http://198.18.1.2/f1m -H "Host: files.web.test" --max-time 5' _ "$T_TMP/curl.pid")
check "session HTTP works" test "$n" = 1048576
wait_ev 5 '.event == "net.connect" and .http_host == "files.web.test"'
e=$(evq '.event == "net.connect" and .http_host == "files.web.test"' | head -1)
echeck "net.connect http: fields" "$e" '.session_id == "s1" and .dst.port == 80 and .sni == null and .parse == "http"'
# $$ inside is the session's own PID namespace's number; the record carries the host's,
# the pid of curl's process.exec.
wait_ev 5 '.event == "process.exec" and .session_id == "s1" and (.args | index("http://198.18.1.2/f1m"))'
cpid=$(journal_lines "$SG_STATE" | jq -r 'select(.event == "process.exec" and .session_id == "s1" and (.args | index("http://198.18.1.2/f1m"))) | .pid' | head -1)
echeck "net.connect http: pid is curl's (sock_diag among the session's processes)" "$e" ".pid == ${cpid:-0}"
fid=$(jq -r .flow_id <<<"$e")
wait_ev 15 ".event == \"net.flow\" and .flow_id == $fid"
e=$(evq ".event == \"net.flow\" and .flow_id == $fid" | head -1)
echeck "net.flow http: 1 MiB in" "$e" '.bytes_in >= 1048576 and .bytes_in < 1048576 * 1.1 + 20000 and .bytes_out < 20000'

# ---- h2c: :authority from the HPACK-coded first HEADERS -----------------------------------
n=$(in_sess s1 curl -s -o /dev/null -w '%{size_download}' --http2-prior-knowledge --max-time 5 \
	--resolve h2.web.test:8080:198.18.1.2 http://h2.web.test:8080/f100k)
check "session h2c works" test "$n" = 102400
wait_ev 5 '.event == "net.connect" and .dst.port == 8080'
e=$(evq '.event == "net.connect" and .dst.port == 8080' | head -1)
echeck "net.connect h2c: :authority" "$e" '.parse == "h2c" and .http_host == "h2.web.test" and .session_id == "s1"'

# ---- bytes out: 300000 to a sink ------------------------------------------------------------
in_sess s1 sh -c 'head -c 300000 /dev/zero | socat -u - TCP:198.18.1.2:9000'
wait_ev 15 '.event == "net.flow" and .dst.port == 9000'
e=$(evq '.event == "net.flow" and .dst.port == 9000' | head -1)
echeck "net.flow upload: 300000 out" "$e" '.session_id == "s1" and .bytes_out >= 300000 and
	.bytes_out < 300000 * 1.1 + 20000 and .bytes_in < 20000'

# ---- IPv6 ------------------------------------------------------------------------------
n=$(in_sess s1 curl -sk -o /dev/null -w '%{size_download}' https://v6.web.test/f100k \
	--resolve 'v6.web.test:443:[2001:db8:1::2]' --max-time 5)
check "session HTTPS over IPv6 works" test "$n" = 102400
wait_ev 5 '.event == "net.connect" and .sni == "v6.web.test"'
e=$(evq '.event == "net.connect" and .sni == "v6.web.test"' | head -1)
echeck "net.connect over IPv6" "$e" '.dst.ip == "2001:db8:1::2" and .dst.port == 443 and .session_id == "s1"'

# ---- a host process: no events, never queued ----------------------------------------------
# First every session flow so far has ended and been reported: one net.flow per net.connect.
all_ended() { [ "$(evq '.event == "net.connect"' | wc -l)" = "$(evq '.event == "net.flow"' | wc -l)" ]; }
check "every session flow reported its end" wait_for "all flows ended" 20 all_ended
before=$(journal_lines "$SG_STATE" | grep -c '"event":"net\.')
q0=$(in_gw nft list chain inet sandgate session 2>/dev/null | grep -o 'packets [0-9]*' | tr '\n' ' ')
in_gw dig +short +time=2 +tries=1 @198.18.1.2 host.web.test >/dev/null
n=$(in_gw curl -sk -o /dev/null -w '%{size_download}' https://host.web.test/f100k --resolve host.web.test:443:198.18.1.2 --max-time 5)
check "host HTTPS works" test "$n" = 102400
q1=$(in_gw nft list chain inet sandgate session 2>/dev/null | grep -o 'packets [0-9]*' | tr '\n' ' ')
check "host traffic never reached the session chain" test "$q0" = "$q1"
sleep 3   # let any (wrong) flow end be reported: conntrack timeouts are 1-2 s here
check "host traffic produced no event" test "$(journal_lines "$SG_STATE" | grep -c '"event":"net\.')" = "$before"
check "no host name in the journal" sh -c "! grep -q host.web.test '$SG_STATE'/journal/*.jsonl"

# ---- unanswered query ----------------------------------------------------------------
in_sess s1 dig +short +time=1 +tries=1 @198.18.1.99 lost.web.test >/dev/null
wait_ev 10 '.event == "net.dns" and .qname == "lost.web.test"'
e=$(evq '.event == "net.dns" and .qname == "lost.web.test"' | head -1)
echeck "a query with no answer is logged" "$e" '.status == "no_answer" and .rcode == null and .answers == [] and .resolver == "198.18.1.99:53"'

# ---- /metrics ----------------------------------------------------------------------------
metric() { curl -s "http://127.0.0.1:$METRICS_PORT/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }
check "metrics: packets read" test "$(metric sandgate_gateway_packets_total)" -gt 0
check "metrics: DNS queries counted" test "$(metric sandgate_gateway_dns_queries_total)" -ge 4
check "metrics: unanswered query counted" test "$(metric sandgate_gateway_dns_unanswered_total)" -ge 1
check "metrics: decision latency histogram" test "$(metric sandgate_gateway_decision_seconds_count)" -gt 0
check "metrics: no kernel queue drops" test "$(metric sandgate_gateway_queue_dropped_total)" = 0
check "metrics: other paths are 404" test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$METRICS_PORT/")" = 404

sg session terminate s1 >/dev/null
sg session cleanup s1 >/dev/null
check "daemon exits 0 at SIGTERM" stop_daemon
check "ruleset stays installed after stop (fail closed)" sh -c "ip netns exec '$GWNS' nft list table inet sandgate >/dev/null 2>&1"
finish
