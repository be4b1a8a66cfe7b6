#!/usr/bin/env python3
"""An orchestrator loop over the control socket: one session per task, the agent's tool
calls run in it one after another, each reported as tool.invoke, then the session is
terminated and cleaned up whatever happened (docs/control-protocol.md).

usage: example_orchestrator.py [--control PATH] [--sandgate CLI] SESSION_ID
"""
import argparse
import sys
import time

from sandgate_client import Client, SandgateError

# What the "agent" decided to run: (tool name, argv).
PLAN = [
    ("shell", ["sh", "-c", "echo hello > /tmp/sg-example-$$; cat /tmp/sg-example-$$"]),
    ("python", ["sh", "-c", "exit 3"]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--control", default=None)
    ap.add_argument("--sandgate", default="sandgate")
    ap.add_argument("session")
    a = ap.parse_args()
    kw = {"actor": "example-orchestrator", "sandgate": a.sandgate}
    with Client(a.control, **kw) if a.control else Client(**kw) as sg:
        v = sg.version()
        print(f"sandgated {v['version']}, protocol {v['protocol']}")
        sg.session_create(a.session, tenant="example", user="agent", timeout=600)
        sg.session_start(a.session)
        try:
            for i, (tool, argv) in enumerate(PLAN):
                t0 = time.monotonic()
                rc = sg.run(a.session, argv)
                ms = int((time.monotonic() - t0) * 1000)
                sg.tool(a.session, tool, "success" if rc == 0 else "error",
                        input_summary=" ".join(argv), output_summary=f"exit {rc}",
                        call_id=f"call-{i}", duration_ms=ms)
                print(f"{tool}: exit {rc}")
            state = sg.session_show(a.session)["state"]
            print(f"session {a.session} is {state} between and after the calls")
        finally:
            sg.session_terminate(a.session, reason="normal")
            sg.session_cleanup(a.session, fs="preserved")
        try:
            sg.session_show(a.session)
        except SandgateError as e:
            print(f"after cleanup: {e.code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
