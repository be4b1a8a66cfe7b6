#!/usr/bin/env bash
# The gateway in interface mode: a sandbox behind its own veth, routed by the lab's
# router namespace where the gateway works. Its DNS and flows are attributed by the
# arriving interface; the router's own traffic produces no event.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

in_sbx() { ip netns exec "$SBX" "$@"; }

gw_config "$T_TMP/c.yaml" "  mode: interface
  flow_interim_interval: 1s"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack
sg session create --id box --iface gwsbx >/dev/null && sg session start box >/dev/null
check "interface map holds the sandbox's veth" sh -c "ip netns exec '$GWNS' nft list map inet sandgate iface_sessions | grep -q gwsbx"

out=$(in_sbx dig +short +time=2 +tries=1 @198.18.1.2 box.web.test A)
check "sandbox DNS answered through the router's queue" test "$out" = 198.18.1.2
wait_ev 5 '.event == "net.dns" and .qname == "box.web.test"'
e=$(evq '.event == "net.dns" and .qname == "box.web.test"' | head -1)
echeck "net.dns attributed by interface" "$e" '.session_id == "box" and .rcode == "NOERROR" and
	.answers[0].data == "198.18.1.2" and .resolver == "198.18.1.2:53" and .transport == "udp" and
	.uid == null'
out=$(in_sbx dig +tcp +short +time=2 +tries=1 @198.18.1.2 tcp.web.test A)
check "sandbox DNS over TCP answered" test "$out" = 198.18.1.2
wait_ev 5 '.event == "net.dns" and .qname == "tcp.web.test" and .transport == "tcp"'
check "net.dns over TCP logged" test -n "$(evq '.event == "net.dns" and .qname == "tcp.web.test" and .session_id == "box"')"

# The latest answer for an address wins its binding: resolve the name again first.
in_sbx dig +short +time=2 +tries=1 @198.18.1.2 box.web.test A >/dev/null
n=$(in_sbx curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve box.web.test:443:198.18.1.2 https://box.web.test/f1m)
check "sandbox HTTPS works" test "$n" = 1048576
wait_ev 5 '.event == "net.connect" and .sni == "box.web.test"'
e=$(evq '.event == "net.connect" and .sni == "box.web.test"' | head -1)
echeck "net.connect: sandbox source, SNI, bound domain" "$e" '.session_id == "box" and
	.src.ip == "198.18.0.2" and .dst.ip == "198.18.1.2" and .dst.port == 443 and
	.domain == "box.web.test" and .parse == "tls" and .verdict == "allowed"'
fid=$(jq -r .flow_id <<<"$e")
wait_ev 15 ".event == \"net.flow\" and .flow_id == $fid"
e=$(evq ".event == \"net.flow\" and .flow_id == $fid" | head -1)
echeck "net.flow: 1 MiB in through the router" "$e" '.session_id == "box" and .final == true and
	.bytes_in >= 1048576 and .bytes_in < 1048576 * 1.1 + 20000 and .sni == "box.web.test"'

n=$(in_sbx curl -s -o /dev/null -w '%{size_download}' --max-time 5 -H 'Host: plain.web.test' http://198.18.1.2/f100k)
check "sandbox HTTP works" test "$n" = 102400
wait_ev 5 '.event == "net.connect" and .http_host == "plain.web.test"'
check "net.connect with Host" test -n "$(evq '.event == "net.connect" and .http_host == "plain.web.test" and .session_id == "box"')"

# A flow open for 4 s: interim reports (final: false) while it lasts, then its end.
in_sbx sh -c 'sleep 4 | socat -u - TCP:198.18.1.2:9000'
wait_ev 15 '.event == "net.flow" and .dst.port == 9000 and .final == true'
n=$(evq '.event == "net.flow" and .dst.port == 9000 and .final == false and .session_id == "box"' | wc -l)
check "long flow: interim net.flow reports (got $n)" test "$n" -ge 1
e=$(evq '.event == "net.flow" and .dst.port == 9000 and .final == false' | head -1)
echeck "interim report: counters so far, duration" "$e" '.packets_out > 0 and .duration_ms >= 900'

in_gw dig +short +time=2 +tries=1 @198.18.1.2 router.web.test >/dev/null
in_gw curl -sk -o /dev/null --max-time 5 --resolve router.web.test:443:198.18.1.2 https://router.web.test/f100k
sleep 3   # conntrack timeouts are 1-2 s here: any (wrong) net.flow would be written by now
check "the router's own traffic logged nothing" sh -c "! grep -q 'router\.web\.test\|\"src\":{\"ip\":\"198.18.1.1\"' '$SG_STATE'/journal/*.jsonl"
check "daemon exits 0 at SIGTERM" stop_daemon
finish
