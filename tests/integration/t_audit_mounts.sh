#!/usr/bin/env bash
# Every filesystem a session can write is watched (issue 16.3): /dev/shm (a tmpfs there
# at start), a tmpfs the session mounts in the host's namespace after start, one in its
# own mount namespace; each new mount is a file.mount; a host mount is a host-level one;
# unmounting is not blocked by the sensor (it holds a detached clone, not the mount).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

W=$T_TMP/work
O=$T_TMP/other
mkdir -p "$W/nsm" "$O/hmnt" "$O/hostonly" "$O/fast"
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  file_marks: [\"/\"]
  sensitive_paths: []"
start_daemon a --config "$T_TMP/c.yaml"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 300 &
KEEP=$!
cleanup "kill $KEEP"
cleanup "umount -l '$O/hmnt'; umount -l '$O/hostonly'; umount -l '$O/fast'; rm -f /dev/shm/sgshm-$$"

evq() { ev "$1" s1 | jq -c "select($2)"; }
evhas() { [ -n "$(evq "$1" "$2")" ]; }
hostev() { journal_lines "$SG_STATE" | jq -c "select(.event == \"$1\" and .session_id == null and $2)"; }
hosthas() { [ -n "$(hostev "$1" "$2")" ]; }

# ---- /dev/shm, mounted before the daemon started -----------------------------------------
sgrun --session s1 -- sh -c "echo x >/dev/shm/sgshm-$$"
check "/dev/shm: file.write" wait_for "shm write" 10 evhas file.write ".path == \"/dev/shm/sgshm-$$\""
rm -f "/dev/shm/sgshm-$$"

# ---- a tmpfs the session mounts in the host's namespace after start ---------------------
# Mounting needs CAP_SYS_ADMIN, which a contained run does not keep (t_contain_run.sh):
# these are privileged runs, in the host's mount namespace.
sgrun --privileged --session s1 -- mount -t tmpfs sghost "$O/hmnt"
check "host-namespace tmpfs: file.mount of the session" wait_for "host mount" 10 evhas file.mount \
	".target == \"$O/hmnt\" and .fstype == \"tmpfs\" and (.device // .source) == \"sghost\" and (.pid | type) == \"number\""
sleep 0.3
sgrun --privileged --session s1 -- sh -c "echo secret >'$O/hmnt/f'"
check "its files are watched: file.write" wait_for "hmnt write" 10 evhas file.write ".path == \"$O/hmnt/f\""
sgrun --privileged --session s1 -- umount "$O/hmnt"
check "unmount is not blocked by the sensor (umount exit $?)" test $? -eq 0
check "file.unmount" wait_for "host unmount" 10 evhas file.unmount ".target == \"$O/hmnt\""

# Mounted and written at once (no pause): the mark follows the mount event within
# milliseconds, and a new tmpfs is listed when marked: what it holds was written before.
sgrun --privileged --session s1 -- sh -c "mount -t tmpfs sgfast '$O/fast' && echo y >'$O/fast/g'"
check "mount then write at once: file.write" wait_for "fast write" 10 evhas file.write ".path == \"$O/fast/g\""
e=$(evq file.write ".path == \"$O/fast/g\"" | head -1)
echo "# mount then write at once: $(jq -c '{pid, written_before_mark}' <<<"$e")"
umount "$O/fast"

# ---- a host process's mount: a host-level file.mount ----------------------------------
mount -t tmpfs sghostonly "$O/hostonly"
check "a host mount: file.mount with session_id null" wait_for "hostonly" 10 hosthas file.mount \
	".target == \"$O/hostonly\""
umount "$O/hostonly"

# ---- a tmpfs in the session's own mount namespace -----------------------------------------
# A namespace made by unshare is noted at its first exec; a mount right after can come
# before its mount-event mark, and then only the 1 s mountinfo reading finds it: a write
# within that first second is not caught up for a namespace's own mounts (issue 16 open;
# the host-namespace case above is). The write waits past one reading.
sgrun --privileged --session s1 -- unshare -m --propagation private sh -c \
	"mount -t tmpfs sgns '$W/nsm'; sleep 1.5; echo z >'$W/nsm/f'; sleep 1.5; umount '$W/nsm'"
check "own namespace: file.mount" wait_for "ns mount" 10 evhas file.mount ".target == \"$W/nsm\" and .fstype == \"tmpfs\""
check "own namespace: its files are watched" wait_for "ns write" 10 evhas file.write ".path == \"$W/nsm/f\""
n=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "sensor.loss" and (.sensor | startswith("fanotify")))' | wc -l)
check "no file sensor loss" test "$n" -eq 0

kill "$KEEP" 2>/dev/null
stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
grep -q "are not watched" "$T_TMP/a.log" && grep "are not watched" "$T_TMP/a.log" | sed 's/^/# /'
finish
