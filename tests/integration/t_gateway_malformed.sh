#!/usr/bin/env bash
# Malformed packets from a session: truncated DNS, a compression loop, absurd label
# lengths, a zero-length and a garbage DNS-over-TCP message, a garbage ClientHello, junk
# to UDP/443. Each is logged as malformed; the daemon neither crashes nor stalls, and
# good traffic right after is handled.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

gw_config "$T_TMP/c.yaml"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
sg session create --id s1 >/dev/null && sg session start s1 >/dev/null
in_sess s1 sleep infinity &
cleanup "kill $!"
wait_for "session process" 5 grep -q . "$CG2/$SG_PARENT/s1/cgroup.procs"

cat >"$T_TMP/bad.py" <<'PY'
import socket, struct, time
R = ("198.18.1.2", 53)
hdr = lambda qd: struct.pack(">HHHHHH", 0x1234, 0x0100, qd, 0, 0, 0)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for p in (hdr(1),                                        # truncated: a question promised
          hdr(1) + b"\xc0\x0c\x00\x01\x00\x01",          # compression pointer to itself
          hdr(1) + b"\x3fabc",                           # label length past the end
          b"\x12"):                                       # not even a header
    udp.sendto(p, R)
udp.sendto(b"\xc3\x00\x00\x00\x01\x08" + b"\xff" * 40, ("198.18.1.2", 443))   # junk QUIC
def tcp(dst, data):
    s = socket.create_connection(dst, timeout=2)
    s.sendall(data)
    time.sleep(0.3)
    s.close()
tcp(R, b"\x00\x00" + b"\x00\x04\xff\xff\xff\xff")        # zero-length, then garbage
# A zero-length handshake record, then a hello that claims more than it holds.
tcp(("198.18.1.2", 443), b"\x16\x03\x01\x00\x00\x16\x03\x01\x00\x04\x01\x00\x00\xff")
PY
in_sess s1 python3 "$T_TMP/bad.py"
check "sender finished" test $? -eq 0
wait_ev 5 '.event == "net.dns" and .status == "malformed" and .transport == "tcp"'
# dnsmasq may answer some of them with a FORMERR as broken as the query: also logged.
n=$(evq '.event == "net.dns" and .status == "malformed" and .transport == "udp" and .session_id == "s1"' | wc -l)
check "4 malformed DNS queries over UDP logged (got $n)" test "$n" -ge 4
e=$(evq '.event == "net.dns" and .status == "malformed" and .transport == "udp"' | head -1)
echeck "malformed net.dns: fields" "$e" '.reason == "malformed" and .qname == null and
	.qtype == null and .rcode == null and .answers == [] and .resolver == "198.18.1.2:53"'
n=$(evq '.event == "net.dns" and .status == "malformed" and .transport == "tcp"' | wc -l)
check "zero-length and garbage DNS over TCP logged (got $n)" test "$n" -ge 2
wait_ev 5 '.event == "net.connect" and .dst.port == 443 and .proto == "tcp"'
e=$(evq '.event == "net.connect" and .dst.port == 443 and .proto == "tcp"' | head -1)
echeck "garbage ClientHello: net.connect says malformed" "$e" '.parse == "tls_malformed" and .reason == "malformed" and .sni == null'
e=$(evq '.event == "net.connect" and .dst.port == 443 and .proto == "udp"' | head -1)
echeck "junk to UDP/443 logged with its parse result" "$e" '.session_id == "s1" and (.parse | test("quic|udp"))'
check "daemon alive" kill -0 "$DPID"
check "daemon answers its socket" sh -c "'$BIN/sandgate' session show s1 --control '$SG_SOCK' >/dev/null"
out=$(in_sess s1 dig +short +time=2 +tries=1 @198.18.1.2 after.web.test A)
check "good DNS right after is answered" test "$out" = 198.18.1.2
wait_ev 5 '.event == "net.dns" and .qname == "after.web.test" and .status == "answered"'
check "... and logged" test -n "$(evq '.event == "net.dns" and .qname == "after.web.test"')"
check "daemon exits 0 at SIGTERM" stop_daemon
finish
