#!/usr/bin/env python3
"""Clients and a sink for t_gateway_evasion.sh (issue 14): the first-flight attacks a
hostile session tries on the gateway, with the standard library only.

  sink DIR PORT...            listen on ADDR:PORT (ADDR from $SINK_ADDR), append every
                              received byte to DIR/PORT.log, one file per port
  split HOST PORT SNI|-H NAME send a ClientHello (or HTTP head with -H) as 8 one-byte
                              segments and then the rest; print what came back
  hello HOST PORT SNI MODE    one ClientHello: MODE ok, two_sni, badlen
  mutate HOST PORT SNI N SEED N randomly mutated ClientHellos, one connection each
  tfo HOST PORT NAME          an HTTP request in the SYN (MSG_FASTOPEN)
  keepalive HOST PORT H1 H2   two requests on one connection, Host H1 then H2
  udp53 HOST PORT             a UDP datagram from port 53
  tcp53 HOST PORT             a TCP connection from port 53
  qd2 RESOLVER NAME1 NAME2    a DNS query with two questions; prints the rcode
  send HOST PORT TEXT         TEXT (Python escapes: \\r\\n) on a new connection
  reuse HOST PORT SNI1 SNI2 N
                              N times: a connection with SNI1, reset (SO_LINGER 0) once
                              it was let out, and at once a new one from the same source
                              port with SNI2; prints the second ones' outcomes
  finfirst HOST PORT SNI DHOST DPORT DRAIN
                              a ClientHello of about 900 bytes whose FIN reaches the
                              gateway first: DRAIN bytes of UDP to DHOST:DPORT empty the
                              session's --net-rate bucket just before, so the hello's
                              segment is dropped ahead of the queue and the 52-byte FIN
                              is not; TCP sends the hello again once the bucket refills
"""
import os
import random
import select
import socket
import struct
import sys
import time


def hello(sni, sni2=None, pad=0):
    """A TLS 1.2/1.3 ClientHello in one record, like a small curl hello; pad: the
    length of a padding extension (RFC 7685), as browsers add one."""
    names = [sni] + ([sni2] if sni2 else [])
    lst = b"".join(b"\x00" + struct.pack(">H", len(n)) + n.encode() for n in names)
    ext_sni = struct.pack(">HH", 0, len(lst) + 2) + struct.pack(">H", len(lst)) + lst
    alpn = b"\x00\x10" + struct.pack(">H", 11) + struct.pack(">H", 9) + b"\x08http/1.1"
    vers = b"\x00\x2b\x00\x05\x04\x03\x04\x03\x03"
    groups = b"\x00\x0a\x00\x04\x00\x02\x00\x1d"
    exts = ext_sni + alpn + vers + groups
    if pad:
        exts += struct.pack(">HH", 21, pad) + b"\x00" * pad
    body = b"\x03\x03" + os.urandom(32) + b"\x00" + b"\x00\x04\x13\x01\x13\x02" + b"\x01\x00"
    body += struct.pack(">H", len(exts)) + exts
    hs = b"\x01" + struct.pack(">I", len(body))[1:] + body
    return b"\x16\x03\x01" + struct.pack(">H", len(hs)) + hs


def http_head(host):
    return ("GET /x HTTP/1.1\r\nHost: %s\r\nUser-Agent: sg-test\r\n\r\n" % host).encode()


def conn(host, port, src_port=0, timeout=3.0):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if src_port:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("", src_port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.connect((host, port))
    return s


def outcome(s, wait=1.0):
    """What the server or the gateway said: data, reset, closed or nothing."""
    try:
        r, _, _ = select.select([s], [], [], wait)
        if not r:
            return "silent"
        d = s.recv(4096)
        return "data" if d else "closed"
    except ConnectionResetError:
        return "reset"
    except OSError as e:
        return "error:%s" % e.errno


def send_split(host, port, data):
    s = conn(host, port)
    try:
        for i in range(8):
            s.send(data[i:i + 1])
            time.sleep(0.005)   # all of it within the first RTO: see docs/gateway.md
        s.send(data[8:])
        print(outcome(s, 2.0))
    except OSError as e:
        print("error:%s" % e.errno)
    s.close()


def mutate(data, rnd):
    b = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(5)
        i = rnd.randrange(len(b))
        if op == 0:
            b[i] = rnd.randrange(256)
        elif op == 1:
            b[i] ^= 1 << rnd.randrange(8)
        elif op == 2 and len(b) > 10:
            del b[i:i + rnd.randint(1, 8)]
        elif op == 3:
            b[i:i] = os.urandom(rnd.randint(1, 8))
        else:   # a length field: the record's, the handshake's, an extension's
            j = rnd.choice([3, 4, 6, 7, 8, rnd.randrange(len(b))])
            if j < len(b):
                b[j] = (b[j] + rnd.choice([1, -1, 2, 0x80])) & 0xff
    return bytes(b)


def run_mutate(host, port, sni, n, seed):
    rnd = random.Random(seed)
    base = hello(sni)
    counts = {}
    for _ in range(n):
        m = mutate(base, rnd)
        try:
            s = conn(host, port, timeout=2.0)
            s.send(m)
            s.shutdown(socket.SHUT_WR)   # a flight that never completes ends here
            o = outcome(s, 0.5)
            s.close()
        except OSError as e:
            o = "error:%s" % e.errno
        counts[o] = counts.get(o, 0) + 1
    print(" ".join("%s=%d" % kv for kv in sorted(counts.items())))


def sink(d, ports):
    # epoll, not select(): the mutated hellos leave about 1,000 connections open here
    # (the gateway resets the client; the server never hears of it), and select() fails
    # on a descriptor past 1023, which ended the sink mid-test (later connections
    # refused by the upstream's kernel).
    import resource
    import selectors
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    addr = os.environ.get("SINK_ADDR", "0.0.0.0")
    sel = selectors.DefaultSelector()
    for p in ports:
        s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if os.environ.get("SINK_TFO"):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
        s.bind((addr, int(p)))
        s.listen(1024)
        sel.register(s, selectors.EVENT_READ, ("listen", p))
    while True:
        for key, _ in sel.select():
            kind, p = key.data
            s = key.fileobj
            if kind == "listen":
                c, _ = s.accept()
                sel.register(c, selectors.EVENT_READ, ("conn", p))
                continue
            try:
                d_ = s.recv(65536)
            except OSError:
                d_ = b""
            if not d_:
                sel.unregister(s)
                s.close()
                continue
            with open(os.path.join(d, "%s.log" % p), "ab") as f:
                f.write(d_)


def tfo(host, port, name):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3.0)
    try:
        s.sendto(http_head(name), socket.MSG_FASTOPEN, (host, port))
        print(outcome(s, 2.0))
    except OSError as e:
        print("error:%s" % e.errno)
    s.close()


