#!/usr/bin/env bash
# A root process in a session started by the DEFAULT `sandgate run` tries what a hostile
# agent tries (issue 15): leave its cgroup (v2 and v1) or enter another session's, flush
# nftables, nsenter, unshare -n, send from an AF_PACKET socket and raw ICMPv6, ptrace and
# kill host processes and the daemon, read the journal key, write the journal and its
# state, auditctl, real-time priority, mount, sysctl, sysrq, make a user namespace. Each attempt is measured where it would land
# (the host's view of cgroups, the lab's receiver, the decoy table, the audit rule list)
# and has a control: the same attempt from a --privileged session (or the host) succeeds,
# so the lab would see it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/contain_helpers.sh"
require_root

NS=sgc$$
VA=sgca$$
VB=sgcb$$
DECOY_T=sgc_decoy_$$
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}"
start_daemon a --config "$T_TMP/c.yaml"

for s in c1 o1; do sg session create --id $s >/dev/null && sg session start $s >/dev/null; done
sg session create --id p1 --privileged >/dev/null && sg session start p1 >/dev/null
sg session create --id a1 --cap-add CAP_SYS_ADMIN >/dev/null && sg session start a1 >/dev/null
for s in c1 o1 p1 a1; do sgrun --session $s -- sleep 600 >/dev/null 2>&1 & done
sleep 0.5

# ---- what a contained command holds ------------------------------------------------
inside c1 'grep -E "^(CapBnd|CapEff|NoNewPrivs)" /proc/self/status; echo pid=$$; grep ^0:: /proc/self/cgroup; ls /proc | grep -c "^[0-9]"'
bnd=$(awk '/^CapBnd/ {print $2}' <<<"$OUT")
check "bounding set has no SYS_ADMIN/NET_ADMIN/NET_RAW/SYS_PTRACE/SYS_NICE/SYS_MODULE ($bnd)" \
	test $(( 0x${bnd:-ffffffffff} & ((1<<21)|(1<<12)|(1<<13)|(1<<19)|(1<<23)|(1<<16)) )) -eq 0
check "no_new_privs set" grep -q "NoNewPrivs:.1" <<<"$OUT"
check "its own pid namespace (a small pid)" grep -qE "^pid=[0-9]$" <<<"$OUT"
check "cgroup namespace rooted at the session" grep -qx "0::/" <<<"$OUT"
e=$(ev session.attach c1 | tail -1)
jcheck "session.attach says contained, with the holder" "$e" \
	'.containment.mode == "contained" and .containment.holder_pid > 1 and .containment.pidns > 0'
jcheck "session.create records --privileged" "$(ev session.create p1)" \
	'.containment.privileged == true and .containment.mode == "privileged"'
jcheck "session.create records --cap-add" "$(ev session.create a1)" \
	'.containment.cap_add == ["CAP_SYS_ADMIN"] and .containment.privileged == false'
inside c1 'sleep 0.1 & wait; ls /proc | grep -c "^[0-9]"'
check "a second run shares the session's pid namespace (sees the first's sleep)" \
	test "$(tail -1 <<<"$OUT")" -ge 3

# ---- cgroup: out of the session (v2 and v1), into another session ------------------------
bg_inside c1 "mount -t cgroup2 none /mnt; echo \$\$ > /sys/fs/cgroup/unified/cgroup.procs;
	for c in memory cpu pids; do echo \$\$ > /sys/fs/cgroup/\$c/cgroup.procs; done;
	echo \$\$ > /sys/fs/cgroup/unified/$SG_PARENT/o1/cgroup.procs; exec sleep 3101$$"
hp=$(host_pid c1 3101$$)
check "the attempt ran (host pid $hp)" test -n "$hp"
if [ -n "$hp" ]; then
	check "still in the session's v2 cgroup (host view)" grep -qx "0::/$SG_PARENT/c1" /proc/$hp/cgroup
	for c in memory cpu pids; do
		[ -d /sys/fs/cgroup/$c/$SG_PARENT/c1 ] && check "still in the session's v1 $c cgroup" \
			grep -qE "^[0-9]+:([a-z,]*,)?$c(,[a-z,]*)?:/$SG_PARENT/c1\$" /proc/$hp/cgroup
	done
	check "not in session o1" sh -c "! grep -qx $hp $CG2/$SG_PARENT/o1/cgroup.procs"
	kill -9 "$hp"
