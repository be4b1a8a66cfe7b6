#!/usr/bin/env bash
# Fleet shipping with real peers: two hosts (two sandgated, host names of their own)
# ship their journals over RFC 5425 (syslog over TLS, client certificates checked by
# name) to a central rsyslog in a namespace this test creates, which writes one file per
# host (dynaFile on HOSTNAME) laid out as a journal directory. `sandgate verify` on each
# central copy against that host's verifier key passes (lines and signed checkpoints);
# a line deleted or edited in the central copy is detected and named; a copy checked
# with the other host's key is refused. docs/shipping.md.
. "$(dirname "$0")/lib.sh"
require_root
. "$(dirname "$0")/session_helpers.sh"
for p in rsyslogd openssl; do
	command -v $p >/dev/null || { echo "$p missing (scripts/install-deps.sh)"; echo "0 passed, 1 failed"; exit 1; }
done
ls /usr/lib/*/rsyslog/lmnsd_gtls.so >/dev/null 2>&1 ||
	{ echo "rsyslog-gnutls missing (scripts/install-deps.sh)"; echo "0 passed, 1 failed"; exit 1; }

NS=sgfl$$
VH=sgf$$h
VN=sgf$$n
RS=$T_TMP/central
C=$T_TMP/certs
mkdir -p "$RS/work" "$RS/hosts" "$C"
ip netns add "$NS"
cleanup "ip netns del $NS"
ip link add "$VH" type veth peer name "$VN"
cleanup "ip link del $VH"
ip link set "$VN" netns "$NS"
ip addr add 198.18.7.13/30 dev "$VH"
ip link set "$VH" up
ip -n "$NS" addr add 198.18.7.14/30 dev "$VN"
ip -n "$NS" link set "$VN" up
ip -n "$NS" link set lo up

ca() { openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=$1" -keyout "$C/$1.key" -out "$C/$1.pem" 2>/dev/null; }
leaf() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$3" \
		-keyout "$C/$1.key" -out "$C/$1.csr" 2>/dev/null &&
	printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$4" >"$C/$1.ext" &&
	openssl x509 -req -in "$C/$1.csr" -CA "$C/$2.pem" -CAkey "$C/$2.key" -CAcreateserial \
		-days 2 -extfile "$C/$1.ext" -out "$C/$1.pem" 2>/dev/null
}
check "the fleet's CA and certificates are made" bash -c "$(declare -f ca leaf); C=$C; \
	ca fleetca && leaf server fleetca central.lab.test 'DNS:central.lab.test,IP:198.18.7.14' && \
	leaf client fleetca sandgate.lab.test DNS:sandgate.lab.test"
chmod 0644 "$C"/*

# The central rsyslog: one file per sending host, named as a journal segment.
cat >"$RS/rsyslog.conf" <<CONF
global(workDirectory="$RS/work" maxMessageSize="256k"
       defaultNetstreamDriver="gtls"
       defaultNetstreamDriverCAFile="$C/fleetca.pem"
       defaultNetstreamDriverCertFile="$C/server.pem"
       defaultNetstreamDriverKeyFile="$C/server.key")
module(load="imtcp" streamDriver.name="gtls" streamDriver.mode="1"
       streamDriver.authMode="x509/name" permittedPeer=["sandgate.lab.test"])
input(type="imtcp" address="198.18.7.14" port="6514")
template(name="line" type="string" string="%msg%\n")
template(name="perhost" type="string" string="$RS/hosts/%hostname%/00000000000000000000.jsonl")
*.* action(type="omfile" dynaFile="perhost" template="line" createDirs="on" dirCreateMode="0700")
CONF
ip netns exec "$NS" rsyslogd -n -f "$RS/rsyslog.conf" -i "$RS/pid" >>"$RS/out.log" 2>&1 &
RSPID=$!
cleanup "kill -9 $RSPID"
check "the central rsyslog listens (gtls, client certificates by name)" \
	wait_for "rsyslog" 10 bash -c "ip netns exec $NS ss -ltn | grep -q 198.18.7.14:6514"

host_conf() { # host_conf FILE HOST
	write_config "$1" "gateway: {enabled: false}
host: $2
journal:
  heartbeat_interval: 200ms
  checkpoint_interval: 100ms
metrics_listen: null
sinks:
  - name: central
    kind: syslog_tls
    address: 198.18.7.14:6514
    server_name: central.lab.test
    ca_file: $C/fleetca.pem
    cert_file: $C/client.pem
    key_file: $C/client.key
    retry_min: 50ms
    retry_max: 500ms"
}
HA=fleet-a-$$
HB=fleet-b-$$
host_conf "$T_TMP/a.yaml" "$HA"
host_conf "$T_TMP/b.yaml" "$HB"
start_daemon ha --config "$T_TMP/a.yaml" || { fail "host a starts"; finish; }
SA=$SG_STATE SOCKA=$SG_SOCK PA=$DPID
start_daemon hb --config "$T_TMP/b.yaml" || { fail "host b starts"; finish; }
SB=$SG_STATE SOCKB=$SG_SOCK PB=$DPID
for h in A B; do
	eval "sock=\$SOCK$h"
	for i in 1 2 3; do
		"$BIN/sandgate" session create --id "f$h$i" --tenant fleet --control "$sock" >/dev/null
		"$BIN/sandgate" session terminate "f$h$i" --control "$sock" >/dev/null
		"$BIN/sandgate" session cleanup "f$h$i" --control "$sock" >/dev/null
	done
done
last() { journal_lines "$1" | tail -n1 | jq -r .seq; }
arrived() { [ -s "$1" ] && [ "$(tail -n1 "$1" | jq -r .seq 2>/dev/null)" -ge "$2" ] 2>/dev/null; }
ta=$(last "$SA") tb=$(last "$SB")
check "host a's journal reaches the central (through seq $ta)" \
	wait_for "a" 30 arrived "$RS/hosts/$HA/00000000000000000000.jsonl" "$ta"
check "host b's journal reaches the central (through seq $tb)" \
	wait_for "b" 30 arrived "$RS/hosts/$HB/00000000000000000000.jsonl" "$tb"
# What a daemon writes while it stops reaches the central at its next start (the sink's
# cursor is durable): stop both, then check what arrived.
kill -TERM "$PA" "$PB"; wait "$PA"; wait "$PB"
check "one file per host" test "$(ls "$RS/hosts" | wc -l)" -eq 2
na=$(grep -c . "$RS/hosts/$HA/00000000000000000000.jsonl")
check "the central copy of a ($na lines) is its journal's first lines, byte for byte" \
	cmp -s <(head -n "$na" "$SA"/journal/*.jsonl) "$RS/hosts/$HA/00000000000000000000.jsonl"
check "the central copy holds signed checkpoints" \
	grep -q '"event":"journal.checkpoint"' "$RS/hosts/$HB/00000000000000000000.jsonl"

# The SIEM holds each host's verifier key (pinned, not read from the copy).
cp "$SA/keys/journal.pub" "$T_TMP/a.pub"
cp "$SB/keys/journal.pub" "$T_TMP/b.pub"
out=$("$BIN/sandgate" verify --key "$T_TMP/a.pub" "$RS/hosts/$HA" 2>&1)
check "sandgate verify on the central copy of a, with a's key: passes ($out)" test $? -eq 0
out=$("$BIN/sandgate" verify --key "$T_TMP/b.pub" "$RS/hosts/$HB" 2>&1)
check "... and of b with b's key" test $? -eq 0
out=$("$BIN/sandgate" verify --key "$T_TMP/b.pub" "$RS/hosts/$HA" 2>&1)
check "a's copy with b's key is refused ($out)" sh -c "test $? -ne 0 && echo '$out' | grep -q 'unknown_key\|bad_signature'"

# Damage in the central copy: a deleted line, an edited line.
F=00000000000000000000.jsonl
n=$(grep -c . "$RS/hosts/$HA/$F")
mid=$((n / 2))
mkdir -p "$T_TMP/del" "$T_TMP/edit"
sed "${mid}d" "$RS/hosts/$HA/$F" >"$T_TMP/del/$F"
out=$("$BIN/sandgate" verify --key "$T_TMP/a.pub" "$T_TMP/del" 2>&1)
rc=$?
echo "deleted line $mid (seq $((mid - 1))): $out"
check "a line deleted from the central copy: verify fails" test $rc -ne 0
check "... naming the deletion and its seq" grep -q "deleted.*$((mid - 1))\|$((mid - 1)).*deleted" <<<"$out"
# edit a session id in a lifecycle line (a value, not the chain's fields)
sed "0,/\"session_id\":\"fA2\"/s//\"session_id\":\"fA9\"/" "$RS/hosts/$HA/$F" >"$T_TMP/edit/$F"
eseq=$(grep -n '"session_id":"fA9"' "$T_TMP/edit/$F" | head -1 | cut -d: -f1)
out=$("$BIN/sandgate" verify --key "$T_TMP/a.pub" "$T_TMP/edit" 2>&1)
rc=$?
echo "edited line $eseq: $out"
check "a line edited in the central copy: verify fails" test $rc -ne 0 -a -n "$eseq"
check "... naming it modified" grep -q "modified" <<<"$out"
finish
