#!/usr/bin/env bash
# Detection on what the enforcing gateway, the package tracker and the resource limits
# record, for real processes in real sessions (cgroup mode, the lab of gateway_lab.sh,
# enforce: true): the positive and the near miss of
#   blocked-egress-burst       10+ blocked lookups in one session / 9 in another
#   doh-dot-attempt            kdig +tls (port 853) and curl --doh-url to a listed DoH
#                              name, both blocked / an allowed HTTPS connection, a
#                              blocked connection for another reason
#   first-seen-domain          an allowed name / a blocked one (verdict blocked)
#   package-unapproved-source  pip from a direct URL / pip from the approved index; one
#                              alert per install (the tracker's own is off with detection)
#   session-ended-badly        a policy violation that terminates the session (policy
#                              terminate_on_violation), an OOM kill of the last process /
#                              a violation under a policy that does not terminate (then a
#                              normal end), an OOM kill of one process among others
# One daemon, one lab; the cases run side by side.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
command -v kdig >/dev/null || { echo "missing kdig"; echo "0 passed, 1 failed"; exit 1; }
lab_up

# ---- two wheels: sgok in the approved index, sgbad at a direct URL ----------------------
mkdir -p "$WWW/simple/sgok" "$WWW/direct"
/usr/bin/python3 - "$WWW" <<'PY'
import base64, hashlib, os, sys, zipfile
www = sys.argv[1]
for name, where in (("sgok", "simple/sgok"), ("sgbad", "direct")):
    fn, di = f"{name}-1.0-py3-none-any.whl", f"{name}-1.0.dist-info"
    files = {f"{name}/__init__.py": "", f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\n",
             f"{di}/WHEEL": "Wheel-Version: 1.0\nGenerator: sgtest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    rec = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b'=').decode()},{len(c)}\n" for p, c in files.items())
    files[f"{di}/RECORD"] = rec + f"{di}/RECORD,,\n"
    with zipfile.ZipFile(os.path.join(www, where, fn), "w") as z:
        for p, c in files.items():
            z.writestr(p, c)
    if where.startswith("simple"):
        open(os.path.join(www, where, "index.html"), "w").write(f'<a href="{fn}">{fn}</a>\n')
PY
V=$T_TMP/venv   # a venv with Debian's pip, as in t_packages_gw.sh
/usr/bin/python3 -m venv --without-pip "$V"
SITE=$(echo "$V"/lib/python3*/site-packages)
mkdir -p "$V/pipsrc" && ln -s /usr/lib/python3/dist-packages/pip "$V/pipsrc/pip"
echo "$V/pipsrc" >"$SITE/sgtest-pip.pth"
for v in $(env | grep -i -E '^(pip|uv)_' | cut -d= -f1); do unset "$v"; done

printf 'doh.web.test\n' >"$T_TMP/doh.txt"
METRICS_PORT=$((20000 + $$ % 20000))
GW_ENFORCE=true gw_config "$T_TMP/c.yaml" "  resolvers: [198.18.1.2]
  doh_list: $T_TMP/doh.txt
  dns_ttl_min: 2m
  block_burst: 12
  block_window: 30s
detection:
  rate_limit: 1000