fi
cleanup "rmdir /tmp/sgc$$"
bg_inside a1 "mkdir -p /tmp/sgc$$; mount -t cgroup2 none /tmp/sgc$$ &&
	echo procs=\$(wc -l < /tmp/sgc$$/cgroup.procs) && echo \$\$ > /tmp/sgc$$/cgroup.procs &&
	grep ^0:: /proc/self/cgroup; exec sleep 3102$$"
hp=$(host_pid a1 3102$$)
OUT=$(cat "$T_TMP/bg.out")
check "with CAP_SYS_ADMIN kept, a cgroup2 mount inside is rooted at the session ($OUT)" \
	grep -qx "0::/" <<<"$OUT"
check "and writing its root cgroup.procs leaves the process in the session (host view)" \
	grep -qx "0::/$SG_PARENT/a1" /proc/${hp:-0}/cgroup
[ -n "$hp" ] && kill -9 "$hp"
inside p1 "echo \$\$ > $CG2/$SG_PARENT/o1/cgroup.procs; grep ^0:: /proc/self/cgroup"
check "control: a privileged run moves itself into another session" grep -qx "0::/$SG_PARENT/o1" <<<"$OUT"
inside p1 "echo \$\$ > $CG2/cgroup.procs; grep ^0:: /proc/self/cgroup"
check "control: a privileged run leaves its session cgroup" grep -qx "0::/" <<<"$OUT"

# ---- nftables -----------------------------------------------------------------------
nft add table inet $DECOY_T && cleanup "nft delete table inet $DECOY_T"
nft add chain inet $DECOY_T c && nft add rule inet $DECOY_T c counter
inside c1 "nft flush table inet $DECOY_T; nft list ruleset"
denied "nft flush of a table in the session's network namespace"
check "the decoy table's rule is still there" test "$(nft list table inet $DECOY_T | grep -c counter)" -eq 1
inside p1 "nft flush table inet $DECOY_T"
check "control: a privileged run flushes it" test "$(nft list table inet $DECOY_T | grep -c counter)" -eq 0

# ---- namespaces --------------------------------------------------------------------
ip netns add $NS && cleanup "ip netns del $NS"
ip link add $VA type veth peer name $VB netns $NS && cleanup "ip link del $VA"
ip addr add 2001:db8:15::1/64 dev $VA nodad && ip link set $VA up
ip -n $NS addr add 2001:db8:15::2/64 dev $VB nodad && ip -n $NS link set $VB up
inside c1 "nsenter --net=/run/netns/$NS ip -o link"
denied "nsenter into the lab's network namespace"
check "nothing of the lab namespace seen" lacks "$VB" "$OUT"
inside p1 "nsenter --net=/run/netns/$NS ip -o link"
check "control: a privileged run enters it" grep -q "$VB" <<<"$OUT"
inside c1 "nsenter -t 1 -a true"
denied "nsenter into every namespace of pid 1 (the session's holder)"
inside c1 "unshare -n true"
denied "unshare -n"
inside p1 "unshare -n true"
worked "control: a privileged run unshares"

# ---- user namespaces: none, so no capability comes back over namespaces of its own ---------
# (docs/threat-model.md "User namespaces": mounts, nf_tables in a netns of its own, v1
# cgroup hierarchies mounted at the host's root)
for how in unshare clone clone3; do
	inside c1 "$PROBE userns_$how"
	denied "a user namespace by $how"
	inside p1 "$PROBE userns_$how"
	worked "control: a privileged run makes one by $how"
done
inside c1 "unshare -Urm sh -c 'mount -t tmpfs none /mnt && echo OK mounted'"
denied "unshare -Urm, then mount"
inside c1 "unshare -Urn sh -c 'nft add table inet sgu && echo OK nft'"
denied "unshare -Urn, then nf_tables in its own network namespace"
inside c1 "mkdir -p /tmp/sgu$$ && unshare -UrmC sh -c 'mount -t cgroup -o none,name=systemd none /tmp/sgu$$ && echo OK cgroup v1'"
denied "unshare -UrmC, then a cgroup v1 mount"
inside p1 "unshare -Urm sh -c 'mount -t tmpfs none /mnt && echo OK mounted'"
worked "control: a privileged run does (unshare -Urm, mount)"
inside c1 "sh -c 'true' && $PY -c 'import subprocess; subprocess.run([\"true\"], check=True)' && echo OK spawn"
worked "processes still start (clone3 refused with ENOSYS: the C library uses clone)"

