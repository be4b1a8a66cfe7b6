"""A small client for sandgated's control socket (docs/control-protocol.md).

Standard library only. One request per line, one JSON reply per line:

    from sandgate_client import Client, SandgateError

    with Client("/run/sandgate/control.sock") as sg:
        sg.version()                                  # the handshake
        sg.session_create("agent-42", tenant="acme", user="alice", timeout=3600)
        sg.session_start("agent-42")
        status = sg.run("agent-42", ["python3", "-c", "print(1)"])
        sg.tool("agent-42", "shell", "success", input_summary="print(1)", call_id="c1")
        sg.session_terminate("agent-42", reason="normal")
        sg.session_cleanup("agent-42", fs="preserved")

Every failure raises SandgateError with the daemon's `code` (a stable name) and
`message`. A request is answered in order on its connection; a Client is not meant to
be shared by threads without a lock.
"""

import json
import os
import socket
import subprocess

PROTOCOL = 1
DEFAULT_SOCKET = os.environ.get("SANDGATE_CONTROL") or "/run/sandgate/control.sock"
LINE_MAX = 256 * 1024


class SandgateError(Exception):
    """A request the daemon refused (code, message) or a broken connection."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Client:
    def __init__(self, path=DEFAULT_SOCKET, actor=None, timeout=30.0, sandgate="sandgate"):
        self.path = path
        self.actor = actor          # recorded in the events with the socket's uid and pid
        self.sandgate = sandgate    # the CLI, for run()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        self._sock.connect(path)
        self._buf = b""

    def close(self):
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- the wire ------------------------------------------------------------------------
    def request(self, verb, args=None, actor=None):
        """Sends one request; returns its result object or raises SandgateError."""
        req = {"verb": verb, "args": {k: v for k, v in (args or {}).items() if v is not None}}
        if actor or self.actor:
            req["actor"] = actor or self.actor
        line = json.dumps(req, separators=(",", ":")).encode() + b"\n"
        if len(line) > LINE_MAX:
            raise SandgateError("too_large", "request over 256 KiB")
        self._sock.sendall(line)
        reply = json.loads(self._read_line())
        if not reply.get("ok"):
            raise SandgateError(reply.get("code", "failed"), reply.get("error", ""))
        return reply.get("result", {})

    def _read_line(self):
        while b"\n" not in self._buf:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise SandgateError("closed", "the daemon closed the connection")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    # ---- verbs -----------------------------------------------------------------------------
    def version(self):
        """The handshake: refused when this client's protocol is newer than the daemon's."""
        return self.request("version", {"protocol": PROTOCOL, "client": "sandgate_client.py"})

    def status(self):
        return self.request("status")

    def session_create(self, sid, tenant=None, user=None, template=None, policy=None,
                       memory=None, cpus=None, pids=None, disk=None, timeout=None,
                       ifaces=None, cgroup=None, workdir=None, net_rate=None,
                       end_when_empty=None):
        return self.request("session.create", {
            "id": sid, "tenant": tenant, "user": user, "template": template,
            "policy": policy, "memory": memory, "cpus": cpus, "pids": pids, "disk": disk,
            "timeout": timeout, "iface": ifaces, "cgroup": cgroup, "workdir": workdir,
            "net_rate": net_rate, "end_when_empty": end_when_empty})

    def session_start(self, sid):
        return self.request("session.start", {"id": sid})

    def session_pause(self, sid, reason=None):
        return self.request("session.pause", {"id": sid, "reason": reason})

    def session_resume(self, sid):
        return self.request("session.resume", {"id": sid})

    def session_terminate(self, sid, reason=None):
        return self.request("session.terminate", {"id": sid, "reason": reason})

    def session_cleanup(self, sid, fs=None):
        return self.request("session.cleanup", {"id": sid, "fs": fs})

    def session_show(self, sid):
        return self.request("session.show", {"id": sid})

    def session_list(self):
        return self.request("session.list")

    def tool(self, sid, name, status, input_summary=None, output_summary=None,
             call_id=None, duration_ms=None, input=None, output=None):
        """Records a tool call the agent made (tool.invoke)."""
        return self.request("tool.invoke", {
            "session_id": sid, "name": name, "status": status,
            "input_summary": input_summary, "output_summary": output_summary,
            "call_id": call_id, "duration_ms": duration_ms, "input": input,
            "output": output})

    def run(self, sid, argv, uid=None, cwd=None, stdout=None, stderr=None):
        """Runs argv inside the session and returns its exit status (128+N for signal N).

        Through the CLI (`sandgate run`): it moves its own child into the session with
        session.attach (the daemon moves the peer itself, never a pid from the request),
        confines it, execs argv and reports the exit with session.report_exit.
        """
        cmd = [self.sandgate, "run", "--control", self.path, "--session", sid]
        if uid is not None:
            cmd += ["--uid", str(uid)]
        if cwd is not None:
            cmd += ["--cwd", cwd]
        return subprocess.run(cmd + ["--"] + list(argv), stdout=stdout, stderr=stderr).returncode
