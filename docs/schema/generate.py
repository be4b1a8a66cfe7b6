#!/usr/bin/python3
"""Writes docs/schema/ (JSON Schema draft 2020-12) from the emitters' inventory.

The inventory is what tests/unit/test_event_contract.c reads from the code (every event
type and every top-level field its emitters set):

    SG_CONTRACT_DUMP=1 SANDGATE_TESTDATA=tests/data build/test/tests/test_event_contract \
        | grep -v '^\\[' | python3 docs/schema/generate.py docs/schema

Field types come from the table below (by field name, then by event); the contract's
required fields from interface.md. The unit test fails when the code sets a field the
schema does not name, so regenerate (and review the diff) after adding one.
"""
import json
import os
import sys

BASE = "https://sandgate.example/schema/"
D = "https://json-schema.org/draft/2020-12/schema"

S = {"type": "string"}
SN = {"type": ["string", "null"]}
I = {"type": "integer"}
IN = {"type": ["integer", "null"]}
U = {"type": "integer", "minimum": 0}
UN = {"type": ["integer", "null"], "minimum": 0}
B = {"type": "boolean"}
BN = {"type": ["boolean", "null"]}
NUM = {"type": ["number", "null"]}
OBJ = {"type": "object"}
OBJN = {"type": ["object", "null"]}
ARR = {"type": "array"}
ARRN = {"type": ["array", "null"]}
EP = {"$ref": BASE + "defs.json#/$defs/endpoint"}
ACTOR = {"$ref": BASE + "defs.json#/$defs/actor"}

FIELD = {
    "pid": IN, "ppid": IN, "uid": IN, "euid": IN, "gid": IN, "exit_code": IN,
    "signal": IN, "duration_us": IN, "duration_ms": IN, "exit_status": IN,
    "path": SN, "new_path": SN, "target": SN, "device": SN, "fstype": SN, "mnt_ns": UN,
    "cwd": SN, "exe": SN, "cmd": SN, "args": ARRN, "argv_complete": BN, "exe_checked": BN,
    "args_truncated": BN, "comm": SN, "stdin": SN, "stdout": SN, "core_dumped": BN,
    "qname": SN, "qtype": SN, "rcode": SN, "resolver": SN, "transport": SN,
    "answers": {"type": ["array", "null"], "items": {"$ref": BASE + "defs.json#/$defs/answer"}},
    "flow": {"$ref": BASE + "defs.json#/$defs/dnsflow"},
    "verdict": SN, "reason": SN, "rule": SN, "mode": SN, "status": SN,
    "proto": SN, "src": EP, "dst": EP, "domain": SN, "sni": SN, "http_host": SN,
    "alpn": {}, "ech": BN, "parse": SN, "late": BN, "range": SN, "flow_id": UN,
    "ct_id": UN, "bytes_out": UN, "bytes_in": UN, "packets_out": UN, "packets_in": UN,
    "final": BN, "missed_end": BN, "latency_ms": NUM, "dns_id": UN, "geo": OBJN,
    "manager": SN, "tool": SN, "name": SN, "requested_version": SN, "requested": SN,
    "dependency": BN, "resolved_version": SN, "registry": SN, "source_from": SN,
    "other_sources": ARRN, "source_confirmed": BN,
    "hash": {"type": ["object", "string", "null"]}, "approved_source": BN,
    "unapproved_action": SN, "location": SN,
    "call_id": SN, "input_summary": SN, "output_summary": SN, "verbosity": SN,
    "redactions": UN, "summary_truncated": BN, "detail": OBJN, "model": SN,
    "input_tokens": IN, "output_tokens": IN, "bytes": UN,
    "actor": ACTOR, "tenant_id": SN, "user_id": SN, "template": SN, "policy": SN,
    "resources": OBJN, "mark": UN, "cgroup": SN, "cgroup_id": UN, "adopted": BN,
    "ifaces": ARRN, "workdir": SN, "end_when_empty": BN, "host_id": SN, "limits": OBJN,
    "changed_while_paused": OBJN, "fs_state": SN, "snapshot": SN, "cgroup_removed": BN,
    "outcome": SN, "state": SN,
    "limit": SN, "measured": NUM, "configured": NUM, "action": SN, "count": UN,
    "window_ms": UN, "truncated": BN,
    "severity": SN, "summary": SN, "refs": {"type": "array", "items": {"type": "integer"}},
    "tags": ARRN, "trigger": SN, "suppressed": UN, "package": OBJN,
    "sensor": SN, "lost": UN, "why": SN,
    "segment": SN, "previous_checkpoint": SN, "size": UN, "root": SN, "note": SN,
    "next_seq": UN, "queue_depth": UN, "lost_total": UN, "cut_at_seq": UN,
    "cut_bytes": UN, "kept_lines": UN, "saved_to": SN, "error": SN, "held": UN,
    "first_seq": UN, "last_seq": UN, "lines": UN, "cold_bytes": UN, "cold_path": SN,
    "checkpoint": SN, "version": SN, "config": SN, "state_dir": SN, "control": SN,
    "ok": BN, "kept": BN, "rules": UN, "netns": SN, "queue_base": UN, "queues": UN,
    "queue_impl": SN, "cgroup_level": UN, "fail_open": BN, "blocked": UN, "burst": UN,
    "last_reason": SN, "flood_rate": U,
}

