#!/usr/bin/env python3
"""A Splunk HEC and OTLP/HTTP (JSON) logs receiver for t_sinks_http.sh.

Checks each request's wire format and answers 400 on a violation (written to
DIR/bad.log), 503 while DIR/fail exists (a simulated outage), else 200. Accepted HEC
events go to DIR/hec.jsonl (the event object, canonical JSON), accepted OTLP log bodies
to DIR/otlp.jsonl (body.stringValue, as sent).

usage: http_receiver.py ADDR PORT DIR TOKEN
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ADDR, PORT, DIR, TOKEN = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]


def hec_events(body):
    dec, i, out = json.JSONDecoder(), 0, []
    text = body.decode("utf-8")
    while i < len(text):
        obj, i = dec.raw_decode(text, i)
        for k, t in (("time", (int, float)), ("host", str), ("source", str),
                     ("sourcetype", str), ("event", dict)):
            if not isinstance(obj.get(k), t):
                raise ValueError("HEC event without a valid %s" % k)
        if obj["source"] != "sandgate" or "seq" not in obj["event"] and "metadata" not in obj["event"]:
            raise ValueError("HEC event is not a sandgate journal event")
        out.append(obj["event"])
    if not out:
        raise ValueError("empty HEC batch")
    return out


def otlp_bodies(body):
    req = json.loads(body)
    rl = req["resourceLogs"][0]
    attrs = {a["key"]: a["value"]["stringValue"] for a in rl["resource"]["attributes"]}
    if attrs.get("service.name") != "sandgate" or "host.name" not in attrs:
        raise ValueError("resource attributes")
    out = []
    for rec in rl["scopeLogs"][0]["logRecords"]:
        if not rec["timeUnixNano"].isdigit() or not isinstance(rec["severityNumber"], int):
            raise ValueError("timeUnixNano / severityNumber")
        a = {x["key"]: x["value"] for x in rec["attributes"]}
        if "stringValue" not in a["event"] or not a["seq"]["intValue"].isdigit():
            raise ValueError("attributes event/seq")
        out.append(rec["body"]["stringValue"])
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, code, text):
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if os.path.exists(os.path.join(DIR, "fail")):
            return self.answer(503, '{"text":"Server is busy","code":9}')
        try:
            if self.headers.get("Content-Type") != "application/json":
                raise ValueError("Content-Type")
            if self.path == "/services/collector/event":
                if self.headers.get("Authorization") != "Splunk " + TOKEN:
                    raise ValueError("Authorization")
                lines = [json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                         for e in hec_events(body)]
                name = "hec.jsonl"
            elif self.path == "/v1/logs":
                lines, name = otlp_bodies(body), "otlp.jsonl"
            else:
                raise ValueError("path " + self.path)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
            with open(os.path.join(DIR, "bad.log"), "a") as f:
                f.write("%s: %s\n" % (self.path, e))
            return self.answer(400, '{"text":"Invalid data format","code":6}')
        with open(os.path.join(DIR, name), "a", encoding="utf-8") as f:
            for line in lines:
                f.write(line + "\n")
        self.answer(200, '{"text":"Success","code":0}')

    def log_message(self, *args):
        pass


ThreadingHTTPServer((ADDR, PORT), Handler).serve_forever()
