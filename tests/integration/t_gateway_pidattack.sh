#!/usr/bin/env bash
# A hostile session against the gateway's pid lookup and its per-worker cache
# (gateway/sockpid.h): every net.connect / net.dns must name a process of the packet's
# own session that holds the socket when the packet is looked up, or no pid at all.
# Attacks, each with its control (the pids involved are different numbers, and the
# first event of each names the first holder, so a stale or foreign answer is visible):
#   1 socket passing (SCM_RIGHTS) inside a session: the receiver is named, or while
#     both hold it a current holder, and the receiver once the sender has exited
#   2 the same descriptor number reused by another process of the session, by the
#     same process, and the cached holder alive but holding another socket there
#   3 pid reuse within the cache's 5 s: a new process of the session with the dead
#     holder's pid, exec'd, is named; a process of ANOTHER session with that pid that
#     holds the dead holder's socket (or a new socket of its session) is not
#   4 an s1 socket passed to an s2 process through a unix socket in a shared directory:
#     the packet is s1's (its socket's cgroup), and no s2 pid is named for it
# Run as root in the session (s1, s2) and as uid 65534 (s3, s4). One queue: every
# packet goes through one worker, so through one cache.
#
# The session's own pid namespace has its own ns_last_pid, read-only there (/proc/sys)
# and only for the session's own numbers; the gateway names host pids. An agent reuses
# a host pid by forking until the host's counter wraps (pid_max forks); this test,
# root on the host, sets the host's ns_last_pid instead, as if that wrap had happened,
# and the time an in-session fork loop takes for it is measured and printed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

write_config "$T_TMP/c.yaml" "metrics_listen: null
gateway:
  enabled: true
  netns: $GWNS
  queues: 1
  enforce: false"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack

# A directory every session process (root or 65534) can use: the actors' listening
# sockets, the script. $T_TMP itself stays unreadable to others.
D=$T_TMP/pa
chmod 0711 "$T_TMP"
mkdir -m 1777 "$D"

cat >"$D/pa.py" <<'PY'
"""Actors in sessions and the host orchestrator that drives them (t_gateway_pidattack).

  serve PATH        in a session: each connection to the unix socket PATH forks an actor,
                    a new process of the session that runs the commands it is sent
  actor FD M NAMES  an actor after exec (M: a marker in its argv), resuming on FD
  forkrate N        N fork+exit+wait in a loop: forks per second (in a session)
  attack ...        on the host: the attacks; prints CHECK/FACT/SKIP/INFO lines
"""
import json
import os
import signal
import socket
import struct
import sys
import time

PEER = "198.18.1.2"
LOCAL = "198.18.1.1"


def query(qname, i=0x4242):
    body = struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0)
    for label in qname.split("."):
        body += bytes([len(label)]) + label.encode()
    return body + b"\x00\x00\x01\x00\x01"


