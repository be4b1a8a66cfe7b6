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
sgrun --session s1 -- sleep 300 >/dev/null 2>&1 &
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
# before its mount-event mark, and then only the next mountinfo reading finds it. Its
# filesystem is cloned through the namespace the watcher holds, not through the last
# process seen exec in it (here mount(8), gone by then: the mark failed, ENOENT, and the
# write half a second later was missed before).
sgrun --privileged --session s1 -- unshare -m --propagation private sh -c \
	"mount -t tmpfs sgns '$W/nsm'; sleep 0.5; echo z >'$W/nsm/f'; sleep 1.5; umount '$W/nsm'"
check "own namespace: file.mount" wait_for "ns mount" 10 evhas file.mount ".target == \"$W/nsm\" and .fstype == \"tmpfs\""
check "own namespace: its files are watched" wait_for "ns write" 10 evhas file.write ".path == \"$W/nsm/f\""

# ---- written at once after mounting in a namespace unshare has just made ------------------
# No pause anywhere: the mount comes before the namespace's mount-event mark, and the write
# before the filesystem's mark. The watcher holds each noted namespace open (its mountinfo
# and the namespace itself, from the first exec seen in it), so the mount is read and its
# filesystem cloned through the held namespace even after every process in it has exited;
# once marked, what the new tmpfs holds is listed (written_before_mark). 20 namespaces at
# once, each mounting, writing two files at once and exiting a second later without
# unmounting (its mounts go with it), then 5 one after another that exit at once.
N=20 M=5
for i in $(seq 1 $((N + M))); do mkdir -p "$W/q$i"; done
QP=()
for i in $(seq 1 $N); do
	sgrun --privileged --session s1 -- unshare -m --propagation private sh -c \
		"mount -t tmpfs sgq$i '$W/q$i' && echo w$i >'$W/q$i/f' && echo v$i >'$W/q$i/g'; sleep 1" &
	QP+=($!)
done
cleanup "kill ${QP[*]}"
wait "${QP[@]}"
for i in $(seq $((N + 1)) $((N + M))); do
	sgrun --privileged --session s1 -- unshare -m --propagation private sh -c \
		"mount -t tmpfs sgq$i '$W/q$i' && echo w$i >'$W/q$i/f' && echo v$i >'$W/q$i/g'"
done
qwrites() { [ "$(ev file.write s1 | jq -r .path | grep -c "^$W/q[0-9]*/[fg]\$")" -ge $((2 * (N + M))) ]; }
wait_for "immediate writes" 20 qwrites
got=0 early=0
for i in $(seq 1 $((N + M))); do
	for b in f g; do
		e=$(evq file.write ".path == \"$W/q$i/$b\"" | head -1)
		if [ -n "$e" ]; then got=$((got + 1)); else echo "# not recorded: $W/q$i/$b"; fi
		[ "$(jq -r '.written_before_mark // false' <<<"$e")" = true ] && early=$((early + 1))
	done
done
echo "# own namespace, mount then write at once: $got of $((2 * (N + M))) writes recorded ($early listed by the catch-up)"
check "own namespace, written at once after the mount: every write recorded ($got/$((2 * (N + M))))" \
	test "$got" -eq $((2 * (N + M)))
nm=$(ev file.mount s1 | jq -r .target | grep -c "^$W/q[0-9]*\$")
check "each of those $((N + M)) mounts a file.mount ($nm)" test "$nm" -eq $((N + M))

n=$(journal_lines "$SG_STATE" | jq -c 'select(.event == "sensor.loss" and (.sensor | startswith("fanotify")))' | wc -l)
check "no file sensor loss" test "$n" -eq 0
[ "$n" -eq 0 ] || journal_lines "$SG_STATE" | jq -c 'select(.event == "sensor.loss")' | sed 's/^/# /'


kill "$KEEP" 2>/dev/null
stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
grep -q "are not watched" "$T_TMP/a.log" && grep "are not watched" "$T_TMP/a.log" | sed 's/^/# /'
finish