# ---- packets the gateway could not classify -----------------------------------------
for who in c1 p1; do
	receive recv_packet $VB "pkt-$who-$$"
	inside $who "$PROBE packet $VA pkt-$who-$$"
	received
	eval "out_$who=\$OUT rc_$who=\$RC n_$who=\$N"
done
RC=$rc_c1 OUT=$out_c1 denied "AF_PACKET socket"
check "no frame arrived from the contained run ($n_c1)" test "$n_c1" = 0
RC=$rc_p1 OUT=$out_p1 worked "control: a privileged run sends the frame"
check "control: the privileged run's frame arrived ($n_p1)" test "$n_p1" -ge 1
for who in c1 p1; do
	receive recv_icmp6 "ns6-$who-$$"
	inside $who "$PROBE icmp6 2001:db8:15::2 ns6-$who-$$"
	received
	eval "out_$who=\$OUT rc_$who=\$RC n_$who=\$N"
done
RC=$rc_c1 OUT=$out_c1 denied "raw ICMPv6 (a neighbour solicitation with 64 bytes of data)"
check "no ICMPv6 arrived from the contained run ($n_c1)" test "$n_c1" = 0
RC=$rc_p1 OUT=$out_p1 worked "control: a privileged run sends the solicitation"
check "control: the privileged run's solicitation arrived ($n_p1)" test "$n_p1" -ge 1

# ---- host processes and the daemon --------------------------------------------------
sleep 600 &
DECOY=$!
cleanup "kill -9 $DECOY"
sleep 600 &
DECOY2=$!
cleanup "kill -9 $DECOY2"
inside c1 "$PROBE ptrace $DECOY"
denied "ptrace of a host process"
inside p1 "$PROBE ptrace $DECOY"
check "control: a privileged run ptraces it" grep -q "^OK ptrace" <<<"$OUT"
inside c1 "kill -9 $DPID; kill -9 $DECOY2"
denied "kill -9 of sandgated and of a host process"
check "sandgated is alive" kill -0 "$DPID"
check "the host process is alive" kill -0 "$DECOY2"
inside p1 "kill -9 $DECOY2"
sleep 0.2
check "control: a privileged run kills the host process" sh -c "! kill -0 $DECOY2 2>/dev/null"

# ---- the daemon's files -------------------------------------------------------------
check "control: the key is on the host" grep -q "PRIVATE KEY" "$SG_STATE/keys/journal.key"
inside c1 "cat $SG_STATE/keys/journal.key"
denied "reading the journal signing key"
check "no key material printed" lacks "PRIVATE KEY" "$OUT"
inside c1 "echo '{\"junk\":1}' >> $SG_STATE/journal/00000000000000000000.jsonl;
	: > $SG_STATE/journal/checkpoints; touch $SG_STATE/journal/x"
denied "writing the journal and its checkpoints"
check "no junk line in the journal" sh -c "! grep -qx '{\"junk\":1}' $SG_STATE/journal/*.jsonl"
check "control: the journal's state file is on the host" grep -q "^size " "$SG_STATE/journal/state"
inside c1 "echo junk-$$ > $SG_STATE/journal/state"
denied "writing the journal's state file"
check "the state file is the daemon's (no junk, its size line)" \
	sh -c "! grep -q junk-$$ '$SG_STATE/journal/state' && grep -q '^size ' '$SG_STATE/journal/state'"
inside c1 "ls -A $SG_STATE; ls -A $SG_STATE | wc -l"
check "the state directory looks empty from inside" test "$(tail -1 <<<"$OUT")" = 0
check "control: the control socket is a socket on the host" test -S "$SG_SOCK"
inside c1 "test -S $SG_SOCK && echo OK socket; $BIN/sandgate status --control $SG_SOCK"
denied "reaching the control socket (covered in the session's mount namespace)"
inside c1 "find /dev -type b | head -3"
check "no block device under the session's /dev" test -z "$OUT"
check "control: the host has block devices" test -n "$(find /dev -type b | head -1)"

