#!/usr/bin/env bash
# Normal agent work still runs as root in a session with the DEFAULT containment:
# apt-get install of a local .deb, pip install of a local wheel into a venv, npm install
# of a local tarball, writing under /usr/local, serving on port 8080 (reached from the
# host). And the audit record of a contained command keeps host pids and the session.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/contain_helpers.sh"
require_root
INSIDE_TIMEOUT=600

write_config "$T_TMP/c.yaml" "gateway: {enabled: false}"
start_daemon a --config "$T_TMP/c.yaml"
sg session create --id w1 >/dev/null && sg session start w1 >/dev/null
sgrun --session w1 -- sleep 900 >/dev/null 2>&1 &

# ---- host pids in the record ------------------------------------------------------
bg_inside w1 "echo nspid=\$\$; exec sleep 3201$$"
hp=$(host_pid w1 3201$$)
wait_for "its output" 10 grep -q nspid "$T_TMP/bg.out"
ns=$(sed -n 's/^nspid=//p' "$T_TMP/bg.out")
check "process.exec carries the host pid ($hp), not the namespace's ($ns)" \
	sh -c "[ -n '$hp' ] && [ '$hp' != '$ns' ] && [ -d /proc/$hp ]"
check "that host pid is the process in the session's pid namespace (NSpid $hp $ns)" \
	grep -qE "^NSpid:\s+$hp\s+$ns$" /proc/${hp:-0}/status
check "and it is in the session's cgroup (host view)" grep -qx "0::/$SG_PARENT/w1" /proc/${hp:-0}/cgroup
e=$(journal_lines "$SG_STATE" | jq -c --arg p "${hp:-0}" 'select(.event == "process.exec" and (.pid | tostring) == $p)')
jcheck "its process.exec names the session" "$e" '.session_id == "w1" and .uid == 0 and .ppid > 1'
[ -n "$hp" ] && kill "$hp"

inside w1 'id -u'
check "root in the session" test "$OUT" = 0

# ---- apt-get install ./local.deb --------------------------------------------------
pkg=sgc-probe-$$
mkdir -p "$T_TMP/deb/DEBIAN" "$T_TMP/deb/usr/local/share/$pkg"
printf 'Package: %s\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.test>\nDescription: sandgate test package\n' \
	"$pkg" >"$T_TMP/deb/DEBIAN/control"
echo "hello $$" >"$T_TMP/deb/usr/local/share/$pkg/hello"
dpkg-deb --root-owner-group --build "$T_TMP/deb" "$T_TMP/$pkg.deb" >/dev/null
cleanup "dpkg --purge $pkg"
inside w1 "apt-get install -y -q -o DPkg::Lock::Timeout=300 $T_TMP/$pkg.deb"
worked "apt-get install of a local .deb"
check "dpkg on the host has it installed" \
	test "$(dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null)" = "install ok installed"
check "its file is on the host" grep -qx "hello $$" "/usr/local/share/$pkg/hello"

# ---- pip install of a local wheel into a venv ---------------------------------------
"$PY" - "$T_TMP" "$$" <<'PYEOF'
import sys, zipfile
d, tag = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(d + "/sgcprobe-1.0-py3-none-any.whl", "w") as z:
    z.writestr("sgcprobe/__init__.py", "VALUE = 'sgc-%s'\n" % tag)
    z.writestr("sgcprobe-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: sgcprobe\nVersion: 1.0\n")
    z.writestr("sgcprobe-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("sgcprobe-1.0.dist-info/RECORD", "sgcprobe/__init__.py,,\nsgcprobe-1.0.dist-info/METADATA,,\nsgcprobe-1.0.dist-info/WHEEL,,\nsgcprobe-1.0.dist-info/RECORD,,\n")
PYEOF
inside w1 "$PY -m venv $T_TMP/venv && $T_TMP/venv/bin/pip install -q --no-index --no-cache-dir \
	$T_TMP/sgcprobe-1.0-py3-none-any.whl && $T_TMP/venv/bin/python -c 'import sgcprobe; print(sgcprobe.VALUE)'"
worked "pip install of a local wheel into a venv"
check "the package imports" grep -qx "sgc-$$" <<<"$OUT"

# ---- npm install of a local tarball -------------------------------------------------
if command -v npm >/dev/null; then
	mkdir -p "$T_TMP/npm/package" "$T_TMP/npmproj"
	printf '{"name":"sgc-probe","version":"1.0.0","main":"index.js"}\n' >"$T_TMP/npm/package/package.json"
	echo "module.exports = 'sgc-$$';" >"$T_TMP/npm/package/index.js"
	tar czf "$T_TMP/sgc-probe-1.0.0.tgz" -C "$T_TMP/npm" package
	inside w1 "cd $T_TMP/npmproj && npm install --offline --no-audit --no-fund --cache $T_TMP/npmcache \
		$T_TMP/sgc-probe-1.0.0.tgz >/dev/null && node -e 'console.log(require(\"sgc-probe\"))'"
	worked "npm install of a local tarball"
	check "the module loads" grep -qx "sgc-$$" <<<"$OUT"
fi

# ---- /usr/local -------------------------------------------------------------------
cleanup "rm -rf /usr/local/lib/sgc-$$"
inside w1 "mkdir -p /usr/local/lib/sgc-$$ && echo written-$$ > /usr/local/lib/sgc-$$/f && chown nobody /usr/local/lib/sgc-$$/f"
worked "writing under /usr/local (and chown)"
check "the file is on the host" grep -qx "written-$$" /usr/local/lib/sgc-$$/f
check "owned by nobody" test "$(stat -c %U /usr/local/lib/sgc-$$/f)" = nobody

# ---- a server on port 8080, reached from the host -------------------------------------
bg_inside w1 "exec $PROBE serve 8080"
wait_for "the server" 20 grep -q listening "$T_TMP/bg.out"
got=$(timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/8080; head -1 <&3' 2>&1)
check "binding port 8080 in the session, the host connects ($got)" test "$got" = sgc-8080
finish
