#!/usr/bin/env bash
# Who may talk to the control socket: root and the control group; never a process in a
# session cgroup (even root); every refusal is recorded. Bad requests get an error and
# the daemon keeps serving.
. "$(dirname "$0")/lib.sh"
require_root

GROUP=sgctl$$
groupadd "$GROUP"
cleanup "groupdel $GROUP"
cat >"$T_TMP/c.yaml" <<YAML
gateway: {enabled: false}
control_group: $GROUP
cgroup:
  parent: sgtest$$
YAML
start_daemon a --config "$T_TMP/c.yaml"
chmod 0755 "$T_TMP"   # let unprivileged users reach the socket path at all

check "root is served" "$BIN/sandgate" status --control "$SG_SOCK"
check "nobody is refused" \
	sh -c "! setpriv --reuid=nobody --regid=nogroup --clear-groups '$BIN/sandgate' status --control '$SG_SOCK' 2>/dev/null"
# Even with the file mode opened up, the daemon checks the peer's credentials itself.
chmod 0666 "$SG_SOCK"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$BIN/sandgate" status --control "$SG_SOCK" 2>&1)
check "nobody is refused by the daemon, not just the file mode" grep -q "permission denied" <<<"$out"
chmod 0660 "$SG_SOCK"
gid=$(getent group "$GROUP" | cut -d: -f3)
check "nobody with the control group is served" \
	setpriv --reuid=nobody --regid=nogroup --groups="$gid" "$BIN/sandgate" status --control "$SG_SOCK"

# A root process inside a session cgroup: refused by the daemon itself.
CG=/sys/fs/cgroup/unified
[ -d "$CG" ] || CG=/sys/fs/cgroup
mkdir -p "$CG/sgtest$$/s1"
cleanup "rmdir '$CG/sgtest$$/s1' '$CG/sgtest$$'"
out=$(sh -c "echo \$\$ > '$CG/sgtest$$/s1/cgroup.procs' && exec '$BIN/sandgate' status --control '$SG_SOCK'" 2>&1)
rc=$?
check "root inside a session cgroup is refused" test $rc -ne 0
check "with a permission error" grep -q "permission denied" <<<"$out"
# A sibling whose name only starts like the session parent is not a session.
mkdir -p "$CG/sgtest$$-other"
cleanup "rmdir '$CG/sgtest$$-other'"
check "a look-alike cgroup name is not a session" \
	sh -c "echo \$\$ > '$CG/sgtest$$-other/cgroup.procs' && exec '$BIN/sandgate' status --control '$SG_SOCK' >/dev/null"

# Bad requests: an error each, state unchanged, the daemon keeps serving.
req() { printf '%s\n' "$1" | timeout 5 socat - "UNIX-CONNECT:$SG_SOCK"; }
check "malformed JSON gets an error" sh -c "$(declare -f req); SG_SOCK='$SG_SOCK' req '{nope' | grep -q '\"ok\":false'"
check "unknown verb gets an error" sh -c "$(declare -f req); SG_SOCK='$SG_SOCK' req '{\"verb\":\"launch.missiles\"}' | grep -q 'unknown verb'"
check "non-object args gets an error" sh -c "$(declare -f req); SG_SOCK='$SG_SOCK' req '{\"verb\":\"ping\",\"args\":[1]}' | grep -q '\"ok\":false'"
head -c 400000 /dev/zero | tr '\0' 'a' >"$T_TMP/big"
check "oversized request gets an error" sh -c "timeout 5 socat - 'UNIX-CONNECT:$SG_SOCK' <'$T_TMP/big' | grep -q 'too large'"
{ cat "$T_TMP/big"; printf '\n{"verb":"ping"}\n{"verb":"ping"}\n'; } >"$T_TMP/big2"
out=$(timeout 5 socat - "UNIX-CONNECT:$SG_SOCK" <"$T_TMP/big2")
check "after an oversized request the same connection is served again" \
	test "$(grep -c 'too large' <<<"$out")" -eq 1 -a "$(grep -c pong <<<"$out")" -eq 2
check "still serving after bad requests" "$BIN/sandgate" status --control "$SG_SOCK"

stop_daemon
check "refusals are recorded" test "$(count_events "$SG_STATE" control.denied)" -ge 1
check "journal verifies" "$BIN/sandgate" verify "$SG_STATE"
finish
