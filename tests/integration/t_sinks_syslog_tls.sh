#!/usr/bin/env bash
# A syslog_tls sink (RFC 5425: RFC 5424 messages, octet counted, in a TLS session)
# delivers to a real rsyslog (imtcp with the gtls driver, client certificates required
# and checked by name) in a network namespace the test creates (198.18.7.8/30, removed at
# exit); the certificates are made here with openssl. Every MSG is a journal line byte
# for byte; killing rsyslog mid-stream and bringing it back loses nothing and the
# duplicates stay bounded. A sink that does not trust the receiver's CA sends nothing.
. "$(dirname "$0")/lib.sh"
require_root
for p in rsyslogd openssl; do
	command -v $p >/dev/null || { echo "$p missing (scripts/install-deps.sh)"; echo "0 passed, 1 failed"; exit 1; }
done
[ -e /usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_gtls.so ] || ls /usr/lib/*/rsyslog/lmnsd_gtls.so >/dev/null 2>&1 ||
	{ echo "rsyslog-gnutls missing (scripts/install-deps.sh)"; echo "0 passed, 1 failed"; exit 1; }

NS=sgtls$$
VH=sgt$$h
VN=sgt$$n
RS=$T_TMP/rsyslog
C=$T_TMP/certs
mkdir -p "$RS/work" "$C"
ip netns add "$NS"
cleanup "ip netns del $NS"
ip link add "$VH" type veth peer name "$VN"
cleanup "ip link del $VH"
ip link set "$VN" netns "$NS"
ip addr add 198.18.7.9/30 dev "$VH"
ip link set "$VH" up
ip -n "$NS" addr add 198.18.7.10/30 dev "$VN"
ip -n "$NS" link set "$VN" up
ip -n "$NS" link set lo up

# ca NAME: a self-signed CA. leaf NAME CA CN SAN: a certificate signed by CA.
ca() { openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=$1" -keyout "$C/$1.key" -out "$C/$1.pem" 2>/dev/null; }
leaf() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$3" \
		-keyout "$C/$1.key" -out "$C/$1.csr" 2>/dev/null &&
	printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$4" >"$C/$1.ext" &&
	openssl x509 -req -in "$C/$1.csr" -CA "$C/$2.pem" -CAkey "$C/$2.key" -CAcreateserial \
		-days 2 -extfile "$C/$1.ext" -out "$C/$1.pem" 2>/dev/null
}
check "the test's CAs and certificates are made" bash -c "$(declare -f ca leaf); C=$C; \
	ca labca && ca rogueca && leaf server labca rsyslog.lab.test 'DNS:rsyslog.lab.test,IP:198.18.7.10' && \
	leaf client labca sandgate.lab.test DNS:sandgate.lab.test"
chmod 0644 "$C"/*

cat >"$RS/rsyslog.conf" <<CONF
global(workDirectory="$RS/work" maxMessageSize="64k"
       defaultNetstreamDriver="gtls"
       defaultNetstreamDriverCAFile="$C/labca.pem"
       defaultNetstreamDriverCertFile="$C/server.pem"
       defaultNetstreamDriverKeyFile="$C/server.key")
module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1"
       streamDriver.authMode="x509/name" permittedPeer=["sandgate.lab.test"])
input(type="imtcp" address="198.18.7.10" port="6514")
template(name="line" type="string" string="%msg%\n")
template(name="head" type="string" string="%hostname% %app-name% %procid% %msgid% %structured-data% %timereported:::date-rfc3339%\n")
*.* action(type="omfile" file="$RS/recv.log" template="line")
*.* action(type="omfile" file="$RS/head.log" template="head")
CONF

RSPID=
start_rsyslog() {
	ip netns exec "$NS" rsyslogd -n -f "$RS/rsyslog.conf" -i "$RS/pid" >>"$RS/out.log" 2>&1 &
	RSPID=$!
	cleanup "kill -9 $RSPID"
	wait_for "rsyslog listening" 10 bash -c "ip netns exec $NS ss -ltn | grep -q 198.18.7.10:6514"
}
check "rsyslog (gtls, client certificates by name) starts in the lab namespace" start_rsyslog

CONF=$T_TMP/conf.yaml
cat >"$CONF" <<YAML
gateway: {enabled: false}
journal:
  heartbeat_interval: 100ms
  checkpoint_interval: 50ms
sinks:
  - name: siem
    kind: syslog_tls
    address: 198.18.7.10:6514
    server_name: rsyslog.lab.test
    ca_file: $C/labca.pem
    cert_file: $C/client.pem
    key_file: $C/client.key
    retry_min: 50ms
    retry_max: 500ms
  - name: rogue
    kind: syslog_tls
    address: 198.18.7.10:6514
    ca_file: $C/rogueca.pem
    cert_file: $C/client.pem
    key_file: $C/client.key
    retry_min: 50ms
    retry_max: 500ms
YAML

recv_max() { jq -r .seq "$RS/recv.log" 2>/dev/null | sort -n | tail -n1; }
received_at_least() { [ "$(grep -c . "$RS/recv.log" 2>/dev/null || echo 0)" -ge "$1" ]; }
has_seq() { [ "$(recv_max)" != "" ] && [ "$(recv_max)" -ge "$1" ]; }

start_daemon d1 --config "$CONF" || exit 1
check "rsyslog receives the journal over TLS" wait_for "30 messages" 30 received_at_least 30
ok=1
while IFS= read -r l; do
	grep -qxF -- "$l" <(cat "$SG_STATE"/journal/*.jsonl) || { ok=0; break; }
done < <(head -n 20 "$RS/recv.log")
check "each MSG is a journal line byte for byte" test $ok -eq 1
check "HOSTNAME, APP-NAME, PROCID, MSGID (= event) parsed by rsyslog" \
	grep -qE '^[^ ]+ sandgate - daemon\.start - 20[0-9-]+T' "$RS/head.log"
check "checkpoints are forwarded" grep -q '"event":"journal.checkpoint"' "$RS/recv.log"
check "a sink that does not trust the receiver's CA refuses it, and says why" \
	grep -q 'sink rogue: delivery failed: TLS handshake: certificate verify failed' "$T_TMP/d1.log"

kill -9 "$RSPID"
wait "$RSPID" 2>/dev/null
sleep 2   # the receiver stays down while the journal grows (not an outcome check)
check "rsyslog comes back" start_rsyslog
target=$(($(cat "$SG_STATE"/journal/*.jsonl | wc -l) + 5))
check "the sink reconnects (new TLS session) and catches up past the outage" \
	wait_for "seq $target" 60 has_seq "$target"
check "the daemon exits 0 at SIGTERM" stop_daemon

max=$(recv_max)
distinct=$(jq -r .seq "$RS/recv.log" | sort -un | wc -l)
total=$(grep -c . "$RS/recv.log")
echo "received $total messages, $distinct distinct seqs 0..$max"
check "zero loss: every seq 0..$max arrived" test "$distinct" -eq $((max + 1))
check "duplicates are bounded ($((total - distinct)) <= 400), the rogue sink sent none" \
	test $((total - distinct)) -le 400
# A new sink writes its cursor at once (retention waits for it from the start); the
# rogue's still says "next seq 0": it delivered nothing.
check "the rogue sink never got past the journal's start" \
	sh -c '[ ! -e "$1" ] || [ "$(cut -d" " -f1 "$1")" = 0 ]' _ "$SG_STATE/sinks/rogue.cursor"
finish
