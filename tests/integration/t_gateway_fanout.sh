#!/usr/bin/env bash
# gateway.queue_fanout: the NFQUEUE rules spread packets by CPU (the xt target's
# fanout flag) instead of by flow hash; DNS and a TLS connection of a session still
# give their events, whichever worker sees which packet.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

gw_config "$T_TMP/c.yaml" "  queue_fanout: true"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
lab_fast_conntrack   # net.flow at the close: TIME_WAIT 1 s
sg session create --id s1 >/dev/null && sg session start s1 >/dev/null
for i in 1 2 3 4 5 6; do
	out=$(in_sess s1 taskset -c $((i % $(nproc))) dig +short +time=2 +tries=1 @198.18.1.2 "f$i.web.test" A)
	[ "$out" = 198.18.1.2 ] || fail "query $i answered ($out)"
done
[ "$(nproc)" -gt 1 ] && check "queries sent from two CPUs reached both queues ($(queued 100), $(queued 101))" \
	test "$(queued 100)" -gt 0 -a "$(queued 101)" -gt 0
wait_ev 10 '.event == "net.dns" and .qname == "f6.web.test"'
n=$(evq '.event == "net.dns" and (.qname | test("^f[0-9].web.test$")) and .rcode == "NOERROR"' | jq -s 'map(.qname) | unique | length')
check "a net.dns with its answer for each of the 6 queries ($n)" test "$n" -eq 6
in_sess s1 dig +short +time=2 +tries=1 @198.18.1.2 box.web.test A >/dev/null
n=$(in_sess s1 curl -sk -o /dev/null -w '%{size_download}' --max-time 5 \
	--resolve box.web.test:443:198.18.1.2 https://box.web.test/f1m)
check "HTTPS through the gateway" test "$n" = 1048576
wait_ev 10 '.event == "net.connect" and .sni == "box.web.test"'
e=$(evq '.event == "net.connect" and .sni == "box.web.test"' | head -1)
echeck "net.connect with the SNI and the bound domain" "$e" '.session_id == "s1" and .dst.port == 443'
wait_ev 15 '.event == "net.flow" and .dst.port == 443 and .session_id == "s1"'
e=$(evq '.event == "net.flow" and .dst.port == 443 and .session_id == "s1"' | head -1)
echeck "net.flow counts the 1 MiB answer" "$e" '.bytes_in >= 1048576' 
check "daemon exits 0 at SIGTERM" stop_daemon
finish
