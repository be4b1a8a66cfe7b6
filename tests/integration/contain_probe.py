#!/usr/bin/env python3
"""Probes for t_contain_*.sh: one attempt an agent would make, or the lab's receiver.

  probe.py packet IFNAME MARKER        send one Ethernet frame (ethertype 0x88b5)
  probe.py icmp6 DST MARKER            send a raw ICMPv6 neighbour solicitation, 64 bytes data
  probe.py ptrace PID                  PTRACE_ATTACH, wait, detach
  probe.py userns_unshare|userns_clone|userns_clone3
                                       a new user namespace by that call (x86_64 numbers;
                                       the clone children _exit at once)
  probe.py recv_packet IFNAME MARKER SECS READY   count frames carrying MARKER
  probe.py recv_icmp6 MARKER SECS READY          count ICMPv6 packets carrying MARKER
                                       (READY is created once the socket is bound;
                                       SIGTERM or SECS ends it, printing the count)
  probe.py serve PORT                  accept one connection on 0.0.0.0:PORT, send "sgc-8080\\n"

An attempt prints "OK what" and exits 0, or "DENIED what: reason" and exits 3.
"""
import ctypes
import os
import signal
import socket
import struct
import sys
import time


def attempt(what, args):
    if what == "packet":
        ifname, marker = args[0], args[1].encode()
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((ifname, 0))
        frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + marker.ljust(64, b".")
        s.send(frame)
    elif what == "icmp6":
        dst, marker = args[0], args[1].encode()
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 255)
        body = struct.pack("!BBHI", 135, 0, 0, 0) + socket.inet_pton(socket.AF_INET6, dst)
        s.sendto(body + marker.ljust(64, b"."), (dst, 0))
    elif what == "ptrace":
        libc = ctypes.CDLL(None, use_errno=True)
        pid = int(args[0])
        if libc.ptrace(16, pid, None, None) != 0:  # PTRACE_ATTACH
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        os.waitpid(pid, 0x40000000)  # __WALL
        libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
    elif what.startswith("userns_"):
        userns(what[7:])
    else:
        raise SystemExit("unknown probe " + what)


def userns(how):
    CLONE_NEWUSER, SIGCHLD = 0x10000000, 17
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if how == "unshare":
        r = libc.syscall(272, CLONE_NEWUSER)
    elif how == "clone":
        r = libc.syscall(56, ctypes.c_ulong(CLONE_NEWUSER | SIGCHLD), None, None, None, None)
    else:
        # struct clone_args: flags, pidfd, child_tid, parent_tid, exit_signal, stack, ...
        args = struct.pack("=11Q", CLONE_NEWUSER, 0, 0, 0, SIGCHLD, 0, 0, 0, 0, 0, 0)
        buf = ctypes.create_string_buffer(args, len(args))
        r = libc.syscall(435, buf, ctypes.c_size_t(len(args)))
    if r < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    if r == 0 and how != "unshare":
        os._exit(0)  # the child, in its new user namespace
    if how != "unshare":
        os.waitpid(r, 0)


def receive(what, args):
    marker = args[-3].encode()
    if what == "recv_packet":
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        s.bind((args[0], 0))
    else:
        s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    s.settimeout(0.1)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    open(args[-1], "w").close()
    end = time.time() + float(args[-2])
    n = 0
    while time.time() < end and not stop:
        try:
            if marker in s.recv(65535):
                n += 1
        except socket.timeout:
            pass
    print(n)


def serve(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(1)
    print("listening", flush=True)
    s.settimeout(10)
    c, _ = s.accept()
    c.sendall(b"sgc-8080\n")
    c.close()


def main():
    what, args = sys.argv[1], sys.argv[2:]
    if what.startswith("recv_"):
        receive(what, args)
        return 0
    if what == "serve":
        serve(int(args[0]))
        return 0
    try:
        attempt(what, args)
    except OSError as e:
        print("DENIED %s: %s" % (what, e.strerror))
        return 3
    print("OK " + what)
    return 0


if __name__ == "__main__":
    sys.exit(main())
