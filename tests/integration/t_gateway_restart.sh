#!/usr/bin/env bash
# Fail closed: kill -9 of the daemon blocks session traffic at once (DNS and new flows)
# while host traffic flows; after a restart the sessions are adopted, their traffic works
# again and is attributed to them, and host traffic still produces no event.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

dns_sess() { in_cg s1 dig +short +time=1 +tries=1 @198.18.1.2 "$1" A | grep -qx 198.18.1.2; }
dns_host() { in_gw dig +short +time=1 +tries=1 @198.18.1.2 "$1" A | grep -qx 198.18.1.2; }
https_sess() { in_cg s1 curl -sk -o /dev/null --max-time 2 --resolve "$1:443:198.18.1.2" "https://$1/f100k"; }
https_host() { in_gw curl -sk -o /dev/null --max-time 2 --resolve "$1:443:198.18.1.2" "https://$1/f100k"; }
not() { ! "$@"; }

gw_config "$T_TMP/c.yaml"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack
sg session create --id s1 >/dev/null && sg session start s1 >/dev/null
in_sess s1 sleep infinity &
cleanup "kill $!"
wait_for "session process" 5 grep -q . "$CG2/$SG_PARENT/s1/cgroup.procs"
check "before: session DNS answered" dns_sess one.web.test
check "before: session HTTPS works" https_sess one.web.test

kill -9 "$DPID"
wait "$DPID" 2>/dev/null
check "killed: queues have no reader" sh -c "! ip netns exec '$GWNS' awk '\$1==100||\$1==101' /proc/net/netfilter/nfnetlink_queue | grep -q ."
check "killed: session DNS gets no answer" not dns_sess two.web.test
check "killed: session HTTPS cannot connect" not https_sess two.web.test
check "killed: host DNS answered" dns_host two.web.test
check "killed: host HTTPS works" https_host two.web.test

before=$(evq '.event == "net.dns" or .event == "net.connect"' | wc -l)
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon restarts"; finish; }
wait_gateway
check "restart: session adopted" sh -c "'$BIN/sandgate' session show s1 --control '$SG_SOCK' | jq -e '.state == \"running\"' >/dev/null"
check "restart: session DNS answered again" dns_sess three.web.test
check "restart: session HTTPS works again" https_sess three.web.test
wait_ev 5 '.event == "net.connect" and .sni == "three.web.test"'
e=$(evq '.event == "net.dns" and .qname == "three.web.test"' | head -1)
echeck "restart: net.dns attributed to s1" "$e" '.session_id == "s1" and .rcode == "NOERROR"'
e=$(evq '.event == "net.connect" and .sni == "three.web.test"' | head -1)
echeck "restart: net.connect attributed to s1, domain bound again" "$e" '.session_id == "s1" and .domain == "three.web.test"'
check "nothing logged for the queries made while the daemon was down" \
	sh -c "! grep -q 'two\.web\.test' '$SG_STATE'/journal/*.jsonl"
check "restart: host DNS still answered" dns_host four.web.test
check "restart: host traffic logged nothing" sh -c "! grep -q 'four\.web\.test' '$SG_STATE'/journal/*.jsonl"
check "daemon exits 0 at SIGTERM" stop_daemon
finish
