#!/usr/bin/env bash
# source_confirmed: pip in a session whose traffic the gateway sees (cgroup mode, the
# gateway's namespace of the lab), installing from the PEP 503 index nginx serves there:
# the installer's own net.connect names the index's host, so the source is confirmed.
# Then `unapproved: block` with enforcement: pip from the approved index (by name) works;
# pip from another host the policy allows fails (reset at its SYN, nothing reaches that
# host: counted there), while curl in the same session still reaches it; a local wheel
# (never an approved source) is installed and alerted with action block.
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

# ---- a second upstream host: 198.18.1.3, a resolver naming both, counters -----------
ip -n "$PEER" addr add 198.18.1.3/24 dev peer0
ip netns exec "$PEER" dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts \
	--bind-interfaces --listen-address=198.18.1.3 --address=/pkgs.test/198.18.1.2 \
	--address=/other.test/198.18.1.3 --user=root --pid-file= 2>/dev/null &
cleanup "kill $!"
ip netns exec "$PEER" /usr/bin/python3 -m http.server 80 --bind 198.18.1.3 \
	--directory "$WWW" >"$T_TMP/other.log" 2>&1 &
cleanup "kill $!"
ip netns exec "$PEER" nft -f - <<'NFT'
table inet sgpkcount {
	counter other {}
	chain in {
		type filter hook input priority 0;
		ip daddr 198.18.1.3 tcp dport 80 counter name other
	}
}
NFT
cleanup "ip netns exec '$PEER' nft delete table inet sgpkcount"
cnt() { ip netns exec "$PEER" nft -j list counter inet sgpkcount other | jq '.nftables[1].counter.packets'; }
# getaddrinfo in the gateway namespace (pip has no --resolve): `ip netns exec` mounts it.
mkdir -p "/etc/netns/$GWNS" && echo "nameserver 198.18.1.3" >"/etc/netns/$GWNS/resolv.conf"
cleanup "rm -rf '/etc/netns/$GWNS'"

METRICS_PORT=$((20000 + $$ % 20000))
GW_ENFORCE=true gw_config "$T_TMP/c.yaml" "  resolvers: [198.18.1.3]
audit:
  files: false
# The tracker's own alert (with its action) is what is checked here: detection off.
detection:
  enabled: false
policies:
  default:
    allow:
      - cidr: 198.18.1.2/32
        ports: [80]
    packages:
      approved_sources: [\"http://198.18.1.2/simple\"]
  pkgblk:
    allow:
      - domain: pkgs.test
      - domain: other.test
    packages:
      approved_sources: [\"http://pkgs.test/simple\"]
      unapproved: block"
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
	'.registry == "http://198.18.1.2/simple" and .source_confirmed == true and
	 .approved_source == true and .resolved_version == "0.3"'

# ---- unapproved: block ------------------------------------------------------------------
sg session create --id s2 --policy pkgblk >/dev/null && sg session start s2 >/dev/null
in_sess s2 sleep infinity &
cleanup "kill $!"
PIPQ="--disable-pip-version-check --no-cache-dir --retries 0 --timeout 3"
in_sess s2 "$V/bin/pip" install -q $PIPQ --target "$T_TMP/ok" \
	--index-url http://pkgs.test/simple --trusted-host pkgs.test sgnet >"$T_TMP/pip2.log" 2>&1
check "block: pip from the approved index (by name) works" test -d "$T_TMP/ok/sgnet-0.3.dist-info"
wait_ev 15 '.event == "package.install" and .session_id == "s2" and .name == "sgnet"'
e=$(evq '.event == "package.install" and .session_id == "s2" and .name == "sgnet"' | tail -n 1)
echeck "block: the approved install is approved and confirmed" "$e" \
	'.registry == "http://pkgs.test/simple" and .approved_source == true and .source_confirmed == true'

in_sess s2 "$V/bin/pip" install -q $PIPQ --target "$T_TMP/bad" \
	--index-url http://other.test/simple --trusted-host other.test sgnet >"$T_TMP/pip3.log" 2>&1
rc=$?
check "block: pip from an unapproved host fails (rc $rc)" test $rc -ne 0 -a ! -e "$T_TMP/bad/sgnet"
c=$(evq '.event == "net.connect" and .session_id == "s2" and .dst.ip == "198.18.1.3" and .dst.port == 80' | head -n 1)
echeck "block: net.connect of pip to it: blocked, unapproved_package_source" "$c" \
	'.verdict == "blocked" and .reason == "unapproved_package_source" and .pid > 0 and .mode == "enforce"'
n=$(cnt)
check "block: nothing reached the unapproved host ($n packets)" test "$n" = 0
# A direct URL outside the approved sources: refused the same way.
in_sess s2 "$V/bin/pip" install -q $PIPQ --target "$T_TMP/bad2" \
	http://other.test/simple/sgnet/sgnet-0.3-py3-none-any.whl >"$T_TMP/pip5.log" 2>&1
rc=$?
check "block: pip from a direct URL on an unapproved host fails (rc $rc)" \
	test $rc -ne 0 -a ! -e "$T_TMP/bad2/sgnet"
n=$(evq '.event == "net.connect" and .session_id == "s2" and .dst.ip == "198.18.1.3" and .reason == "unapproved_package_source"' | wc -l)
check "block: both pip runs' connections were refused ($n)" test "$n" -ge 2
n=$(cnt)
check "block: the direct URL reached nothing either ($n packets)" test "$n" = 0
out=$(in_sess s2 curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://other.test/simple/sgnet/)
check "block: curl in the same session still reaches it ($out)" test "$out" = 200

# A local wheel is never an approved source: installed (no connection), alerted: block.
in_sess s2 "$V/bin/pip" install -q $PIPQ --no-index --target "$T_TMP/loc" \
	"$WWW/simple/sgnet/sgnet-0.3-py3-none-any.whl" >"$T_TMP/pip4.log" 2>&1
wait_ev 15 '.event == "alert" and .session_id == "s2" and .rule == "package.unapproved_source"'
a=$(evq '.event == "alert" and .session_id == "s2" and .rule == "package.unapproved_source"' | tail -n 1)
echeck "block: alert for a local wheel says action block" "$a" '.action == "block" and .severity == "high"'

stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
finish
