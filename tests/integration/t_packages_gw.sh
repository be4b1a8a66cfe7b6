#!/usr/bin/env bash
# source_confirmed: pip in a session whose traffic the gateway sees (cgroup mode, the
# gateway's namespace of the lab), installing from the PEP 503 index nginx serves there:
# the installer's own net.connect names the index's host, so the source is confirmed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
lab_up

# one wheel in the lab's web root, as a PEP 503 index
mkdir -p "$WWW/simple/sgnet"
/usr/bin/python3 - "$WWW/simple/sgnet" <<'PY'
import base64, hashlib, os, sys, zipfile
d = sys.argv[1]
fn, di = "sgnet-0.3-py3-none-any.whl", "sgnet-0.3.dist-info"
files = {"sgnet/__init__.py": "", f"{di}/METADATA": "Metadata-Version: 2.1\nName: sgnet\nVersion: 0.3\n\n",
         f"{di}/WHEEL": "Wheel-Version: 1.0\nGenerator: sgtest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b'=').decode()},{len(c)}\n" for p, c in files.items())
files[f"{di}/RECORD"] = rec + f"{di}/RECORD,,\n"
with zipfile.ZipFile(os.path.join(d, fn), "w") as z:
    for p, c in files.items():
        z.writestr(p, c)
open(os.path.join(d, "index.html"), "w").write(f'<a href="{fn}">{fn}</a>\n')
PY

METRICS_PORT=$((20000 + $$ % 20000))
gw_config "$T_TMP/c.yaml" "audit:
  files: false
policies:
  default:
    packages:
      approved_sources: [\"http://198.18.1.2/simple\"]"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
sg session create --id s1 >/dev/null && sg session start s1 >/dev/null
in_sess s1 sleep infinity &
cleanup "kill $!"
for v in $(env | grep -i -E '^(pip|uv)_' | cut -d= -f1); do unset "$v"; done

V=$T_TMP/venv
/usr/bin/python3 -m venv --without-pip "$V"
SITE=$(echo "$V"/lib/python3*/site-packages)
mkdir -p "$V/pipsrc" && ln -s /usr/lib/python3/dist-packages/pip "$V/pipsrc/pip"
echo "$V/pipsrc" >"$SITE/sgtest-pip.pth"
printf '#!%s/bin/python3\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n' "$V" >"$V/bin/pip"
chmod +x "$V/bin/pip"

in_sess s1 "$V/bin/pip" install -q --disable-pip-version-check --no-cache-dir \
	--index-url http://198.18.1.2/simple --trusted-host 198.18.1.2 sgnet >"$T_TMP/pip.log" 2>&1
check "pip installed sgnet through the gateway" test -d "$SITE/sgnet-0.3.dist-info"
wait_ev 15 '.event == "package.install" and .name == "sgnet"'
e=$(evq '.event == "package.install" and .name == "sgnet"' | tail -n 1)
pid=$(jq -r .pid <<<"$e")
c=$(evq ".event == \"net.connect\" and .session_id == \"s1\" and .pid == $pid and .dst.ip == \"198.18.1.2\"" | head -n 1)
echeck "the gateway saw pip itself connect to the index" "$c" '.dst.port == 80 and .verdict == "allowed"'
echeck "package.install: source confirmed by the installer's own connection" "$e" \
	'.source == "http://198.18.1.2/simple" and .source_confirmed == true and
	 .approved_source == true and .resolved_version == "0.3"'

stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
finish