# interface.md: the fields each contract event must carry.
REQUIRED = {
    "session.create": ["tenant_id", "user_id", "template", "resources", "actor"],
    "session.start": ["host_id", "limits", "actor"],
    "session.pause": ["reason", "actor"],
    "session.resume": ["actor", "changed_while_paused"],
    "session.terminate": ["reason", "exit_status", "actor"],
    "session.cleanup": ["fs_state", "actor"],
    "process.exec": ["pid", "ppid", "uid", "euid", "cwd", "exe", "cmd", "args", "argv_complete"],
    "process.exit": ["pid", "exit_code", "signal", "duration_us"],
    "file.read": ["path", "pid", "uid"], "file.write": ["path", "pid", "uid"],
    "file.create": ["path", "pid", "uid"], "file.delete": ["path", "pid", "uid"],
    "file.rename": ["path", "new_path", "pid", "uid"],
    "file.mount": ["target", "device", "fstype", "pid"],
    "file.unmount": ["target", "device", "fstype", "pid"],
    "net.dns": ["qname", "qtype", "rcode", "answers", "resolver", "transport", "verdict",
                "reason", "pid", "uid"],
    "net.connect": ["proto", "src", "dst", "domain", "sni", "http_host", "verdict", "reason",
                    "rule", "pid", "uid"],
    "net.flow": ["flow_id", "proto", "src", "dst", "domain", "sni", "bytes_out", "bytes_in",
                 "packets_out", "packets_in", "duration_ms", "final"],
    "package.install": ["manager", "name", "requested_version", "resolved_version",
                        "registry", "hash", "approved_source", "pid", "uid"],
    "tool.invoke": ["tool", "status", "input_summary", "output_summary", "call_id"],
    "resource.limit": ["limit", "measured", "configured", "action"],
    "alert": ["rule", "severity", "summary", "refs"],
    "sensor.loss": ["sensor", "lost", "why"],
}

# Values the contract fixes.
ENUMS = {
    ("session.pause", "reason"): ["api", "timeout", "auto"],
    ("session.terminate", "reason"): ["normal", "timeout", "oom", "api", "policy_violation",
                                      "signal", "disk_quota", "unknown"],
    ("session.cleanup", "fs_state"): ["preserved", "deleted", "snapshot"],
    ("tool.invoke", "status"): ["success", "error", "timeout"],
    ("net.dns", "transport"): ["udp", "tcp", None],
    ("net.dns", "verdict"): ["allowed", "blocked", "would_block", None],
    ("net.connect", "verdict"): ["allowed", "blocked", "would_block", None],
    ("resource.limit", "action"): ["throttle", "kill", "warn"],
}

ENVELOPE = ["ts", "seq", "event", "host", "session_id", "source", "prev"]


def defs():
    return {
        "$schema": D, "$id": BASE + "defs.json", "title": "shared definitions",
        "$defs": {
            "endpoint": {"type": ["object", "null"],
                         "properties": {"ip": SN, "port": IN}},
            "answer": {"type": "object",
                       "properties": {"type": S, "data": S, "ttl": I}},
            "dnsflow": {"type": "object",
                        "properties": {"flow_id": U, "proto": S, "src": EP, "dst": EP,
                                       "bytes_out": U, "bytes_in": U, "packets_out": U,
                                       "packets_in": U}},
            "actor": {"type": ["object", "null"],
                      "properties": {"uid": IN, "pid": IN, "name": SN}},
        },
    }


def envelope():
    return {
        "$schema": D, "$id": BASE + "envelope.json",
        "title": "the envelope every sandgate event line has",
        "type": "object",
        "required": ENVELOPE,
        "properties": {
            "ts": {"type": "string",
                   "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$"},
            "seq": {"type": "integer", "minimum": 0},
            "prev": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            "event": {"type": "string", "pattern": "^[a-z_]+(\\.[a-z_]+)*$"},
            "host": {"type": "string"},
            "session_id": {"type": ["string", "null"],
                           "pattern": "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$"},
            "source": {"enum": ["kernel", "gateway", "orchestrator", "sandgate"]},
        },
    }


def event_schema(t, keys):
    props = {}
    for k in keys:
        p = dict(FIELD.get(k, {}))
        if (t, k) in ENUMS:
            p = {"enum": ENUMS[(t, k)]}
        props[k] = p
    s = {"$schema": D, "$id": BASE + "events/" + t + ".json", "title": t,
         "type": "object", "allOf": [{"$ref": BASE + "envelope.json"}],
         "properties": dict({"event": {"const": t}}, **props)}
    if t in REQUIRED:
        s["required"] = REQUIRED[t]
    return s


def main():
    out = sys.argv[1]
    inv = {}
    for line in sys.stdin:
        t, _, rest = line.strip().partition(":")
        if t:
            inv[t] = rest.split()
    os.makedirs(out + "/events", exist_ok=True)
    files = {"defs.json": defs(), "envelope.json": envelope()}
    for t, keys in sorted(inv.items()):
        files["events/" + t + ".json"] = event_schema(t, keys)
    files["event.json"] = {
        "$schema": D, "$id": BASE + "event.json",
        "title": "one sandgate event line (journal, JSON sinks)",
        "$ref": BASE + "envelope.json",
        "allOf": [{"if": {"properties": {"event": {"const": t}}},
                   "then": {"$ref": BASE + "events/" + t + ".json"}} for t in sorted(inv)],
    }
    for name, s in files.items():
        with open(os.path.join(out, name), "w") as f:
            json.dump(s, f, indent=1, sort_keys=False)
            f.write("\n")


if __name__ == "__main__":
    main()
