#!/usr/bin/env bash
# Detection on the gateway's events (observe mode, cgroup mode, the lab of
# gateway_lab.sh): first-seen domains per tenant, DoT attempts (port 853), the
# exfiltration shape (a secret read then a connection from the same process tree), and
# the detection counters on /metrics. Blocked verdicts (bursts) need policy enforcement
# (issue 4): tests/unit/test_detect.c covers them on journal lines.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

H=$T_TMP/home
mkdir -p "$H/.ssh" && echo key >"$H/.ssh/id_ed25519"
METRICS_PORT=$((20000 + $$ % 20000))
gw_config "$T_TMP/c.yaml" "audit:
  sensitive_paths: [\"$H\"]
detection:
  rate_limit: 1000"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
ip netns exec "$PEER" socat TCP-LISTEN:853,fork,reuseaddr,bind=198.18.1.2 SYSTEM:'echo x' &
cleanup "kill $!"
for s in s1 s2 s3; do
	t=t1
	[ "$s" = s3 ] && t=t2
	sg session create --id "$s" --tenant "$t" >/dev/null && sg session start "$s" >/dev/null
	in_sess "$s" sleep infinity &
	cleanup "kill $!"
done
wait_for "sessions hold a process" 5 sh -c "grep -q . '$CG2/$SG_PARENT/s3/cgroup.procs'"

# alert_for RULE SESSION JQ-FILTER: an alert of RULE in SESSION whose refs hold the seq
# of an event matching the filter.
alert_for() {
	journal_lines "$SG_STATE" | jq -se --arg r "$1" --arg s "$2" "
		[.[] | select(.event != \"alert\" and ($3)) | .seq] as \$q |
		any(.[]; .event == \"alert\" and .rule == \$r and .session_id == \$s and
		    any(.refs[]; . as \$x | \$q | index(\$x) != null))" >/dev/null
}
none() { ! "$@"; }

# ---- first-seen domains: per tenant ----------------------------------------------------
in_sess s1 curl -sk -o /dev/null --max-time 5 https://api.web.test/ --resolve api.web.test:443:198.18.1.2
in_sess s2 curl -sk -o /dev/null --max-time 5 https://api.web.test/ --resolve api.web.test:443:198.18.1.2
in_sess s3 curl -sk -o /dev/null --max-time 5 https://api.web.test/ --resolve api.web.test:443:198.18.1.2
wait_ev 10 '.event == "net.connect" and .session_id == "s3"'
check "first-seen-domain: positive (tenant t1, first time)" wait_for alert 10 \
	alert_for first-seen-domain s1 '.event == "net.connect"'
check "first-seen-domain: positive (tenant t2 has its own set)" wait_for alert 10 \
	alert_for first-seen-domain s3 '.event == "net.connect"'
check "first-seen-domain: near miss (t1 again, from another session)" \
	none alert_for first-seen-domain s2 '.event == "net.connect"'

# ---- DoT: port 853; near miss: 443 ------------------------------------------------------
in_sess s1 socat -u TCP:198.18.1.2:853,connect-timeout=3 - >/dev/null
wait_ev 10 '.event == "net.connect" and .dst.port == 853'
check "doh-dot-attempt: positive (port 853)" wait_for alert 10 \
	alert_for doh-dot-attempt s1 '.event == "net.connect" and .dst.port == 853'
check "doh-dot-attempt: near miss (443)" \
	none alert_for doh-dot-attempt s1 '.event == "net.connect" and .dst.port == 443'

# ---- exfiltration: a secret read, then a connection from the same shell ----------------
in_sess s2 sh -c "cat '$H/.ssh/id_ed25519' >/dev/null; sleep 0.3; curl -sk -o /dev/null --max-time 5 https://www.web.test/exfil-pos --resolve www.web.test:443:198.18.1.2"
check "exfiltration-shape: positive (read, then connect from the same shell)" wait_for alert 10 \
	alert_for exfiltration-shape s2 '.event == "file.read"'
in_sess s3 cat "$H/.ssh/id_ed25519" >/dev/null
in_sess s3 sh -c 'sleep 0.3; curl -sk -o /dev/null --max-time 5 https://www.web.test/ --resolve www.web.test:443:198.18.1.2'
wait_ev 10 '.event == "net.connect" and .session_id == "s3" and .sni == "www.web.test"'
sleep 1
check "exfiltration-shape: near miss (read and connect in unrelated processes)" \
	none alert_for exfiltration-shape s3 '.event == "file.read"'

# ---- /metrics ----------------------------------------------------------------------------
m=$(curl -s --max-time 5 "http://127.0.0.1:$METRICS_PORT/metrics")
check "/metrics counts alerts per rule" grep -q 'sandgate_detect_alerts_total{rule="first-seen-domain",severity="low"} [1-9]' <<<"$m"
check "/metrics counts lines evaluated" grep -q '^sandgate_detect_lines_total [1-9]' <<<"$m"
# Parse once: the live lines reach detection and the index with the writer's shape of
# them (journal/handoff.h), none refused; their JSON is not parsed again.
check "detection took live lines from their shapes" grep -q '^sandgate_detect_lines_shaped_total [1-9]' <<<"$m"
check "no shape refused by detection" grep -q '^sandgate_detect_shapes_refused_total 0$' <<<"$m"
check "the index took live lines from their shapes" grep -q '^sandgate_index_lines_shaped_total [1-9]' <<<"$m"
echo "# $(grep -E '^sandgate_(detect_lines|detect_shapes|index_lines)' <<<"$m" | tr '\n' ' ')"

stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
check "first-seen domains persisted" grep -q "t1	api.web.test" "$SG_STATE/detect/domains.txt"
finish