policies:
  default:
    allow:
      - domain: api.web.test
      - cidr: 198.18.1.2/32
        ports: [80]
    packages:
      approved_sources: [\"http://198.18.1.2/simple\"]
      unapproved: flag
  strict:
    allow:
      - domain: api.web.test
    terminate_on_violation: true"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
have_mem=0
[ -d /sys/fs/cgroup/memory ] || grep -qw memory "$CG2/cgroup.controllers" && have_mem=1
for s in s1 b1 b2 v1; do
	p=default
	[ "$s" = v1 ] && p=strict
	sg session create --id "$s" --policy "$p" >/dev/null && sg session start "$s" >/dev/null
	in_sess "$s" sleep infinity &   # a session lives while it holds a process
	cleanup "kill $!"
done
for s in o1 o2; do
	# o1 --end-when-empty: the OOM kill of its last process ends it; o2 lives on
	f=; [ "$s" = o1 ] && f=--end-when-empty
	sg session create --id "$s" --memory 64M $f >/dev/null && sg session start "$s" >/dev/null
done
wait_for "sessions hold a process" 5 sh -c "grep -q . '$CG2/$SG_PARENT/v1/cgroup.procs'"

# alert_for RULE SESSION JQ-FILTER: an alert of RULE in SESSION whose refs hold the seq
# of an event matching the filter.
alert_for() {
	journal_lines "$SG_STATE" | jq -se --arg r "$1" --arg s "$2" "
		[.[] | select(.event != \"alert\" and ($3)) | .seq] as \$q |
		any(.[]; .event == \"alert\" and .rule == \$r and .session_id == \$s and
		    any(.refs[]; . as \$x | \$q | index(\$x) != null))" >/dev/null
}
alerted_in() {
	journal_lines "$SG_STATE" | jq -se --arg r "$1" --arg s "$2" \
		'any(.[]; .event == "alert" and .rule == $r and .session_id == $s)' >/dev/null
}
none() { ! "$@"; }
# near RULE SESSION JQ-FILTER: the near miss happened (an event matches) and no alert of
# RULE refers to it.
near() { [ -n "$(evq "$3" | head -1)" ] && ! alert_for "$@"; }
# digs SESSION N: N blocked lookups (names outside the policy) in one shell
digs() {
	in_sess "$1" sh -c "for i in \$(seq 1 $2); do dig +time=1 +tries=1 @198.18.1.2 \$i.$1.evil.web.test >/dev/null; done" &
}

# ---- everything at once ------------------------------------------------------------------
digs b1 13; j1=$!
digs b2 9; j2=$!
digs v1 13; j3=$!
if [ "$have_mem" = 1 ]; then
	sgrun --session o1 -- sh -c 'exec tail /dev/zero' >/dev/null 2>&1 &
	sgrun --session o2 -- sleep 30 &
	cleanup "kill $!"
	sgrun --session o2 -- sh -c 'exec tail /dev/zero' >/dev/null 2>&1 &
fi
(
	in_sess s1 dig +short +time=2 +tries=1 @198.18.1.2 api.web.test A >/dev/null
	in_sess s1 curl -sk -o /dev/null --max-time 5 --resolve api.web.test:443:198.18.1.2 https://api.web.test/
	in_sess s1 kdig +tls +time=2 +retry=0 @198.18.1.2 api.web.test >/dev/null 2>&1
	in_sess s1 curl -sk -o /dev/null --max-time 5 --doh-url https://doh.web.test/dns-query \
		--doh-insecure --resolve doh.web.test:443:198.18.1.2 https://api.web.test/
	in_sess s1 curl -s -o /dev/null --max-time 5 http://198.18.1.4:9000/
	in_sess s1 "$V/bin/python3" -m pip install -q --disable-pip-version-check --no-cache-dir \
		--index-url http://198.18.1.2/simple --trusted-host 198.18.1.2 sgok >"$T_TMP/pip1.log" 2>&1
	in_sess s1 "$V/bin/python3" -m pip install -q --disable-pip-version-check --no-cache-dir \
		--no-index http://198.18.1.2/direct/sgbad-1.0-py3-none-any.whl >"$T_TMP/pip2.log" 2>&1
) &
j4=$!
wait $j1 $j2 $j3 $j4

# ---- blocked bursts -------------------------------------------------------------------------
nblocked() { evq ".event == \"net.dns\" and .session_id == \"$1\" and .verdict == \"blocked\"" | wc -l; }
check "blocked-egress-burst: positive (13 blocked lookups)" wait_for alert 10 \
	alert_for blocked-egress-burst b1 '.event == "net.dns" and .verdict == "blocked"'
check "b2: its 9 blocked lookups are in the journal" wait_for "9 lookups" 10 \
	sh -c "[ \$(cat '$SG_STATE'/journal/*.jsonl | grep -F '\"session_id\":\"b2\"' | grep -F '\"event\":\"net.dns\"' | grep -cF '\"verdict\":\"blocked\"') -eq 9 ]"

# ---- DoT and DoH, blocked -------------------------------------------------------------------
wait_ev 10 '.event == "package.install" and .name == "sgbad"'
check "doh-dot-attempt: positive (kdig +tls, port 853, blocked)" wait_for alert 10 \
	alert_for doh-dot-attempt s1 '.event == "net.connect" and .dst.port == 853 and .verdict == "blocked"'
check "doh-dot-attempt: positive (curl --doh-url, doh_endpoint, blocked)" wait_for alert 10 \
	alert_for doh-dot-attempt s1 '.event == "net.connect" and .reason == "doh_endpoint" and .verdict == "blocked"'
check "doh-dot-attempt: near miss (allowed 443)" \
	near doh-dot-attempt s1 '.event == "net.connect" and .sni == "api.web.test" and .verdict == "allowed"'
check "doh-dot-attempt: near miss (blocked for another reason: not_allowed)" \
	near doh-dot-attempt s1 '.event == "net.connect" and .dst.ip == "198.18.1.4" and .verdict == "blocked"'
e=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "alert" and .rule == "doh-dot-attempt")' | head -1)
echeck "doh-dot-attempt: the summary says the verdict" "$e" '.summary | test("verdict blocked")'

# ---- first-seen domains: an allowed name, not a blocked one ----------------------------------
check "first-seen-domain: positive (api.web.test allowed)" wait_for alert 10 \
	alert_for first-seen-domain s1 '.event == "net.connect" and .domain == "api.web.test"'
check "first-seen-domain: near miss (doh.web.test, blocked)" \
	near first-seen-domain s1 '.event == "net.connect" and .sni == "doh.web.test" and .verdict == "blocked"'

# ---- packages: one alert per unapproved install, from the rule ---------------------------------
check "pip installed both wheels" test -d "$SITE/sgok-1.0.dist-info" -a -d "$SITE/sgbad-1.0.dist-info"
check "package-unapproved-source: positive (pip from a direct URL)" wait_for alert 10 \
	alert_for package-unapproved-source s1 '.event == "package.install" and .name == "sgbad"'
check "package-unapproved-source: near miss (pip from the approved index)" \
	near package-unapproved-source s1 '.event == "package.install" and .name == "sgok" and .approved_source == true'
e=$(evq '.event == "package.install" and .name == "sgbad"' | head -1)
echeck "sgbad: package.install not approved, action flag" "$e" \
	'.approved_source == false and .unapproved_action == "flag" and .registry == "http://198.18.1.2/direct/sgbad-1.0-py3-none-any.whl"'
e=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "alert" and .rule == "package-unapproved-source")' | head -1)
echeck "package-unapproved-source: summary with the source and the policy's action" "$e" \
	'.severity == "high" and (.summary | test("pip installed sgbad 1.0 from http://198.18.1.2/direct/sgbad-1.0-py3-none-any.whl: not an approved source \\(policy: flag\\)"))'
n=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "alert" and (.rule | startswith("package")))' | wc -l)
check "one alert per unapproved install, none from the tracker itself ($n)" test "$n" -eq 1

