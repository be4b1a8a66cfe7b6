#!/usr/bin/env bash
# The file sensor attacked the way an agent would (issue 16): shared-mmap writes, hard
# links and renamed parents around a sensitive file, a file re-opened by handle after
# the dentry cache was dropped, chmod/chown/setxattr, a directory staged and moved into
# place, O_TMPFILE + linkat, a directory removed right after the write, a file whose last
# close is left to the kernel. Each asserts the exact event (or the exact loss reason),
# next to a control that shows what the lab would see otherwise.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

S=$T_TMP/secret   # sensitive prefix
W=$T_TMP/work     # the session's workdir
O=$T_TMP/other    # neither
mkdir -p "$S/sub1" "$S/sub2" "$S/sub3" "$W" "$O/hd"
echo key >"$S/key"; echo plain >"$O/plain"; echo h >"$S/byhandle"
for i in 1 2 3; do echo "s$i" >"$S/sub$i/f"; done
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  file_marks: [\"/\"]
  sensitive_paths: [\"$S\"]"
start_daemon a --config "$T_TMP/c.yaml"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 300 >/dev/null 2>&1 &
KEEP=$!
cleanup "kill $KEEP"
FO=$BIN/sg_fileops

fev() { ev "$1" s1 | jq -c --arg p "$2" 'select(.path == $p)'; }
has() { [ -n "$(fev "$1" "$2")" ]; }
# evq TYPE JQ-COND: the session's TYPE events for which COND holds; evhas: any?
evq() { ev "$1" s1 | jq -c "select($2)"; }
evhas() { [ -n "$(evq "$1" "$2")" ]; }
losses() { journal_lines "$SG_STATE" | jq -c --arg w "$1" 'select(.event == "sensor.loss" and (.why | contains($w)))'; }

# ---- writes through a shared mmap (file_modify: true, the default) -----------------------
sgrun --session s1 -- "$FO" mmapwrite "$W/m.bin"
check "mmap write: file.write at the close" wait_for "mmap file.write" 10 evhas file.write ".path == \"$W/m.bin\" and .write_seen == false"
check "mmap: the content did change (control: the write happened)" grep -q "written through mmap" "$W/m.bin"

# ---- a hard link to a sensitive file, read through the link -------------------------------
sgrun --session s1 -- sh -c "ln '$S/key' '$O/link' && cat '$O/link' >/dev/null"
check "read through a hard link: file.read" wait_for "link read" 10 has file.read "$O/link"
e=$(fev file.read "$O/link" | head -1)
jcheck "the record carries the path used and the canonical path" "$e" \
	".canonical_path == \"$S/key\" and .path_resolved == true"
ln "$O/plain" "$O/plainlink"
sgrun --session s1 -- cat "$O/plainlink" >/dev/null
sleep 1
check "control: a hard link to a plain file read gives nothing" test -z "$(fev file.read "$O/plainlink")"

# ---- read, then rename the directory out of the sensitive tree (3 times) ------------------
for i in 1 2 3; do
	sgrun --session s1 -- sh -c "cat '$S/sub$i/f' >/dev/null; mv '$S/sub$i' '$O/moved$i'"
done
for i in 1 2 3; do
	check "read then parent renamed away ($i): file.read with the canonical path" \
		wait_for "moved read $i" 10 evhas file.read ".canonical_path == \"$S/sub$i/f\""
done
e=$(ev file.rename s1 | jq -c "select(.path == \"$S/sub1\")")
jcheck "the directory's own file.rename" "$e" ".new_path == \"$O/moved1\" and .dir == true"
e=$(ev file.rename s1 | jq -c "select(.path == \"$S/sub1/f\")")
jcheck "its file under the new path" "$e" ".new_path == \"$O/moved1/f\" and .moved_with == \"$S/sub1\""

# ---- a file opened by handle after the dentry cache was dropped ----------------------------
H=$("$FO" handle "$S/byhandle")
sync; echo 2 >/proc/sys/vm/drop_caches
# open_by_handle_at needs CAP_DAC_READ_SEARCH, which a contained run does not keep
# (docs/threat-model.md): refused there; the record is checked for a privileged run.
check "contained run: open_by_handle_at refused" sh -c '! "$0" run --control "$1" --session s1 -- "$2" openhandle / "$3" 2>/dev/null' \
	"$BIN/sandgate" "$SG_SOCK" "$FO" "$H"
sgrun --privileged --session s1 -- "$FO" openhandle / "$H"
check "open_by_handle_at after drop_caches: file.read" wait_for "handle read" 10 evhas file.read ".canonical_path == \"$S/byhandle\""
e=$(ev file.read s1 | jq -c "select(.canonical_path == \"$S/byhandle\")" | head -1)
jcheck "by handle: the canonical path, the path used unknown" "$e" ".path == \"$S/byhandle\" and .path_resolved == false and .path_source == \"canonical\" and (.pid | type) == \"number\""

# ---- chmod, chown, setxattr on a sensitive file ------------------------------------------
attr() { ev file.attr s1 | jq -c --arg p "$S/key" "select(.path == \$p and $1)"; }
sgrun --session s1 -- chmod 0600 "$S/key"
check "chmod: file.attr with old and new mode" wait_for "chmod attr" 10 evhas file.attr ".path == \"$S/key\" and .old_mode == \"0644\" and .mode == \"0600\" and .changed == [\"mode\"]"
sgrun --session s1 -- chown 1234:1235 "$S/key"
check "chown: file.attr with old and new owner" wait_for "chown attr" 10 evhas file.attr ".path == \"$S/key\" and .old_file_uid == 0 and .file_uid == 1234 and .file_gid == 1235 and .changed == [\"owner\",\"group\"]"
sgrun --session s1 -- "$FO" setxattr "$S/key" user.sg evil
check "setxattr: file.attr naming the xattr change" wait_for "xattr attr" 10 evhas file.attr ".path == \"$S/key\" and .changed == [\"xattr\"]"
sgrun --session s1 -- touch "$S/key"
sleep 1.5
n=$(ev file.attr s1 | jq -c "select(.path == \"$S/key\")" | wc -l)
check "control: touch (times only) adds no file.attr ($n lines for 3 changes)" test "$n" -eq 3

# ---- staging files in a directory and moving the directory into place --------------------
sgrun --session s1 -- sh -c "mkdir -p '$W/stage/a' && echo 1 >'$W/stage/a/f1' && echo 2 >'$W/stage/f2' && mv '$W/stage' '$W/final'"
check "moved directory: its own file.rename" wait_for "dir rename" 10 evhas file.rename ".path == \"$W/stage\" and .new_path == \"$W/final\" and .dir == true"
n=$("$BIN/sandgate" query --state-dir "$SG_STATE" --session s1 --path "$W/final/*" | jq -r 'select(.event == "file.rename") | .new_path' | sort | tr '\n' ' ')
check "a query finds the staged files under their final paths ($n)" \
	test "$n" = "$W/final/a $W/final/a/f1 $W/final/f2 "

# ---- O_TMPFILE + linkat --------------------------------------------------------------------
sgrun --session s1 -- "$FO" tmpfile "$W" linked.bin
check "O_TMPFILE: file.write under the name it was linked as" wait_for "tmpfile write" 10 has file.write "$W/linked.bin"
n=$(ev file.write s1 | jq -r .path | grep -c '#' || true)
check "no placeholder path (#INO) in any file.write ($n)" test "$n" -eq 0

# ---- a directory removed right after writing in it -----------------------------------------
sgrun --session s1 -- sh -c "mkdir '$W/gone' && echo x >'$W/gone/f' && rm -rf '$W/gone'"
check "dir made, written, removed: file.write with its last known path" wait_for "gone write" 10 has file.write "$W/gone/f"
# The directory made by the host, never seen by the sensor: its path cannot be known.
before=$(losses "directory was removed" | jq -s 'map(.lost) | add // 0')
sgrun --session s1 -- sh -c "echo x >'$O/hd/f' && rm -rf '$O/hd'"
wait_for "delete" 10 evhas file.delete ".path == \"$O/hd\"" || true
sleep 1.5
after=$(losses "directory was removed" | jq -s 'map(.lost) | add // 0')
w=$(fev file.write "$O/hd/f")
check "host dir written in and removed: file.write or a counted loss (loss $before -> $after)" \
	sh -c "[ -n '$w' ] || [ '$after' -gt '$before' ]"

# ---- the last close of a file left to the kernel (descriptor in flight) --------------------
sgrun --session s1 -- "$FO" inflight "$W/flight.txt"
check "fd in flight on a unix socket: file.write" wait_for "inflight write" 10 has file.write "$W/flight.txt"

kill "$KEEP" 2>/dev/null
stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
finish
