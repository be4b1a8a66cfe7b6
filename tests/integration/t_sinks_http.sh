#!/usr/bin/env bash
# HTTP sinks with libcurl: Splunk HEC and OTLP/HTTP logs (JSON) against a receiver that
# checks the wire format (tests/integration/http_receiver.py) in a lab namespace
# (198.18.7.4/30, removed at exit). While the receiver answers 503 (an outage) the sinks
# back off and retry; afterwards every seq has arrived, once per sink (a 2xx is the ack).
. "$(dirname "$0")/lib.sh"
require_root

NS=sghttp$$
VH=sgh$$h
VN=sgh$$n
RX=$T_TMP/rx
mkdir -p "$RX"
ip netns add "$NS"
cleanup "ip netns del $NS"
ip link add "$VH" type veth peer name "$VN"
cleanup "ip link del $VH"
ip link set "$VN" netns "$NS"
ip addr add 198.18.7.5/30 dev "$VH"
ip link set "$VH" up
ip -n "$NS" addr add 198.18.7.6/30 dev "$VN"
ip -n "$NS" link set "$VN" up
ip -n "$NS" link set lo up

ip netns exec "$NS" python3 "$SRC/tests/integration/http_receiver.py" 198.18.7.6 8088 "$RX" \
	tok-123 >"$RX/out.log" 2>&1 &
cleanup "kill $!"
check "the receiver listens in the lab namespace" \
	wait_for "receiver" 10 bash -c "ip netns exec $NS ss -ltn | grep -q 198.18.7.6:8088"

CONF=$T_TMP/conf.yaml
cat >"$CONF" <<YAML
gateway: {enabled: false}
journal:
  heartbeat_interval: 100ms
  checkpoint_interval: 50ms
sinks:
  - name: splunk
    kind: hec
    url: http://198.18.7.6:8088/services/collector/event
    token: tok-123
    retry_min: 50ms
    retry_max: 400ms
  - name: otel
    kind: otlp_http
    url: http://198.18.7.6:8088/v1/logs
    retry_min: 50ms
    retry_max: 400ms
YAML

count() { [ -f "$1" ] && grep -c . "$1" || echo 0; }
at_least() { [ "$(count "$1")" -ge "$2" ]; }
max_seq() { jq -r .seq "$1" | sort -n | tail -n1; }
past() { [ -f "$1" ] && [ "$(max_seq "$1")" -ge "$2" ]; }

check "the config is valid" "$BIN/sandgated" --check-config "$CONF"
start_daemon d1 --config "$CONF" || exit 1
check "HEC receives events" wait_for "hec" 30 at_least "$RX/hec.jsonl" 20
check "OTLP receives log records" wait_for "otlp" 30 at_least "$RX/otlp.jsonl" 20
touch "$RX/fail"
sleep 1.5   # the receiver answers 503 for a while (not an outcome check)
rm -f "$RX/fail"
target=$(($(cat "$SG_STATE"/journal/*.jsonl | wc -l) + 5))
check "after the outage HEC catches up" wait_for "hec catch-up" 30 past "$RX/hec.jsonl" "$target"
check "after the outage OTLP catches up" wait_for "otlp catch-up" 30 past "$RX/otlp.jsonl" "$target"
check "the daemon exits 0 at SIGTERM" stop_daemon

check "no request broke the wire format" test ! -s "$RX/bad.log"
check "the outage was seen (the 503s were logged once, then retried)" \
	grep -q "sink splunk: delivery failed" "$T_TMP/d1.log"
for f in hec otlp; do
	max=$(max_seq "$RX/$f.jsonl")
	distinct=$(jq -r .seq "$RX/$f.jsonl" | sort -un | wc -l)
	total=$(count "$RX/$f.jsonl")
	check "$f: every seq 0..$max arrived ($total records)" test "$distinct" -eq $((max + 1))
	check "$f: acknowledged batches are not sent again" test "$total" -eq "$distinct"
done
n=$(count "$RX/otlp.jsonl")
check "OTLP bodies are the journal lines byte for byte" \
	test "$(cat "$RX/otlp.jsonl")" = "$(cat "$SG_STATE"/journal/*.jsonl | head -n "$n")"
n=$(count "$RX/hec.jsonl")
check "HEC events are the journal events" \
	test "$(cat "$RX/hec.jsonl")" = "$(cat "$SG_STATE"/journal/*.jsonl | head -n "$n" | jq -c -S .)"
finish