# ---- sessions ending badly: a violation that terminates, an OOM ---------------------------------
check "session-ended-badly: positive (policy_violation, terminate_on_violation)" wait_for alert 10 \
	alert_for session-ended-badly v1 '.event == "session.terminate" and .reason == "policy_violation"'
e=$(evq '.event == "policy.violation" and .session_id == "b1"' | head -1)
echeck "b1: a policy.violation without termination" "$e" '.action == "none"'
sg session terminate b1 --reason normal >/dev/null
wait_ev 10 '.event == "session.terminate" and .session_id == "b1"'
if [ "$have_mem" = 1 ]; then
	check "session-ended-badly: positive (OOM kill of the last process)" wait_for alert 10 \
		alert_for session-ended-badly o1 '.event == "session.terminate" and .reason == "oom"'
	check "o2: its hog was OOM-killed" wait_ev 10 \
		'.event == "resource.limit" and .session_id == "o2" and .limit == "memory_oom"'
	check "session-ended-badly: near miss (OOM kill, the session lives on)" \
		none alerted_in session-ended-badly o2
else
	echo "# no memory controller: OOM cases skipped"
fi
# Detection judges lines in order: once an alert on a later line is out, b1's end (and
# b2's lookups) have been judged.
in_sess s1 kdig +tls +time=1 +retry=0 @198.18.1.2 late.web.test >/dev/null 2>&1
ndot() { journal_lines "$SG_STATE" | jq -se '[.[] | select(.event == "alert" and .rule == "doh-dot-attempt")] | length >= 3' >/dev/null; }
check "a later alert is out (detection has judged what came before)" wait_for "third DoT alert" 10 ndot
check "blocked-egress-burst: near miss (9 blocked lookups: $(nblocked b2))" \
	none alerted_in blocked-egress-burst b2
check "session-ended-badly: near miss (violation under a policy that does not terminate, normal end)" \
	none alerted_in session-ended-badly b1

stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
finish