# ---- actor: a session process running commands (one JSON line each, one reply) ----------
def actor(conn, socks):
    f = conn.makefile("r")
    lst = None
    for line in f:
        cmd = json.loads(line)
        op, name = cmd["op"], cmd.get("name")
        rep = {"ok": True}
        try:
            if op == "who":   # the host orchestrator reads our host pid (SO_PEERCRED)
                w = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                w.connect(cmd["path"])
                w.recv(1)
                w.close()
            elif op == "tcp":
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((LOCAL, cmd["port"]))
                socks[name] = s
                rep["fd"] = s.fileno()
            elif op == "udp":
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind((LOCAL, 0))
                socks[name] = s
                rep["fd"] = s.fileno()
            elif op == "connect":   # and a request: the flow is decided at its Host
                socks[name].settimeout(5)
                socks[name].connect((PEER, 80))
                socks[name].sendall(b"HEAD / HTTP/1.1\r\nHost: pa.web.test\r\n\r\n")
            elif op == "dns":
                s = socks[name]
                s.settimeout(3)
                s.sendto(query(cmd["q"]), (PEER, 53))
                got = s.recv(512)
                rep["answered"] = len(got) > 3 and got[3] & 0x0F == 0
            elif op == "close":
                socks.pop(name).close()
            elif op == "dup2":   # the socket moves to descriptor fd
                s = socks[name]
                if s.fileno() != cmd["fd"]:
                    try:   # never clobber a descriptor in use (our own connection)
                        os.fstat(cmd["fd"])
                        raise RuntimeError(f"fd {cmd['fd']} is in use")
                    except OSError:
                        pass
                    os.dup2(s.fileno(), cmd["fd"], inheritable=False)
                    s.close()
                    socks[name] = socket.socket(fileno=cmd["fd"])
                rep["fd"] = socks[name].fileno()
            elif op == "listen":
                lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                lst.bind(cmd["path"])
                os.chmod(cmd["path"], 0o777)   # a process of another uid may connect
                lst.listen(4)
            elif op == "give":   # SCM_RIGHTS to whoever listens at path; we keep ours
                u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                u.connect(cmd["path"])
                socket.send_fds(u, [b"x"], [socks[name].fileno()])
                u.close()
            elif op == "take":
                c, _ = lst.accept()
                _, fds, _, _ = socket.recv_fds(c, 1, 1)
                c.close()
                socks[name] = socket.socket(fileno=fds[0])
                rep["fd"] = fds[0]
            elif op == "fds":
                rep["fds"] = {k: s.fileno() for k, s in socks.items()}
            elif op == "exec":   # the same process, a new image: its exec is audited
                conn.set_inheritable(True)
                for s in socks.values():
                    s.set_inheritable(True)
                names = json.dumps({k: s.fileno() for k, s in socks.items()})
                os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), "actor",
                                          str(conn.fileno()), cmd["marker"], names])
            elif op == "exit":
                os._exit(0)
        except Exception as ex:  # reported, the orchestrator decides
            rep = {"ok": False, "err": repr(ex)}
        conn.sendall((json.dumps(rep) + "\n").encode())


def serve(path):
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # exited actors are reaped at once
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lst.bind(path)
    os.chmod(path, 0o777)
    lst.listen(16)
    while True:
        c, _ = lst.accept()
        if os.fork() == 0:
            lst.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            actor(c, {})
            os._exit(0)
        c.close()


def resume(fd, names):
    conn = socket.socket(fileno=fd)
    socks = {k: socket.socket(fileno=v) for k, v in json.loads(names).items()}
    conn.sendall(b'{"ok": true, "exec": true}\n')
    actor(conn, socks)
    os._exit(0)


def forkrate(n):
    t = time.monotonic()
    for _ in range(n):
        p = os.fork()
        if p == 0:
            os._exit(0)
        os.waitpid(p, 0)
    print(int(n / (time.monotonic() - t)))


# ---- the orchestrator (host, root) -------------------------------------------------------
class Orch:
    def __init__(self, state, d, tag):
        self.state, self.d = state, d
        self.who_path = f"{d}/{tag}-who.sock"
        self.wl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.wl.bind(self.who_path)
        os.chmod(self.who_path, 0o777)
        self.wl.listen(4)
        self.pids = {}        # session -> set of host pids of its actors
        self.actors = []

    def out(self, *f):
        print("\t".join(str(x) for x in f), flush=True)

    def new(self, server, session):
        a = Actor(self, server, session)
        self.actors.append(a)
        return a

    def events(self):
        evs = []
        jd = f"{self.state}/journal"
        for fn in sorted(os.listdir(jd)):
            if fn.endswith(".jsonl"):
                with open(f"{jd}/{fn}") as fh:
                    for line in fh:
                        if line.endswith("\n"):
                            try:
                                evs.append(json.loads(line))
                            except ValueError:
                                pass
        return evs

    def wait_event(self, pred, secs=8):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            for e in self.events():
                if pred(e):
                    return e
            time.sleep(0.05)
        return None


