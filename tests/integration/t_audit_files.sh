#!/usr/bin/env bash
# file.* events from fanotify for a real session: create, write (coalesced), rename and
# delete with full paths; reads logged only under a sensitive prefix; nothing for host
# processes or for the daemon itself.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

S=$T_TMP/secret
W=$T_TMP/work
O=$T_TMP/other
mkdir -p "$S" "$W" "$O" && echo key >"$S/key" && echo plain >"$O/plain"
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  file_marks: [\"/\"]
  sensitive_paths: [\"$S\", \"~/.ssh\"]"
start_daemon a --config "$T_TMP/c.yaml"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 120 &
KEEP=$!
cleanup "kill $KEEP"

# fev TYPE PATH: the session's TYPE events on PATH.
fev() { ev "$1" s1 | jq -c --arg p "$2" 'select(.path == $p)'; }
has() { [ -n "$(fev "$1" "$2")" ]; }

# ---- create, write, rename, delete ---------------------------------------------------------
sgrun --session s1 -- sh -c 'echo data >a.txt; mv a.txt b.txt; rm b.txt'
wait_for "file.delete" 10 has file.delete "$W/b.txt"
e=$(fev file.create "$W/a.txt")
jcheck "file.create with the full path, pid, uid" "$e" '(.pid | type) == "number" and .uid == 0 and .source == "kernel"'
check "file.write after the write" has file.write "$W/a.txt"
e=$(ev file.rename s1)
jcheck "file.rename with path and new_path" "$e" ".path == \"$W/a.txt\" and .new_path == \"$W/b.txt\""
check "file.delete of the renamed file" has file.delete "$W/b.txt"

# ---- writes coalesced per process and file -------------------------------------------------
sgrun --session s1 -- dd if=/dev/zero of="$W/big" bs=4k count=500 status=none
wait_for "file.write of big" 10 has file.write "$W/big"
n=$(fev file.write "$W/big" | wc -l)
check "500 writes, one file.write ($n)" test "$n" -eq 1
# A file kept open: reported once within the flush interval, before the close.
sgrun --session s1 -- sh -c 'exec 3>open.txt; echo x >&3; sleep 2.5; echo y >&3' &
OPENER=$!
check "a file still open is reported within the flush interval" \
	wait_for "file.write of open.txt" 2 has file.write "$W/open.txt"
wait "$OPENER"

# ---- reads: only under the sensitive prefixes (and the session's workdir) ---------------
# (the workdir became a read-logged place with issue 18: the plain file lives outside it)
sgrun --session s1 -- cat "$S/key" "$O/plain" >/dev/null
check "file.read under the sensitive prefix" wait_for "file.read" 10 has file.read "$S/key"
e=$(fev file.read "$S/key")
jcheck "file.read fields" "$e" '(.pid | type) == "number" and .uid == 0'
check "no file.read outside sensitive paths" test -z "$(fev file.read "$O/plain")"

# ---- host and daemon: nothing ----------------------------------------------------------------
echo host >"$W/host.txt"; cat "$S/key" >/dev/null; rm "$W/host.txt"
sgrun --session s1 -- sh -c 'echo z >last.txt'
wait_for "the last session write" 10 has file.write "$W/last.txt"
check "host writes give no event" test -z "$(journal_lines "$SG_STATE" | grep -F host.txt)"
# (host mounts are reported as host-level file.mount/unmount since issue 16.3: not these)
n=$(journal_lines "$SG_STATE" | jq -c 'select((.event | startswith("file.")) and .session_id != "s1" and
	((.event == "file.mount" or .event == "file.unmount") and .session_id == null | not))' | wc -l)
check "every file event belongs to the session (none of the daemon's own)" test "$n" -eq 0
n=$(journal_lines "$SG_STATE" | jq -c 'select((.event | startswith("file.")) and (.path // "" | startswith("'"$SG_STATE"'")))' | wc -l)
check "the journal's own writes are not logged" test "$n" -eq 0

# ---- a mount in the session's own mount namespace -------------------------------------
# Mounts are polled once a second: each state is held longer than that. From Linux 6.15
# fanotify mount events also trigger a reading at once, and name the mounting process.
KV=$(uname -r | awk -F. '{print $1 * 1000 + $2}')
mkdir -p "$W/mnt" "$W/mnt2"
# Mounting needs CAP_SYS_ADMIN, which a contained run does not have (docs/threat-model.md):
# these runs are --privileged, in the host's mount namespace as before.
sgrun --privileged --session s1 -- unshare -m --propagation private sh -c \
	"sleep 0.3; mount -t tmpfs sgtmpfs '$W/mnt'; sleep 2.5; umount '$W/mnt'; sleep 2.5"
mev() { ev "$1" s1 | jq -c --arg t "$2" 'select(.target == $t)'; }
# pid_of CMD ARG: the pid of the session's exec of CMD with ARG among its arguments.
pid_of() { ev process.exec s1 | jq -r --arg c "$1" --arg a "$2" 'select(.cmd == $c and any(.args[]?; . == $a)) | .pid' | head -1; }
check "file.mount seen" wait_for "file.mount" 5 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F file.mount)\" ]"
e=$(mev file.mount "$W/mnt")
jcheck "file.mount: target, device, fstype" "$e" '.fstype == "tmpfs" and .device == "sgtmpfs" and .source == "kernel"'
check "file.unmount seen" wait_for "file.unmount" 5 sh -c "[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F file.unmount)\" ]"
e=$(mev file.unmount "$W/mnt")
jcheck "file.unmount: the same mount" "$e" '.fstype == "tmpfs" and .device == "sgtmpfs"'
if [ "$KV" -ge 6015 ]; then
	e=$(mev file.mount "$W/mnt")
	jcheck "file.mount names the mount process (fanotify)" "$e" ".pid == $(pid_of mount sgtmpfs)"
	e=$(mev file.unmount "$W/mnt")
	jcheck "file.unmount names the umount process (fanotify)" "$e" ".pid == $(pid_of umount "$W/mnt")"
	# A mount that lives 0.3 s: between two polls, seen only through the mount events.
	sgrun --privileged --session s1 -- unshare -m --propagation private sh -c \
		"sleep 0.3; mount -t tmpfs sgshort '$W/mnt2'; sleep 0.3; umount '$W/mnt2'"
	check "a 0.3 s mount is seen" wait_for "short file.unmount" 5 sh -c \
		"[ -n \"\$(cat '$SG_STATE'/journal/*.jsonl | grep -F file.unmount | grep -F sgshort)\" ]"
	e=$(mev file.mount "$W/mnt2")
	jcheck "0.3 s mount: device, fstype, the mount process" "$e" \
		".fstype == \"tmpfs\" and .device == \"sgshort\" and .pid == $(pid_of mount sgshort)"
else
	e=$(mev file.mount "$W/mnt")
	jcheck "file.mount by polling: pid null" "$e" '.pid == null'
fi

kill "$KEEP" 2>/dev/null
stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
finish
