#!/usr/bin/env bash
# The control socket as an API (docs/control-protocol.md): the Python client module and
# its example orchestrator loop (handshake, create, start, two commands, their tool
# calls, terminate, cleanup) against a real daemon; every error code a client can meet.
. "$(dirname "$0")/lib.sh"
require_root
. "$(dirname "$0")/session_helpers.sh"
command -v python3 >/dev/null || { echo "missing python3"; echo "0 passed, 1 failed"; exit 1; }

write_config "$T_TMP/c.yaml" "gateway: {enabled: false}"
start_daemon a --config "$T_TMP/c.yaml"
export PYTHONPATH=$SRC/clients/python
SID=orch-$$

out=$(python3 "$SRC/clients/python/example_orchestrator.py" --control "$SG_SOCK" \
	--sandgate "$BIN/sandgate" "$SID" 2>&1)
rc=$?
echo "$out"
check "the example orchestrator exits 0" test $rc -eq 0
check "handshake: version and protocol" grep -q "^sandgated [0-9.]*, protocol 1$" <<<"$out"
check "first tool call ran (exit 0)" grep -q "^shell: exit 0$" <<<"$out"
check "second tool call ran in the same session (exit 3)" grep -q "^python: exit 3$" <<<"$out"
check "the session stayed running between the calls" grep -q "is running between" <<<"$out"
check "after cleanup the session is not_found" grep -q "after cleanup: not_found" <<<"$out"
jcheck "session.create by the orchestrator (actor)" "$(ev session.create "$SID")" \
	'.tenant_id == "example" and .actor.name == "example-orchestrator" and .end_when_empty == false'
check "two commands attached" test "$(ev session.attach "$SID" | wc -l)" -eq 2
jcheck "tool.invoke: both calls, their status and ids" "$(ev tool.invoke "$SID" | jq -s -c .)" \
	'length == 2 and .[0].tool == "shell" and .[0].status == "success" and .[0].call_id == "call-0"
	 and .[1].status == "error" and .[1].output_summary == "exit 3" and .[1].source == "orchestrator"'
check "process.exec of the first command in the session" \
	test -n "$(ev process.exec "$SID" | jq -c 'select(.cmd == "sh")')"
jcheck "terminate reason normal, then cleanup" "$(ev session.terminate "$SID")" '.reason == "normal"'
check "session.cleanup recorded" test -n "$(ev session.cleanup "$SID")"

# ---- error codes and the handshake, raw and through the module ---------------------------
code() { req "$1" | jq -r '.code // "none"'; }
check "malformed JSON: bad_request" test "$(code '{"verb":')" = bad_request
check "unknown verb: unknown_verb" test "$(code '{"verb":"nope"}')" = unknown_verb
check "unknown session: not_found" test "$(code '{"verb":"session.show","args":{"id":"none-'$$'"}}')" = not_found
check "bad argument: invalid" test "$(code '{"verb":"session.create","args":{"id":"x'$$'","colour":1}}')" = invalid
sg session create --id dup-$$ >/dev/null
check "an existing id: exists" test "$(code '{"verb":"session.create","args":{"id":"dup-'$$'"}}')" = exists
sg session terminate dup-$$ >/dev/null; sg session cleanup dup-$$ >/dev/null
jcheck "version: protocol, daemon, version" "$(req '{"verb":"version","args":{"protocol":1}}')" \
	'.ok == true and .result.protocol == 1 and .result.daemon == "sandgated" and (.result.version | test("^[0-9]+\\.[0-9]+\\.[0-9]+$"))'
check "version: a newer client is refused (unavailable)" \
	test "$(code '{"verb":"version","args":{"protocol":99}}')" = unavailable
check "ok replies carry no code" test "$(code '{"verb":"ping"}')" = none
out=$(python3 - "$SG_SOCK" <<'PY'
import sys
from sandgate_client import Client, SandgateError
with Client(sys.argv[1]) as sg:
    try:
        sg.session_show("no-such-session")
    except SandgateError as e:
        print("raised", e.code)
    print("still usable", sg.version()["protocol"])
PY
)
check "the module raises SandgateError with the code" grep -q "raised not_found" <<<"$out"
check "... and the connection stays usable" grep -q "still usable 1" <<<"$out"
check "requests over the limit: too_large" \
	test "$(head -c 300000 /dev/zero | tr '\0' a | sed 's/^/{"verb":"ping","args":{"x":"/; s/$/"}}/' |
		timeout 5 socat - "UNIX-CONNECT:$SG_SOCK" | jq -r .code)" = too_large
stop_daemon
finish