# ---- audit, scheduling, mounts, sysctl ----------------------------------------------
touch "$T_TMP/audit-decoy"
enabled=$(auditctl -s | awk '/^enabled/ {print $2}')
inside c1 "auditctl -e 0; auditctl -D; auditctl -w $T_TMP/audit-decoy -k sgc$$"
denied "auditctl -e 0 / -D / -w"
check "audit still enabled ($enabled)" test "$(auditctl -s | awk '/^enabled/ {print $2}')" = "$enabled"
check "no rule added" sh -c "! auditctl -l | grep -q sgc$$"
cleanup "auditctl -W $T_TMP/audit-decoy -k sgc$$"
inside p1 "auditctl -w $T_TMP/audit-decoy -k sgc$$"
check "control: a privileged run adds an audit rule" sh -c "auditctl -l | grep -q sgc$$"
auditctl -W "$T_TMP/audit-decoy" -k sgc$$ >/dev/null 2>&1
inside c1 "chrt -f 50 true"
denied "real-time priority (chrt -f 50)"
inside c1 'renice -n -5 -p $$'
denied "a negative nice value"
# The session's v1 cpu cgroup has no real-time budget (cpu.rt_runtime_us 0) even for a
# privileged run: the control is the host.
check "control: the host takes real-time priority" chrt -f 50 true
inside c1 "mount -t tmpfs none /mnt"
denied "mount"
inside p1 "unshare -m sh -c 'mount -t tmpfs none /mnt'"
worked "control: a privileged run mounts (in a private mount namespace)"
fwd=$(cat /proc/sys/net/ipv4/ip_forward)
inside c1 "echo $fwd > /proc/sys/net/ipv4/ip_forward"
denied "writing a sysctl (the value it already has)"
inside p1 "echo $fwd > /proc/sys/net/ipv4/ip_forward"
worked "control: a privileged run writes it"
inside c1 "echo h > /proc/sysrq-trigger"
denied "writing /proc/sysrq-trigger"

# ---- the control socket: ancestry, not only the cgroup ------------------------------
last_denied() { journal_lines "$SG_STATE" | jq -c 'select(.event == "control.denied")' | tail -1; }
holder=$(ev session.attach c1 | tail -1 | jq -r .containment.holder_pid)
out=$("$BIN/sandgate" status --control "$SG_SOCK" 2>&1)
check "control: the host's sandgate status is answered" test $? -eq 0
out=$(nsenter -t "$holder" --pid -- "$BIN/sandgate" status --control "$SG_SOCK" 2>&1)
check "a peer in the session's pid namespace (host cgroup, host mounts) is refused" \
	grep -q "permission denied" <<<"$out"
jcheck "control.denied names the pid namespace" "$(last_denied)" '.reason | test("pid namespace")'
inside p1 "echo \$\$ > $CG2/cgroup.procs; grep ^0:: /proc/self/cgroup; $BIN/sandgate status --control $SG_SOCK"
check "a privileged run that left its cgroup ($(grep ^0:: <<<"$OUT"))..." grep -qx "0::/" <<<"$OUT"
check "... is refused: it is the process run put there" grep -q "permission denied" <<<"$OUT"
jcheck "control.denied names the ancestor" "$(last_denied)" '.reason | test("descends from")'

# ---- an orchestrator on the API gets the same containment ----------------------------
# session.attach moves the peer itself: an uncontained one (here socat on the host,
# as a client that skips session.contain would be) is refused, and stays out.
out=$(req '{"verb":"session.attach","args":{"id":"c1","argv0":"orchestrator"}}')
check "session.attach from an uncontained peer is refused ($(head -c 160 <<<"$out"))" \
	sh -c 'jq -e ".ok == false and (.error | test(\"not contained|no holder\"))" >/dev/null' _ <<<"$out"
check "... and session c1 did not take in a host process" \
	test "$(cat "$CG2/$SG_PARENT/c1/cgroup.procs" | xargs -r ps -o comm= -p | grep -c socat)" = 0

# ---- the journal was not touched; the lab sees a write when there is one --------------
check "journal verifies" "$BIN/sandgate" verify "$SG_STATE"
inside p1 "echo '{\"junk\":1}' >> $SG_STATE/journal/00000000000000000000.jsonl"
check "control: a privileged run writes the journal, and verify sees it" \
	sh -c "! '$BIN/sandgate' verify '$SG_STATE' >/dev/null 2>&1"
finish
