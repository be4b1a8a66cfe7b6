#!/usr/bin/env bash
# package.install from real installers run in a real session: pip (in a venv) from a
# PEP 503 index served by nginx in a lab namespace (two wheels built here, one the other's
# dependency), pip -r with the index from the environment, pip from a direct URL outside
# the approved sources (flagged + alert), npm from a local tarball (offline; also under a
# policy with unapproved: block), dpkg -i and apt-get install ./FILE of .debs built here
# (purged at exit), cargo install --path offline where cargo is installed.
# Each event is checked field by field. PKG_DEBUG=DIR keeps the journal and the installers' logs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root
for t in nginx npm dpkg-deb jq ip /usr/bin/python3; do
	command -v "$t" >/dev/null || { echo "missing $t"; echo "0 passed, 1 failed"; exit 1; }
done

# ---- the lab: one namespace behind a veth, nginx serving the index -------------------
NS=sgpkg-$$
N=$(( $$ % 250 + 1 ))
HOSTIP=198.19.$N.1
IDXIP=198.19.$N.2
IDX=http://$IDXIP
WWW=$T_TMP/www
lab_down() {
	[ -f "$T_TMP/nginx.pid" ] && kill "$(cat "$T_TMP/nginx.pid")" 2>/dev/null
	ip netns pids "$NS" 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns del "$NS" 2>/dev/null
}
cleanup lab_down
VETH=sgp$$
VETH=${VETH:0:15}
ip netns add "$NS" && ip -n "$NS" link set lo up
ip link add "$VETH" type veth peer name idx0 netns "$NS"
cleanup "ip link del $VETH"
ip addr add "$HOSTIP/30" dev "$VETH" && ip link set "$VETH" up
ip -n "$NS" addr add "$IDXIP/30" dev idx0 && ip -n "$NS" link set idx0 up

# ---- two wheels (sgapp needs sgdep) and a third for the direct URL, built by hand -------
mkdir -p "$WWW/simple/sgapp" "$WWW/simple/sgdep" "$WWW/simple/sgthird" "$WWW/direct" "$T_TMP/ngx"
/usr/bin/python3 - "$WWW" <<'PY'
import base64, hashlib, os, sys, zipfile
www = sys.argv[1]
def wheel(name, ver, requires, where):
    fn = f"{name}-{ver}-py3-none-any.whl"
    di = f"{name}-{ver}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires) + "\n"
    files = {f"{name}/__init__.py": f"VERSION = '{ver}'\n",
             f"{di}/METADATA": meta,
             f"{di}/WHEEL": "Wheel-Version: 1.0\nGenerator: sgtest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    rec = ""
    for p, c in files.items():
        d = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
        rec += f"{p},sha256={d},{len(c)}\n"
    rec += f"{di}/RECORD,,\n"
    files[f"{di}/RECORD"] = rec
    path = os.path.join(www, where, fn)
    with zipfile.ZipFile(path, "w") as z:
        for p, c in files.items():
            z.writestr(p, c)
    return fn, hashlib.sha256(open(path, "rb").read()).hexdigest()
for name, ver, req in (("sgapp", "1.0", ["sgdep>=1.0"]), ("sgdep", "1.0", []),
                       ("sgthird", "3.1", [])):
    fn, h = wheel(name, ver, req, f"simple/{name}")
    with open(os.path.join(www, "simple", name, "index.html"), "w") as f:
        f.write(f'<html><body><a href="{fn}#sha256={h}">{fn}</a></body></html>\n')
fn, h = wheel("sgother", "2.5", [], "direct")
open(os.path.join(www, "direct", "sha256"), "w").write(h)
PY
cat >"$T_TMP/nginx.conf" <<NGX
user root;
worker_processes 1;
pid $T_TMP/nginx.pid;
error_log $T_TMP/ngx/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $T_TMP/ngx/body; proxy_temp_path $T_TMP/ngx/proxy;
  fastcgi_temp_path $T_TMP/ngx/fcgi; uwsgi_temp_path $T_TMP/ngx/uwsgi;
  scgi_temp_path $T_TMP/ngx/scgi;
  server { listen $IDXIP:80; root $WWW; autoindex on; }
}
NGX
ip netns exec "$NS" nginx -c "$T_TMP/nginx.conf" -e "$T_TMP/ngx/error.log"
wait_for "nginx" 10 curl -sf -o /dev/null "$IDX/simple/sgapp/"