class Actor:
    def __init__(self, o, server, session):
        self.o, self.session = o, session
        self.c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.c.connect(server)
        self.f = self.c.makefile("r")
        self.pid = self.who()
        o.pids.setdefault(session, set()).add(self.pid)

    def cmd(self, op, **kw):
        kw["op"] = op
        self.c.sendall((json.dumps(kw) + "\n").encode())
        if op == "exit":
            return {"ok": True}
        rep = json.loads(self.f.readline())
        if not rep.get("ok"):
            raise RuntimeError(f"{op} {kw}: {rep}")
        return rep

    def who(self):
        kw = {"op": "who", "path": self.o.who_path}
        self.c.sendall((json.dumps(kw) + "\n").encode())
        w, _ = self.o.wl.accept()
        pid, _, _ = struct.unpack("3i", w.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        w.sendall(b"x")
        w.close()
        json.loads(self.f.readline())
        return pid

    def exit(self):
        self.cmd("exit")
        self.c.close()
        for _ in range(200):   # reaped (the server ignores SIGCHLD): the pid is free
            if not os.path.exists(f"/proc/{self.pid}"):
                return True
            time.sleep(0.01)
        return False


def q_dns(qname):
    return f'.event == "net.dns" and .qname == "{qname}"'


def q_tcp(port):
    return f'.event == "net.connect" and .src.port == {port} and .dst.port == 80'


def attack(state, d, tag, s1, srv1, s2, srv2, base):
    o = Orch(state, d, tag)
    out = o.out
    jnum = lambda p: "null" if p is None else str(p)

    def dns(a, sock, qname):
        r = a.cmd("dns", name=sock, q=qname)
        e = o.wait_event(lambda e: e.get("event") == "net.dns" and e.get("qname") == qname)
        out("INFO", f"{qname}: answered={r['answered']} journal session={e and e.get('session_id')} pid={e and e.get('pid')}")
        return e

    def tcp(a, sock, port):
        a.cmd("connect", name=sock)
        # The pid is looked up after the verdict: the socket is kept until the event is in.
        e = o.wait_event(lambda e: e.get("event") == "net.connect" and
                         e.get("src", {}).get("port") == port and e.get("dst", {}).get("port") == 80)
        out("INFO", f"tcp {port}: journal session={e and e.get('session_id')} pid={e and e.get('pid')}")
        return e

    def is_pid(what, sel, sess, pid):
        out("CHECK", what, sel, f'.session_id == "{sess}" and .pid == {jnum(pid)}')

    def reuse(server, session, pid, t0, label):
        """A new actor of session with host pid `pid` (host ns_last_pid), within the cache's
        5 s of t0; None when the host handed the pid to another process first."""
        for attempt in range(40):
            if time.monotonic() - t0 > 3.5:
                break
            with open("/proc/sys/kernel/ns_last_pid", "w") as fh:
                fh.write(str(pid - 1))
            a = o.new(server, session)
            if a.pid == pid:
                out("INFO", f"{label}: pid {pid} reused by a new process of {session} after {attempt + 1} tries, {time.monotonic() - t0:.2f} s after the walk")
                return a
            a.exit()
        out("SKIP", f"{label}: pid {pid} not reused within the cache window", "host forks took it first")
        return None

    # ---- 1: socket passing inside a session -----------------------------------------------
    A, B = o.new(srv1, s1), o.new(srv1, s1)
    out("FACT", f"{tag} 1 control: A ({A.pid}) and B ({B.pid}) are different processes", int(A.pid != B.pid))
    A.cmd("tcp", name="a0", port=base)
    tcp(A, "a0", base)
    is_pid(f"{tag} 1 control: A's own connect names A", q_tcp(base), s1, A.pid)
    A.cmd("tcp", name="x", port=base + 1)
    B.cmd("listen", path=f"{d}/{tag}-1b.sock")
    A.cmd("give", name="x", path=f"{d}/{tag}-1b.sock")
    B.cmd("take", name="x")
    A.cmd("close", name="x")
    tcp(B, "x", base + 1)
    is_pid(f"{tag} 1 passed, A closed its copy: B connects, B named", q_tcp(base + 1), s1, B.pid)
    A.cmd("tcp", name="y", port=base + 2)
    A.cmd("give", name="y", path=f"{d}/{tag}-1b.sock")
    B.cmd("take", name="y")
    tcp(B, "y", base + 2)
    out("CHECK", f"{tag} 1 passed, both hold it: B connects, a current holder (A or B) named",
        q_tcp(base + 2), f'.session_id == "{s1}" and (.pid == {A.pid} or .pid == {B.pid})')
    A.cmd("udp", name="u")
    dns(A, "u", f"{tag}-1-a.web.test")
    is_pid(f"{tag} 1 udp control: A's query names A", q_dns(f"{tag}-1-a.web.test"), s1, A.pid)
    A.cmd("give", name="u", path=f"{d}/{tag}-1b.sock")
    B.cmd("take", name="u")
    dns(B, "u", f"{tag}-1-both.web.test")
    out("CHECK", f"{tag} 1 udp, both hold it: B's query names a current holder (A or B)",
        q_dns(f"{tag}-1-both.web.test"), f'.session_id == "{s1}" and (.pid == {A.pid} or .pid == {B.pid})')
    out("FACT", f"{tag} 1 A exited (its pid {A.pid} is gone)", int(A.exit()))
    dns(B, "u", f"{tag}-1-aexit.web.test")
    is_pid(f"{tag} 1 udp, A exited: B's query names B, not the cached A", q_dns(f"{tag}-1-aexit.web.test"), s1, B.pid)
    B.exit()

    # ---- 2: the same descriptor number, reused -------------------------------------------------
    A, C = o.new(srv1, s1), o.new(srv1, s1)   # C is forked before A's sockets exist
    out("FACT", f"{tag} 2 control: A ({A.pid}) and C ({C.pid}) are different processes", int(A.pid != C.pid))
    n = A.cmd("tcp", name="s", port=base + 10)["fd"]
    tcp(A, "s", base + 10)
    is_pid(f"{tag} 2 control: A connects on fd {n}, A named", q_tcp(base + 10), s1, A.pid)
    A.cmd("close", name="s")
    C.cmd("tcp", name="t", port=base + 11)
    got = C.cmd("dup2", name="t", fd=n)["fd"]
    tcp(C, "t", base + 11)
    is_pid(f"{tag} 2 C's new socket at the same fd {got}: C named, not A", q_tcp(base + 11), s1, C.pid)
    A.cmd("udp", name="u")
    m = A.cmd("dup2", name="u", fd=40)["fd"]
    dns(A, "u", f"{tag}-2-a.web.test")
    is_pid(f"{tag} 2 udp control: A's query on fd {m} names A", q_dns(f"{tag}-2-a.web.test"), s1, A.pid)
    A.cmd("close", name="u")
    C.cmd("udp", name="v")
    C.cmd("dup2", name="v", fd=m)
    dns(C, "v", f"{tag}-2-c.web.test")
    is_pid(f"{tag} 2 udp: C's new socket at A's old fd {m}: C named", q_dns(f"{tag}-2-c.web.test"), s1, C.pid)
    A.cmd("tcp", name="w", port=base + 12)
    A.cmd("dup2", name="w", fd=n)
    tcp(A, "w", base + 12)
    is_pid(f"{tag} 2 A reopens at its old fd {n}: A named", q_tcp(base + 12), s1, A.pid)
    # The cached holder alive, its descriptor now another socket.
    A.cmd("udp", name="z")
    m = A.cmd("dup2", name="z", fd=41)["fd"]
    dns(A, "z", f"{tag}-2-z.web.test")
    is_pid(f"{tag} 2 control: A's query on z at fd {m} names A", q_dns(f"{tag}-2-z.web.test"), s1, A.pid)
    C.cmd("listen", path=f"{d}/{tag}-2c.sock")
    A.cmd("give", name="z", path=f"{d}/{tag}-2c.sock")
    C.cmd("take", name="z")
    A.cmd("close", name="z")
    A.cmd("udp", name="z2")
    A.cmd("dup2", name="z2", fd=m)
    dns(C, "z", f"{tag}-2-zc.web.test")
    is_pid(f"{tag} 2 A alive with another socket at fd {m}: C's query on z names C", q_dns(f"{tag}-2-zc.web.test"), s1, C.pid)
    dns(A, "z2", f"{tag}-2-z2.web.test")
    is_pid(f"{tag} 2 A's query on its new socket at fd {m} names A", q_dns(f"{tag}-2-z2.web.test"), s1, A.pid)
    A.exit()
    C.exit()

    # ---- 4: a socket of s1 in an s2 process -----------------------------------------------------
    X, Y = o.new(srv1, s1), o.new(srv2, s2)
    out("FACT", f"{tag} 4 control: X of {s1} ({X.pid}) and Y of {s2} ({Y.pid}) are different processes", int(X.pid != Y.pid))
    Y.cmd("tcp", name="own", port=base + 20)
    tcp(Y, "own", base + 20)
    is_pid(f"{tag} 4 control: Y's own connect is {s2}'s and names Y", q_tcp(base + 20), s2, Y.pid)
    Y.cmd("listen", path=f"{d}/{tag}-4y.sock")
    X.cmd("tcp", name="t", port=base + 21)
    X.cmd("give", name="t", path=f"{d}/{tag}-4y.sock")
    Y.cmd("take", name="t")
    X.cmd("close", name="t")
    tcp(Y, "t", base + 21)
    is_pid(f"{tag} 4 s1's socket, only Y ({s2}) holds it: the packet is {s1}'s, pid null", q_tcp(base + 21), s1, None)
    X.cmd("tcp", name="t2", port=base + 22)
    X.cmd("give", name="t2", path=f"{d}/{tag}-4y.sock")
    Y.cmd("take", name="t2")
    tcp(Y, "t2", base + 22)
    is_pid(f"{tag} 4 s1's socket held by X and Y: {s1}'s packet names X, its only {s1} holder", q_tcp(base + 22), s1, X.pid)
    X.cmd("udp", name="u")
    dns(X, "u", f"{tag}-4-x.web.test")
    is_pid(f"{tag} 4 udp control: X's query names X", q_dns(f"{tag}-4-x.web.test"), s1, X.pid)
    Y.cmd("udp", name="yu")
    dns(Y, "yu", f"{tag}-4-y.web.test")
    is_pid(f"{tag} 4 udp control: Y's query is {s2}'s and names Y", q_dns(f"{tag}-4-y.web.test"), s2, Y.pid)
    X.cmd("give", name="u", path=f"{d}/{tag}-4y.sock")
    Y.cmd("take", name="u")
    X.cmd("close", name="u")
    dns(Y, "u", f"{tag}-4-xy.web.test")
    is_pid(f"{tag} 4 udp: X's socket (cached with X) queried by Y: {s1}'s, pid null", q_dns(f"{tag}-4-xy.web.test"), s1, None)
    X.exit()
    Y.exit()

    # ---- 3: pid reuse within the cache's 5 s ----------------------------------------------------
    # Same session: the dead holder's pid, its socket at its descriptor, a new image.
    K = o.new(srv1, s1)
    K.cmd("listen", path=f"{d}/{tag}-3k.sock")
    R = o.new(srv1, s1)
    R.cmd("udp", name="u")
    R.cmd("dup2", name="u", fd=50)
    e = dns(R, "u", f"{tag}-3-r.web.test")
    t0 = time.monotonic()
    is_pid(f"{tag} 3 control: R's query on fd 50 names R ({R.pid})", q_dns(f"{tag}-3-r.web.test"), s1, R.pid)
    R.cmd("give", name="u", path=f"{d}/{tag}-3k.sock")
    K.cmd("take", name="u")
    rp = R.pid
    out("FACT", f"{tag} 3 R exited (pid {rp} free)", int(R.exit()))
    N = reuse(srv1, s1, rp, t0, f"{tag} 3 same session")
    if N:
        N.cmd("listen", path=f"{d}/{tag}-3n.sock")
        K.cmd("give", name="u", path=f"{d}/{tag}-3n.sock")
        N.cmd("take", name="u")
        K.cmd("close", name="u")
        N.cmd("dup2", name="u", fd=50)
        N.cmd("exec", marker=f"reborn-{tag}")
        dns(N, "u", f"{tag}-3-n.web.test")
        out("FACT", f"{tag} 3 same session: within 5 s of R's walk ({time.monotonic() - t0:.2f} s)", int(time.monotonic() - t0 < 5))
        is_pid(f"{tag} 3 same session: the new process with R's pid ({rp}) is named", q_dns(f"{tag}-3-n.web.test"), s1, rp)
        out("CHECK", f"{tag} 3 same session: pid {rp} is the exec'd new process (process.exec, marker)",
            f'.event == "process.exec" and .pid == {rp} and (.args | index("reborn-{tag}"))', f'.session_id == "{s1}"')
        N.exit()
    K.exit()

    # Another session: s2 gets the dead s1 holder's pid and holds s1 sockets.
    K2 = o.new(srv2, s2)
    K2.cmd("listen", path=f"{d}/{tag}-3k2.sock")
    X = o.new(srv1, s1)
    R = o.new(srv1, s1)
    R.cmd("udp", name="u")
    R.cmd("dup2", name="u", fd=60)
    dns(R, "u", f"{tag}-3x-r.web.test")
    t0 = time.monotonic()
    is_pid(f"{tag} 3x control: R's query on fd 60 names R ({R.pid}) of {s1}", q_dns(f"{tag}-3x-r.web.test"), s1, R.pid)
    R.cmd("give", name="u", path=f"{d}/{tag}-3k2.sock")
    K2.cmd("take", name="u")
    X.cmd("udp", name="v")   # a new s1 socket, never queried in s1
    rp = R.pid
    out("FACT", f"{tag} 3x R exited (pid {rp} free)", int(R.exit()))
    N = reuse(srv2, s2, rp, t0, f"{tag} 3x other session")
    if N:
        N.cmd("listen", path=f"{d}/{tag}-3xn.sock")
        K2.cmd("give", name="u", path=f"{d}/{tag}-3xn.sock")
        N.cmd("take", name="u")
        K2.cmd("close", name="u")
        N.cmd("dup2", name="u", fd=60)
        dns(N, "u", f"{tag}-3x-held.web.test")
        X.cmd("give", name="v", path=f"{d}/{tag}-3xn.sock")
        N.cmd("take", name="v")
        X.cmd("close", name="v")
        dns(N, "v", f"{tag}-3x-new.web.test")
        out("FACT", f"{tag} 3x within 5 s of R's walk ({time.monotonic() - t0:.2f} s)", int(time.monotonic() - t0 < 5))
        is_pid(f"{tag} 3x {s2}'s process with R's old pid {rp} at R's fd, R's socket: {s1}'s packet, pid null (not {s2}'s {rp})",
               q_dns(f"{tag}-3x-held.web.test"), s1, None)
        is_pid(f"{tag} 3x {s2}'s process with pid {rp} (once {s1}'s last holder), a new {s1} socket: pid null",
               q_dns(f"{tag}-3x-new.web.test"), s1, None)
        N.exit()
    X.exit()
    K2.exit()

    # ---- no session's event names another session's process ----------------------------------
    both = o.pids.get(s1, set()) & o.pids.get(s2, set())   # the reused pid: checked above
    for mine, other in ((s1, s2), (s2, s1)):
        foreign = sorted(o.pids.get(other, set()) - both)
        out("GLOBAL", f"{tag} no {mine} net event names a process of {other} ({len(foreign)} pids)",
            f'[.[] | select((.event == "net.connect" or .event == "net.dns") and .session_id == "{mine}" and '
            f'(.pid as $p | {json.dumps(foreign)} | index($p)))] | length == 0')
    out("END", tag)


if __name__ == "__main__":
    m = sys.argv[1]
    if m == "serve":
        serve(sys.argv[2])
    elif m == "actor":
        resume(int(sys.argv[2]), sys.argv[4])
    elif m == "forkrate":
        forkrate(int(sys.argv[2]))
    elif m == "attack":
        attack(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7],
               sys.argv[8], int(sys.argv[9]))
