#!/usr/bin/env bash
# A container run by a real OCI runtime (runc, from Debian) becomes a session by its
# cgroup: `session create --cgroup PATH --iface VETH --end-when-empty` adopts the cgroup
# the runtime made for the container (a path outside sandgate's own parent, whose leaf
# name is no session id), and the container's execs, files, DNS and flows land in the
# session; a process moved into the cgroup later is attributed, and refused by the
# control socket like any session process; the container's exit ends the session.
# Control: the same commands in a sibling cgroup nobody adopted are no session's.
# Root filesystem: busybox-static, built here offline.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
command -v runc >/dev/null || { echo "missing runc"; echo "0 passed, 1 failed"; exit 1; }
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
	{ echo "missing busybox-static"; echo "0 passed, 1 failed"; exit 1; }
lab_up

CTR=sgctr-$$                      # the runtime's container id
CGREL=/sgrt-$$.slice/ctr-$$.scope  # the runtime's cgroup (v2 path), as docker's scopes
SID=agent-$$                      # the orchestrator's session id: unrelated to the path
B=$T_TMP/bundle
remove_runtime() {
	local h
	runc delete -f "$CTR"
	for h in "$CG2" /sys/fs/cgroup/*; do
		[ -d "$h/sgrt-$$.slice" ] || continue
		find "$h/sgrt-$$.slice" -mindepth 1 -depth -type d -exec rmdir {} \;
		rmdir "$h/sgrt-$$.slice"
	done
}
cleanup remove_runtime

# ---- the root filesystem and the bundle -----------------------------------------------------
mkdir -p "$B/rootfs"/{bin,proc,dev,sys,tmp,etc}
cp /bin/busybox "$B/rootfs/bin/"
for a in sh cat echo sleep nslookup wget; do ln -s busybox "$B/rootfs/bin/$a"; done
(cd "$B" && runc spec)
python3 - "$B/config.json" "$CGREL" "/var/run/netns/$SBX" <<'PY'
import json, sys
p, cg, ns = sys.argv[1:]
c = json.load(open(p))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sh", "-c",
    "echo from-the-container > /tmp/out.txt; "
    "nslookup box.web.test 198.18.1.2 > /tmp/dns.txt; "
    "wget -q -O /tmp/page http://198.18.1.2/f100k; sleep 1"]
c["root"]["readonly"] = False
c["linux"]["cgroupsPath"] = cg
c["linux"]["namespaces"] = [n if n["type"] != "network" else {"type": "network", "path": ns}
                            for n in c["linux"]["namespaces"]]
json.dump(c, open(p, "w"))
PY

gw_config "$T_TMP/c.yaml" "  mode: interface"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
lab_fast_conntrack

# ---- the runtime makes the container (its init waits in the cgroup), we adopt it ----------------
runc create --bundle "$B" "$CTR" </dev/null >"$T_TMP/ctr.out" 2>"$T_TMP/ctr.err"
check "runc created the container" test "$(runc state "$CTR" | jq -r .status)" = created
check "its cgroup is the runtime's, outside sandgate's parent" test -d "$CG2$CGREL"
ino=$(stat -c %i "$CG2$CGREL")
out=$(sg session create --id "$SID" --cgroup "$CGREL" --iface gwsbx --end-when-empty)
jcheck "session create --cgroup adopts it" "$out" \
	".id == \"$SID\" and .cgroup == \"$CGREL\" and .adopted == true and .cgroup_id == $ino"
jcheck "session.create: cgroup, cgroup_id, ifaces, end_when_empty" "$(ev session.create "$SID")" \
	".cgroup == \"$CGREL\" and .cgroup_id == $ino and .ifaces == [\"gwsbx\"] and .end_when_empty == true"
sg session start "$SID" >/dev/null

# A sibling cgroup nobody adopted (the control): the same exec there is no session's.
mkdir -p "$CG2/sgrt-$$.slice/other"
sh -c "echo \$\$ >'$CG2/sgrt-$$.slice/other/cgroup.procs'; exec /bin/busybox echo sgctl-$$" >/dev/null

# A process moved in later: attributed, and refused by the control socket.
sh -c "echo \$\$ >'$CG2$CGREL/cgroup.procs'; exec '$BIN/sandgate' status --control '$SG_SOCK'" \
	>/dev/null 2>"$T_TMP/moved.err"
check "a process moved into the adopted cgroup is refused by the control socket" \
	grep -qi "refused\|denied\|not allowed\|closed\|reset" "$T_TMP/moved.err"
echo "moved-in client: $(cat "$T_TMP/moved.err")"
jcheck "... and control.denied names it a session cgroup" \
	"$(evq '.event == "control.denied"' | tail -1)" '.reason | test("session")'

runc start "$CTR"
wait_for "the container's end" 20 sh -c "[ \"\$(runc state '$CTR' 2>/dev/null | jq -r .status)\" = stopped ]"
check "the container ran (its DNS answer)" grep -q "198.18.1.2" "$B/rootfs/tmp/dns.txt"
check "the container ran (100 KiB over HTTP)" test "$(stat -c %s "$B/rootfs/tmp/page")" = 102400

wait_ev 10 ".event == \"session.terminate\" and .session_id == \"$SID\""
jcheck "the container's exit ends the session (end_when_empty)" "$(ev session.terminate "$SID")" \
	'.reason == "normal" and .source == "kernel"'
execs=$(ev process.exec "$SID" | jq -s -c '[.[] | {cmd, exe, args}]')
echo "execs: $execs"
jcheck "process.exec: the container's shell" "$execs" 'any(.[]; .cmd == "/bin/sh" or .cmd == "sh")'
jcheck "process.exec: nslookup and wget inside it" "$execs" \
	'any(.[]; .cmd == "nslookup") and any(.[]; .cmd == "wget" and (.args | index("http://198.18.1.2/f100k")))'
jcheck "process.exec: the process moved in later" "$execs" 'any(.[]; .exe | endswith("/sandgate"))'
check "control: the sibling cgroup's exec is no session's" \
	test -z "$(evq ".event == \"process.exec\" and (.args | index(\"sgctl-$$\")) and .session_id != null")"
e=$(evq ".event == \"file.create\" or .event == \"file.write\"" | jq -c --arg p "$B/rootfs/tmp/out.txt" \
	--arg s "$SID" 'select(.path == $p and .session_id == $s)' | head -1)
echeck "file.* of the container's write, in the session" "$e" '.pid > 0'
e=$(evq ".event == \"net.dns\" and .qname == \"box.web.test\"" | head -1)
echeck "net.dns from the container's veth, in the session" "$e" ".session_id == \"$SID\" and .rcode == \"NOERROR\""
e=$(connect_ev_port "$SID" 80)
echeck "net.connect of its wget, in the session" "$e" '.dst.ip == "198.18.1.2" and .src.ip == "198.18.0.2"'
fid=$(jq -r '.flow_id // empty' <<<"$e")
e=$([ -n "$fid" ] && flow_ev_id "$fid")
echeck "net.flow: 100 KiB in, in the session" "$e" ".session_id == \"$SID\" and .bytes_in >= 102400"

sg session cleanup "$SID" >/dev/null
jcheck "cleanup leaves the runtime's cgroup to the runtime" "$(ev session.cleanup "$SID")" '.cgroup_removed == false'
check "the runtime's cgroup is still there" test -d "$CG2$CGREL"
check "daemon exits 0 at SIGTERM" stop_daemon
finish