# ---- the daemon, a session whose policy approves only the lab index ------------------
# Detection off: the tracker raises its own alert then (with detection on, the rule
# package-unapproved-source does instead: t_detect_more.sh).
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  files: false
detection:
  enabled: false
policies:
  default:
    packages:
      approved_sources: [\"$IDX/simple\"]
      unapproved: flag
  strict:
    packages:
      approved_sources: [\"$IDX/simple\"]
      unapproved: block"
start_daemon a --config "$T_TMP/c.yaml"
W=$T_TMP/work
mkdir -p "$W"
sg session create --id p1 --workdir "$W" >/dev/null && sg session start p1 >/dev/null
sgrun --session p1 -- sleep 120 &   # the session lives while its last process does
cleanup "kill $!"
# The installers' own settings come from the environment: none from the caller's.
for v in $(env | grep -i -E '^(pip|npm_config|uv)_' | cut -d= -f1); do unset "$v"; done

# pcheck DESCRIPTION JSON JQ-EXPR: jcheck that also fails on an empty event.
pcheck() { check "$1" bash -c '[ -n "$2" ] && jq -e "$1" >/dev/null <<<"$2"' _ "$3" "$2"; }
# pkg NAME: the session's package.install event for NAME (the last one).
pkg() { ev package.install p1 | jq -c --arg n "$1" 'select(.name == $n)' | tail -n 1; }
wait_pkg() { wait_for "package.install $1" 15 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F '\"name\":\"$1\"')\" ]"; }

# A venv whose pip is Debian's own (python3-pip), reached through a .pth file: ensurepip
# would spend 3-4 s of CPU (15+ s on a loaded machine) installing a second copy. The
# exec forms are a real venv's: V/bin/python3 V/bin/pip ..., V/bin/python3 -m pip ...
V=$T_TMP/venv
/usr/bin/python3 -m venv --without-pip "$V"
SITE=$(echo "$V"/lib/python3*/site-packages)
mkdir -p "$V/pipsrc" && ln -s /usr/lib/python3/dist-packages/pip "$V/pipsrc/pip"
echo "$V/pipsrc" >"$SITE/sgtest-pip.pth"
printf '#!%s/bin/python3\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n' "$V" >"$V/bin/pip"
chmod +x "$V/bin/pip"

# ---- 1. pip from the HTTP index: the package and its dependency -----------------------
sgrun --session p1 --cwd "$W" -- "$V/bin/pip" install -q --disable-pip-version-check \
	--no-cache-dir --index-url "$IDX/simple" --trusted-host "$IDXIP" "sgapp==1.0" \
	>"$T_TMP/pip1.log" 2>&1
check "pip installed sgapp and sgdep from the lab index" test -d "$SITE/sgdep"
wait_pkg sgdep
e=$(pkg sgapp)
rec=$(sha256sum "$SITE/sgapp-1.0.dist-info/RECORD" | cut -d' ' -f1)
pcheck "sgapp: manager, tool, name, versions" "$e" \
	'.manager == "pip" and .tool == "pip" and .name == "sgapp" and
	 .requested_version == "==1.0" and .requested == "sgapp==1.0" and
	 .resolved_version == "1.0" and .dependency == false'
pcheck "sgapp: source is the index, from the argument" "$e" \
	".registry == \"$IDX/simple\" and .source_from == \"argument\" and .other_sources == []
	 and .source_confirmed == null and .source == \"kernel\""
pcheck "sgapp: hash is the installed RECORD's SHA-256" "$e" \
	".hash.algo == \"sha256\" and .hash.value == \"$rec\" and .hash.kind == \"installed_metadata\"
	 and .hash.from == \"$SITE/sgapp-1.0.dist-info/RECORD\""
pcheck "sgapp: approved source, pid, uid, location" "$e" \
	".approved_source == true and (.pid | type) == \"number\" and .uid == 0 and
	 .location == \"$SITE/sgapp-1.0.dist-info\""
e=$(pkg sgdep)
pcheck "sgdep: a dependency, nothing requested, same source" "$e" \
	".dependency == true and .requested_version == null and .requested == null and
	 .resolved_version == \"1.0\" and .registry == \"$IDX/simple\" and .approved_source == true"
n=$(ev package.install p1 | wc -l)
check "exactly two package.install events for the first run ($n)" test "$n" -eq 2
n=$(ev alert p1 | wc -l)
check "no alert for an approved source ($n)" test "$n" -eq 0

# ---- 2. pip from a direct URL outside the approved sources ----------------------------
H=$(cat "$WWW/direct/sha256")
URL="$IDX/direct/sgother-2.5-py3-none-any.whl"
sgrun --session p1 --cwd "$W" -- "$V/bin/python3" -m pip install -q --disable-pip-version-check \
	--no-cache-dir --no-index "$URL#sha256=$H" >"$T_TMP/pip2.log" 2>&1
wait_pkg sgother
e=$(pkg sgother)
pcheck "sgother: python -m pip, requested as the URL" "$e" \
	".manager == \"pip\" and .resolved_version == \"2.5\" and .dependency == false and
	 .requested == \"$URL#sha256=$H\" and .requested_version == null"
pcheck "sgother: source is the URL (package metadata), not approved" "$e" \
	".registry == \"$URL\" and .source_from == \"package_metadata\" and
	 .approved_source == false and .unapproved_action == \"flag\""
pcheck "sgother: hash is the wheel's SHA-256 (archive, direct_url.json)" "$e" \
	".hash.algo == \"sha256\" and .hash.value == \"$H\" and .hash.kind == \"archive\""
wait_for "alert" 10 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F package.unapproved_source)\" ]"
a=$(ev alert p1 | jq -c 'select(.rule == "package.unapproved_source")' | tail -n 1)
pcheck "alert: rule, severity, summary, refs, package" "$a" \
	".rule == \"package.unapproved_source\" and .severity == \"medium\" and
	 (.summary | contains(\"sgother\")) and .refs == [] and .package.name == \"sgother\" and
	 .package.registry == \"$URL\" and .action == \"flag\""

# ---- 2b. pip -r requirements.txt, the index from PIP_INDEX_URL ----------------------------
printf '# pinned\nsgthird>=3.0  # the third\n' >"$W/req.txt"
PIP_INDEX_URL=$IDX/simple sgrun --session p1 --cwd "$W" -- "$V/bin/pip" install -q \
	--disable-pip-version-check --no-cache-dir --trusted-host "$IDXIP" -r req.txt \
	>"$T_TMP/pip3.log" 2>&1
wait_pkg sgthird
e=$(pkg sgthird)
pcheck "sgthird: requested in req.txt, source from the environment, approved" "$e" \
	".resolved_version == \"3.1\" and .requested_version == \">=3.0\" and
	 .requested == \"sgthird>=3.0\" and .dependency == false and
	 .registry == \"$IDX/simple\" and .source_from == \"environment\" and .approved_source == true"

# ---- 3. npm: a local tarball, offline ---------------------------------------------------
NP=$T_TMP/npm
mkdir -p "$NP/package" "$NP/proj"
printf '{"name":"sgtiny","version":"1.2.3","main":"index.js"}\n' >"$NP/package/package.json"
echo 'module.exports = 1;' >"$NP/package/index.js"
# what `npm pack` makes (package/ inside a gzip'd tar), without its 4 s of startup
tar -C "$NP" -czf "$NP/sgtiny-1.2.3.tgz" package
printf '{"name":"proj","version":"1.0.0"}\n' >"$NP/proj/package.json"
sgrun --session p1 --cwd "$NP/proj" -- npm install --offline --no-audit --no-fund \
	--loglevel=error ../sgtiny-1.2.3.tgz >"$T_TMP/npm.log" 2>&1
wait_pkg sgtiny
e=$(pkg sgtiny)
sha=$(openssl dgst -sha512 -hex "$NP/sgtiny-1.2.3.tgz" | awk '{print $NF}')
pcheck "npm: manager, tool, name, versions" "$e" \
	'.manager == "npm" and .tool == "npm" and .resolved_version == "1.2.3" and
	 .requested == "../sgtiny-1.2.3.tgz" and .dependency == false'
pcheck "npm: source is the tarball (resolved), not approved" "$e" \
	".registry == \"file://$NP/sgtiny-1.2.3.tgz\" and .source_from == \"package_metadata\"
	 and .approved_source == false"
pcheck "npm: hash is the tarball's integrity (sha512)" "$e" \
	".hash.algo == \"sha512\" and .hash.value == \"$sha\" and .hash.kind == \"archive\" and
	 .hash.from == \"$NP/proj/node_modules/.package-lock.json\""

# ---- 3b. the same under unapproved: block (no gateway here: not enforced, the events say so) --
sg session create --id p2 --policy strict --workdir "$W" >/dev/null && sg session start p2 >/dev/null
sgrun --session p2 -- sleep 120 &
cleanup "kill $!"
mkdir -p "$NP/proj2" && printf '{"name":"proj2","version":"1.0.0"}\n' >"$NP/proj2/package.json"
sgrun --session p2 --cwd "$NP/proj2" -- npm install --offline --no-audit --no-fund \
	--loglevel=error ../sgtiny-1.2.3.tgz >"$T_TMP/npm2.log" 2>&1
wait_for "p2's alert" 15 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F '\"session_id\":\"p2\"' | grep -F unapproved_source)\" ]"
e=$(ev package.install p2 | tail -n 1)
pcheck "block: package.install says so" "$e" \
	'.name == "sgtiny" and .approved_source == false and .unapproved_action == "block"'
a=$(ev alert p2 | jq -c 'select(.rule == "package.unapproved_source")' | tail -n 1)
pcheck "block: alert is high, action block_not_enforced" "$a" \
	'.rule == "package.unapproved_source" and .severity == "high" and
	 .action == "block_not_enforced" and .package.name == "sgtiny"'

# ---- 4. dpkg -i of a .deb built here ------------------------------------------------------
PK=sandgate-test-pkg-$$
D=$T_TMP/deb/$PK
mkdir -p "$D/DEBIAN" "$D/usr/share/doc/$PK"
printf 'Package: %s\nVersion: 1.0-1\nArchitecture: all\nMaintainer: sandgate tests <t@example.test>\nDescription: sandgate test package\n' "$PK" >"$D/DEBIAN/control"
echo "test" >"$D/usr/share/doc/$PK/README"
dpkg-deb --root-owner-group -b "$D" "$T_TMP/${PK}_1.0-1_all.deb" >/dev/null
cleanup "dpkg --purge $PK"
sgrun --session p1 --cwd "$T_TMP" -- dpkg -i "${PK}_1.0-1_all.deb" >"$T_TMP/dpkg.log" 2>&1
check "dpkg installed $PK" sh -c "dpkg-query -W -f='\${Status}' $PK | grep -q 'install ok installed'"
wait_pkg "$PK"
e=$(pkg "$PK")
debsha=$(sha256sum "$T_TMP/${PK}_1.0-1_all.deb" | cut -d' ' -f1)
pcheck "dpkg: manager, name, version, requested" "$e" \
	".manager == \"dpkg\" and .tool == \"dpkg\" and .resolved_version == \"1.0-1\" and
	 .requested == \"${PK}_1.0-1_all.deb\" and .dependency == false"
pcheck "dpkg: source and hash are the .deb file" "$e" \
	".registry == \"file://$T_TMP/${PK}_1.0-1_all.deb\" and .hash.algo == \"sha256\" and
	 .hash.value == \"$debsha\" and .hash.kind == \"archive\" and .approved_source == false"

# ---- 5. apt-get install ./FILE.deb: one run, its dpkg child inside it ------------------------
PK2=sandgate-test-pkg2-$$
D=$T_TMP/deb/$PK2
mkdir -p "$D/DEBIAN"
printf 'Package: %s\nVersion: 2.0-1\nArchitecture: all\nMaintainer: sandgate tests <t@example.test>\nDescription: sandgate test package\n' "$PK2" >"$D/DEBIAN/control"
dpkg-deb --root-owner-group -b "$D" "$T_TMP/${PK2}_2.0-1_all.deb" >/dev/null
cleanup "dpkg --purge $PK2"
sgrun --session p1 --cwd "$T_TMP" -- env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	--no-install-recommends "./${PK2}_2.0-1_all.deb" >"$T_TMP/apt.log" 2>&1
check "apt-get installed $PK2" sh -c "dpkg-query -W -f='\${Status}' $PK2 | grep -q 'install ok installed'"
wait_pkg "$PK2"
e=$(pkg "$PK2")
debsha=$(sha256sum "$T_TMP/${PK2}_2.0-1_all.deb" | cut -d' ' -f1)
pcheck "apt: manager apt (not its dpkg child), version, requested file" "$e" \
	".manager == \"apt\" and .tool == \"apt-get\" and .resolved_version == \"2.0-1\" and
	 .requested == \"./${PK2}_2.0-1_all.deb\" and .dependency == false"
pcheck "apt: source and hash are the .deb file" "$e" \
	".registry == \"file://$T_TMP/${PK2}_2.0-1_all.deb\" and .hash.value == \"$debsha\" and
	 .hash.kind == \"archive\""
n=$(ev package.install p1 | jq -c --arg n "$PK2" 'select(.name == $n)' | wc -l)
check "apt: one event, not one more for dpkg ($n)" test "$n" -eq 1

# ---- 6. cargo install --path, offline (where cargo is installed) ---------------------------
NINST=7
if command -v cargo >/dev/null; then
	CG=$T_TMP/cargo
	mkdir -p "$CG"
	(cd "$CG" && cargo new --bin --vcs none -q sgcrate)
	sgrun --session p1 --cwd "$CG" -- env CARGO_HOME="$CG/home" cargo install --offline -q \
		--path sgcrate >"$T_TMP/cargo.log" 2>&1
	wait_pkg sgcrate
	e=$(pkg sgcrate)
	pcheck "cargo: manager, version, requested path, source (env CARGO_HOME seen)" "$e" \
		".manager == \"cargo\" and .resolved_version == \"0.1.0\" and .requested == \"sgcrate\"
		 and .dependency == false and .registry == \"file://$CG/sgcrate\" and .hash == null
		 and .location == \"$CG/home/.crates2.json\" and .approved_source == false"
	NINST=8
else
	echo "# cargo not installed: its part is not run"
fi

# ---- nothing for what is not an install, nothing outside the session ---------------------
sgrun --session p1 -- dpkg -l "$PK" >/dev/null 2>&1
sgrun --session p1 -- sh -c 'sleep 0.5' after-dpkg-l-marker
wait_for "the last exec" 10 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F after-dpkg-l-marker)\" ]"
n=$(ev package.install p1 | wc -l)
check "$NINST installs in p1, none from dpkg -l ($n)" test "$n" -eq "$NINST"
n=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "package.install" and .session_id != "p1")' | wc -l)
check "every package.install but p2's npm one belongs to p1 ($n)" test "$n" -eq 1

[ -n "${PKG_DEBUG:-}" ] && { rm -rf "$PKG_DEBUG"; mkdir -p "$PKG_DEBUG"; cp -r "$T_TMP"/*.log "$SG_STATE/journal" "$PKG_DEBUG"; }
q=$("$BIN/sandgate" query --state-dir "$SG_STATE" --session p1 --package sgdep@1.0 | jq -r .name | tr '\n' ' ')
check "sandgate query --package sgdep@1.0 finds it ($q)" test "$q" = "sgdep "

stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
finish
