#!/usr/bin/python3
"""Checks sandgate event lines: each one JSON object with unique keys (at every depth),
valid against docs/schema/event.json (JSON Schema draft 2020-12).

usage: validate.py [--schema DIR] [--types] FILE...   (FILE: a journal segment, a sink's
       file, or - for stdin; lines that are not complete (no newline) are skipped)

Exit 0 when every line passes; else prints each bad line's seq and what is wrong (the
first 20) and exits 1. --types also prints how many lines of each type were checked.
Needs python3-jsonschema (Debian's 4.10 or later).
"""
import argparse
import collections
import json
import os
import sys

import jsonschema


class Duplicate(ValueError):
    pass


def no_dups(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise Duplicate(f"duplicate key {k!r}")
        seen[k] = v
    return seen


def load_schemas(d):
    store = {}
    for root, _, files in os.walk(d):
        for f in files:
            if f.endswith(".json"):
                with open(os.path.join(root, f)) as fh:
                    s = json.load(fh)
                store[s["$id"]] = s
    top = next(s for i, s in store.items() if i.endswith("/event.json"))
    resolver = jsonschema.RefResolver(top["$id"], top, store=store)
    return jsonschema.Draft202012Validator(top, resolver=resolver)


def lines_of(path):
    f = sys.stdin.buffer if path == "-" else open(path, "rb")
    for raw in f:
        if raw.endswith(b"\n"):
            yield raw[:-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schema", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--types", action="store_true")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    v = load_schemas(a.schema)
    jsonschema.Draft202012Validator.check_schema(v.schema)
    n = bad = 0
    types = collections.Counter()
    for path in a.files:
        for raw in lines_of(path):
            n += 1
            try:
                o = json.loads(raw.decode("utf-8"), object_pairs_hook=no_dups)
                if not isinstance(o, dict):
                    raise ValueError("not an object")
                types[o.get("event")] += 1
                errs = sorted(v.iter_errors(o), key=lambda e: list(e.path))
                if errs:
                    raise ValueError("; ".join(
                        f"{'/'.join(map(str, e.path)) or '(line)'}: {e.message[:200]}"
                        for e in errs[:3]))
            except (ValueError, UnicodeDecodeError) as e:
                bad += 1
                if bad <= 20:
                    seq = raw[:80].decode("utf-8", "replace")
                    print(f"{path}: {seq}...: {e}")
    if a.types:
        for t, c in sorted(types.items(), key=lambda x: str(x[0])):
            print(f"{c:8d} {t}")
    print(f"{n} lines, {bad} bad, {len(types)} types")
    return 1 if bad or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