def finfirst(host, port, sni, dhost, dport, drain):
    h = hello(sni, pad=800)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s = conn(host, port)
    try:
        u.sendto(b"d" * drain, (dhost, dport))
        s.send(h)
        s.shutdown(socket.SHUT_WR)
        print(outcome(s, 4.0))
    except OSError as e:
        print("error:%s" % e.errno)
    s.close()


def reuse(host, port, sni1, sni2, n):
    counts = {}
    for _ in range(n):
        try:
            a = conn(host, port)
            sport = a.getsockname()[1]
            a.send(hello(sni1))
            o1 = outcome(a, 0.3)   # "silent": let out (the sink answers nothing)
            a.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            a.close()               # RST: the tuple is free at once
            b = conn(host, port, src_port=sport)
            b.send(hello(sni2))
            o = "%s/%s" % (o1, outcome(b, 1.0))
            b.close()
        except OSError as e:
            o = "error:%s" % e.errno
        counts[o] = counts.get(o, 0) + 1
    print(" ".join("%s=%d" % kv for kv in sorted(counts.items())))


def keepalive(host, port, h1, h2):
    s = conn(host, port)
    try:
        s.send(http_head(h1))
        time.sleep(0.5)
        s.send(http_head(h2))
        print(outcome(s, 2.0))
    except OSError as e:
        print("error:%s" % e.errno)
    s.close()


def qd2(resolver, n1, n2):
    def qname(n):
        return b"".join(bytes([len(l)]) + l.encode() for l in n.split(".")) + b"\x00"
    q = struct.pack(">HHHHHH", 0x5147, 0x0100, 2, 0, 0, 0)
    q += qname(n1) + b"\x00\x01\x00\x01" + qname(n2) + b"\x00\x01\x00\x01"
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2.0)
    s.sendto(q, (resolver, 53))
    try:
        a = s.recv(4096)
        print("rcode=%d id=%d" % (a[3] & 0x0f, struct.unpack(">H", a[:2])[0]))
    except socket.timeout:
        print("timeout")


def bigtail(host, port, h1, h2, body):
    """A request to h1 with a body, then the tail of the body and a request to h2 in one
    send: with BIG TCP the last send leaves as one GSO packet longer than the queue's
    64 KiB copy range, the second request head in its part past the copy."""
    body = int(body)
    tail = 120000
    s = conn(host, port)
    try:
        s.sendall(("POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n"
                   % (h1, body)).encode() + b"a" * (body - tail))
        time.sleep(0.5)   # everything acknowledged: the last send goes out at once, whole
        s.sendall(b"b" * tail + http_head(h2))
        print(outcome(s, 3.0))
    except OSError as e:
        print("error:%s" % e.errno)
    s.close()


def main(a):
    cmd = a[0]
    if cmd == "sink":
        sink(a[1], a[2:])
    elif cmd == "split":
        data = http_head(a[4]) if a[3] == "-H" else hello(a[3])
        send_split(a[1], int(a[2]), data)
    elif cmd == "hello":
        h = hello(a[3], "b" + a[3] if a[4] == "two_sni" else None)
        if a[4] == "badlen":
            h = h[:8] + bytes([(h[8] + 7) & 0xff]) + h[9:]
        s = conn(a[1], int(a[2]))
        s.send(h)
        print(outcome(s, 2.0))
    elif cmd == "mutate":
        run_mutate(a[1], int(a[2]), a[3], int(a[4]), int(a[5]))
    elif cmd == "tfo":
        tfo(a[1], int(a[2]), a[3])
    elif cmd == "reuse":
        reuse(a[1], int(a[2]), a[3], a[4], int(a[5]))
    elif cmd == "finfirst":
        finfirst(a[1], int(a[2]), a[3], a[4], int(a[5]), int(a[6]))
    elif cmd == "keepalive":
        keepalive(a[1], int(a[2]), a[3], a[4])
    elif cmd == "bigtail":
        bigtail(a[1], int(a[2]), a[3], a[4], a[5])
    elif cmd == "udp53":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("", 53))
        s.sendto(b"covert-udp-from-53", (a[1], int(a[2])))
        print("sent")
    elif cmd == "tcp53":
        try:
            s = conn(a[1], int(a[2]), src_port=53)
            s.send(b"covert-tcp-from-53")
            print(outcome(s, 1.0))
        except OSError as e:
            print("error:%s" % e.errno)
    elif cmd == "qd2":
        qd2(a[1], a[2], a[3])
    elif cmd == "send":
        s = conn(a[1], int(a[2]))
        s.send(a[3].encode().decode("unicode_escape").encode("latin-1"))
        print(outcome(s, 2.0))


if __name__ == "__main__":
    main(sys.argv[1:])