PY
chmod 0644 "$D/pa.py"

# run_attacks TAG UID S1 S2 PORTBASE: the sessions, an actor server in each (as UID),
# the orchestrator, then every CHECK it printed against the journal.
run_attacks() {
	local tag=$1 uid=$2 s1=$3 s2=$4 base=$5 s kind what sel want rc
	for s in "$s1" "$s2"; do
		sg session create --id "$s" >/dev/null && sg session start "$s" >/dev/null
		ip netns exec "$GWNS" "$BIN/sandgate" run --control "$SG_SOCK" --session "$s" \
			--uid "$uid" --cwd / -- python3 "$D/pa.py" serve "$D/$s.sock" &
		cleanup "kill $!"
		wait_for "actor server of $s" 10 test -S "$D/$s.sock" || { fail "$tag: actor server in $s"; return; }
	done
	python3 "$D/pa.py" attack "$SG_STATE" "$D" "$tag" "$s1" "$D/$s1.sock" "$s2" "$D/$s2.sock" \
		"$base" >"$T_TMP/$tag.out" 2>"$T_TMP/$tag.err"
	rc=$?
	check "$tag: every attack step ran (orchestrator exit $rc)" test "$rc" = 0
	[ "$rc" = 0 ] || cat "$T_TMP/$tag.err"
	check "$tag: the orchestrator reached the end" grep -q "^END" "$T_TMP/$tag.out"
	while IFS=$'\t' read -r kind what sel want; do
		case $kind in
		INFO) echo "#   $what" ;;
		SKIP) echo "ok - # SKIP $what: $sel" ;;
		FACT) check "$what" test "$sel" = 1 ;;
		GLOBAL) check "$what" sh -c 'perl -ne "print if /\n\z/" "$1"/journal/*.jsonl | jq -e -s "$2" >/dev/null' _ "$SG_STATE" "$sel" ;;
		CHECK)
			wait_ev 5 "$sel" >/dev/null
			e=$(evq "$sel" | head -1)
			echo "#   recorded: $(jq -c '{session_id, pid, uid}' <<<"${e:-null}")"
			echeck "$what" "$e" "$want"
			;;
		esac
	done <"$T_TMP/$tag.out"
	for s in "$s1" "$s2"; do
		sg session terminate "$s" >/dev/null
		sg session cleanup "$s" >/dev/null
	done
}

t0=$SECONDS
run_attacks root 0 s1 s2 41000
run_attacks nobody 65534 s3 s4 42000
# How long an agent's own fork loop needs to bring a host pid back: pid_max forks.
sg session create --id s5 >/dev/null && sg session start s5 >/dev/null
rate=$(in_sess s5 python3 "$D/pa.py" forkrate 300)
pmax=$(cat /proc/sys/kernel/pid_max)
echo "# in-session fork loop: ${rate:-?} forks/s; a wrap of pid_max $pmax takes ~$(( pmax / ${rate:-1} )) s (the cache keeps an entry $((5)) s)"
sg session terminate s5 >/dev/null
sg session cleanup s5 >/dev/null
echo "# attacks took $((SECONDS - t0)) s"
check "daemon exits 0 at SIGTERM" stop_daemon
finish
