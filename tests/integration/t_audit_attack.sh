#!/usr/bin/env bash
# The record attacked from inside a default session (`sandgate run --session S -- CMD`:
# root with the kept capabilities, CAP_SYS_CHROOT among them, and the seccomp filter), the
# way a hostile agent would try to make what it did not appear, or appear wrong:
#   exec: the dynamic loader copied under another name, a chroot (the kernel writes exe
#   and cwd under the process's root), fileless exec from a memfd, argv[0] spoofing, a
#   script, a very long argv;
#   files: io_uring writes (also through a fixed-file slot the ring's teardown closes),
#   kernel AIO (no FAN_MODIFY), truncate(2) by path, fallocate, copy_file_range,
#   sendfile, writes through /proc/self/fd and /proc/self/root, a descriptor passed in by
#   a host process (SCM_RIGHTS), a grandchild that double-forked and setsid'd away.
# Each checks the exact event and field where the action lands, next to a control.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

W=$T_TMP/work
mkdir -p "$W"
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  file_marks: [\"/\"]"
start_daemon a --config "$T_TMP/c.yaml"
sg session create --id s1 --workdir "$W" >/dev/null && sg session start s1 >/dev/null
sgrun --session s1 -- sleep 300 >/dev/null 2>&1 &
KEEP=$!
cleanup "kill $KEEP"
AT=$BIN/sg_attack
LD=/lib64/ld-linux-x86-64.so.2

evq() { ev "$1" s1 | jq -c "select($2)"; }
evhas() { [ -n "$(evq "$1" "$2")" ]; }
# exec1 JQ-COND: the first process.exec of s1 for which COND holds (waits up to 10 s).
exec1() {
	wait_for "exec $1" 10 evhas process.exec "$1" >/dev/null || true
	evq process.exec "$1" | head -1
}
# execs_at_least N JQ-COND: s1 has N process.exec lines for which COND holds.
execs_at_least() { [ "$(evq process.exec "$2" | wc -l)" -ge "$1" ]; }
kclose_lost() {
	journal_lines "$SG_STATE" | jq -s '[.[] | select(.event == "sensor.loss" and
		.sensor == "fanotify" and (.why | startswith("last close made by a kernel thread"))) | .lost] | add // 0'
}

# ---- exec: the dynamic loader under another name ------------------------------------------
# Before the fix: program "$W/runner", exe_known_as null (the loader was known by its name
# only), so `runner /usr/bin/base64` hid both the program and what it is.
cp "$LD" "$W/runner"
sgrun --session s1 -- "$W/runner" /usr/bin/base64 --version >/dev/null
e=$(exec1 ".exe == \"$W/runner\"")
jcheck "loader copied as 'runner': program is what it loads, known as base64" "$e" \
	'.program == "/usr/bin/base64" and .exe_known_as == "base64" and .args_source == "kernel"'
sgrun --session s1 -- "$LD" /usr/bin/base64 --help >/dev/null
e=$(exec1 '.args == ["/usr/bin/base64","--help"]')
jcheck "control: the loader by its own name, the same" "$e" \
	'.program == "/usr/bin/base64" and .exe_known_as == "base64"'

# ---- exec: chroot (CAP_SYS_CHROOT is kept) --------------------------------------------------
# A jail whose /usr/bin/ls is a copy of base64 (a well-known program: exe_known_as says
# so). Before the fix the kernel's record gave exe and program "/usr/bin/ls", cwd "/",
# exe_known_as null: the host's ls, not what ran.
J=$W/jail
mkdir -p "$J/usr/bin" "$J/lib64" "$J/lib/x86_64-linux-gnu"
cp /usr/bin/base64 "$J/usr/bin/ls"
for l in $(ldd /usr/bin/base64 | grep -o '/[^ ]*'); do mkdir -p "$J$(dirname "$l")"; cp -L "$l" "$J$l"; done
sgrun --session s1 -- chroot "$J" /usr/bin/ls --version >/dev/null
e=$(exec1 ".args == [\"--version\"] and (.exe | tostring | endswith(\"/usr/bin/ls\"))")
jcheck "chroot: exe, program and cwd as the host sees them, known as base64" "$e" \
	".exe == \"$J/usr/bin/ls\" and .program == \"$J/usr/bin/ls\" and .cwd == \"$J\" and .exe_known_as == \"base64\""
sgrun --session s1 -- chroot "$J" /lib64/ld-linux-x86-64.so.2 /usr/bin/ls --help >/dev/null
e=$(exec1 '.args == ["/usr/bin/ls","--help"]')
jcheck "chroot + loader: the program under the jail's root" "$e" \
	".program == \"$J/usr/bin/ls\" and .exe_known_as == \"base64\""
sgrun --session s1 -- /usr/bin/ls -d /
e=$(exec1 '.args == ["-d","/"]')
jcheck "control: the host's ls is itself (read: exe_checked, not a known program)" "$e" \
	'.exe == "/usr/bin/ls" and .program == "/usr/bin/ls" and .exe_known_as == null and .exe_checked == true'

# ---- exec: fileless (memfd + execveat), argv[0], a script, a very long argv ----------------
# (Chosen by its arguments, so a wrong exe shows in the check, not as a missing line.)
sgrun --session s1 -- python3 -c '
import os
fd = os.memfd_create("innocent", 0)
os.write(fd, open("/usr/bin/base64", "rb").read())
os.execve(fd, ["ls", "-w", "76"], {})' </dev/null >/dev/null 2>&1
e=$(exec1 '.args == ["-w","76"]')
c='.exe == "/memfd:innocent (deleted)" and .exe_known_as == "base64" and .cmd == "ls" and .args_source == "kernel"'
jcheck "memfd exec: exe names the memfd, known as base64, cmd is the given argv[0]" "$e" "$c"
jq -e "$c" >/dev/null 2>&1 <<<"$e" || echo "# the line: ${e:-none}"
# What the program is, told after it is gone: ten memfd copies and ten copies on disk,
# each exiting at once (stdin empty), the disk copy deleted as soon as it exits. Before
# the exe was pinned at the exec, identification opened /proc/PID/exe when the line was
# written, and a program gone by then was not known (1 to 3 in 8 memfd copies).
sgrun --session s1 -- python3 -c '
import os, subprocess
for i in range(10):
    if os.fork() == 0:
        fd = os.memfd_create("quick", 0)
        os.write(fd, open("/usr/bin/base64", "rb").read())
        os.execve(fd, ["quick", "-w", "%d" % (100 + i)], {})
    os.wait()
for i in range(10):
    p = "'"$W"'/qcopy%d" % i
    subprocess.run(["cp", "/usr/bin/base64", p])
    subprocess.run([p, "-w", "%d" % (200 + i)])
    os.unlink(p)' </dev/null >/dev/null 2>&1
wait_for "20 quick execs" 10 execs_at_least 20 '.args[0]? == "-w" and (.args[1] | tonumber) >= 100' >/dev/null || true
q=$(ev process.exec s1 | jq -c 'select(.args[0]? == "-w" and (.args[1] | tonumber) >= 100)')
n=$(jq -s '[.[] | select(.exe_known_as == "base64" and .exe_checked == true)] | length' <<<"$q")
check "quick exits (10 memfd, 10 deleted copies): all known as base64, exe_checked ($n of $(jq -s length <<<"$q"))" test "$n" -eq 20
[ "$n" -eq 20 ] && true || jq -c 'select(.exe_known_as != "base64") | [.exe, .args, .exe_known_as, .exe_checked, .args_source]' <<<"$q" | head -5
sgrun --session s1 -- bash -c 'exec -a /usr/bin/innocent /usr/bin/base64 --version' >/dev/null
e=$(exec1 '.cmd == "/usr/bin/innocent"')
jcheck "exec -a: cmd spoofed, exe and program true" "$e" \
	'.exe == "/usr/bin/base64" and .program == "/usr/bin/base64" and .exe_known_as == "base64"'
printf '#!/bin/sh\n: "$@"\n' >"$W/scr.sh" && chmod +x "$W/scr.sh"
sgrun --session s1 -- "$W/scr.sh" SCRIPTARG
e=$(exec1 '.args[-1] == "SCRIPTARG"')
jcheck "script: the interpreter runs, the script is its argument" "$e" \
	".exe == \"/usr/bin/dash\" and .args == [\"$W/scr.sh\",\"SCRIPTARG\"]"
sgrun --session s1 -- python3 -c 'import os; os.execv("/bin/true", ["true"] + ["A" * 4000] * 50 + ["HIDDENTAIL"])'
e=$(exec1 '.cmd == "true" and (.args | length) > 10')
jcheck "argv of 200 KB: cut and said so" "$e" '.args_truncated == true and .argv_complete == false'
# An exec whose program is seen at a file before its record is in: a file written and
# left open (close-on-exec) by the process that execs is closed by the exec itself, so
# the file sensor has a line of the new program at once. Before the fix the exec was
# then recorded from /proc (args_source "proc": arguments the program may have rewritten)
# whenever the record was a few ms late (1 in 6 runs of the memfd check above); now
# the file line waits up to 100 ms for the record.
sgrun --session s1 -- python3 -c "
import os
for i in range(20):
    if os.fork() == 0:
        fd = os.open('$W/cloexec.txt', os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        os.write(fd, b'x')
        os.execv('/bin/true', ['true', 'CLOEXEC%d' % i])
    os.wait()"
wait_for "20 cloexec execs" 10 execs_at_least 20 '.args[0]? // "" | startswith("CLOEXEC")' >/dev/null || true
n=$(ev process.exec s1 | jq -c 'select((.args[0]? // "" | startswith("CLOEXEC")) and .args_source == "kernel")' | wc -l)
w=$(ev file.write s1 | jq -c "select(.path == \"$W/cloexec.txt\")" | wc -l)
check "exec closing a written file at once: its arguments are the kernel's (20 of 20: $n; file lines $w)" \
	test "$n" -eq 20 -a "$w" -ge 20

# ---- files: io_uring, AIO, and the calls that write without write() -------------------------
sgrun --session s1 -- "$AT" uringwrite "$W/ur.txt" hello
check "io_uring write: file.write" wait_for "uring" 10 evhas file.write ".path == \"$W/ur.txt\""
echo pre >"$W/urd.txt"
sgrun --session s1 -- "$AT" uringdirect "$W/urd.txt" EVIL
check "io_uring fixed-file write, the ring's teardown closes it: file.write with closed_by_pid" \
	wait_for "uringdirect" 10 evhas file.write ".path == \"$W/urd.txt\" and (.pid | type) == \"number\" and (.closed_by_pid | type) == \"number\""
sgrun --session s1 -- "$AT" uringrename "$W/ur.txt" "$W/ur2.txt"
check "io_uring renameat: file.rename" wait_for "uring rename" 10 evhas file.rename ".path == \"$W/ur.txt\" and .new_path == \"$W/ur2.txt\""
echo pre >"$W/aio.txt"
sgrun --session s1 -- "$AT" aiowrite "$W/aio.txt" EVIL
check "kernel AIO write (no FAN_MODIFY): file.write at the close, write_seen false" \
	wait_for "aio" 10 evhas file.write ".path == \"$W/aio.txt\" and .write_seen == false"
for f in tr fa cfr sf; do echo original >"$W/$f.txt"; done
echo src >"$W/src.txt"
sgrun --session s1 -- python3 -c "
import os
W = '$W'
os.truncate(W + '/tr.txt', 0)
fd = os.open(W + '/fa.txt', os.O_RDWR); os.posix_fallocate(fd, 0, 1 << 20); os.close(fd)
s = os.open(W + '/src.txt', os.O_RDONLY)
d = os.open(W + '/cfr.txt', os.O_WRONLY); os.copy_file_range(s, d, 3); os.close(d)
d = os.open(W + '/sf.txt', os.O_WRONLY); os.sendfile(d, s, 0, 3); os.close(d)"
for f in tr fa cfr sf; do
	check "$f: file.write" wait_for "$f" 10 evhas file.write ".path == \"$W/$f.txt\""
done

# ---- files: paths through /proc, a descriptor from outside, a process that left the tree ----
echo pre >"$W/pfd.txt"; echo pre >"$W/proot.txt"
sgrun --session s1 -- sh -c "exec 7<'$W/pfd.txt'; echo EVIL >/proc/self/fd/7; echo EVIL >/proc/self/root$W/proot.txt"
check "write through /proc/self/fd/N: file.write with the real path" wait_for "pfd" 10 evhas file.write ".path == \"$W/pfd.txt\""
check "write through /proc/self/root/...: file.write with the real path" wait_for "proot" 10 evhas file.write ".path == \"$W/proot.txt\""
# A host process opens the file and passes the descriptor in; the session writes through it.
echo pre >"$W/passed.txt"
python3 - "$T_TMP/pass.sock" "$W/passed.txt" <<'EOF' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept(); fd = os.open(sys.argv[2], os.O_WRONLY)
socket.send_fds(c, [b"x"], [fd]); c.recv(1); os.close(fd)
EOF
HOSTPID=$!
cleanup "kill $HOSTPID"
wait_for "pass socket" 10 test -S "$T_TMP/pass.sock"
sgrun --session s1 -- python3 -c "
import os, socket, sys
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect('$T_TMP/pass.sock')
_, fds, _, _ = socket.recv_fds(c, 1, 1); os.write(fds[0], b'EVIL'); os.close(fds[0]); c.send(b'k')"
wait "$HOSTPID"
check "descriptor passed in by a host process: file.write in the session" \
	wait_for "passed" 10 evhas file.write ".path == \"$W/passed.txt\""
check "  (control: the write happened)" grep -q EVIL "$W/passed.txt"
# Double fork + setsid: the grandchild is the holder's now, its parent long gone.
sgrun --session s1 -- sh -c "setsid sh -c 'sleep 1.5; echo EVIL >$W/orphan.txt' </dev/null >/dev/null 2>&1 &"
check "double-forked, setsid'd grandchild: file.write in the session" \
	wait_for "orphan" 10 evhas file.write ".path == \"$W/orphan.txt\""

# ---- known gap, counted: AIO write whose last close is a kernel worker's -------------------
# No FAN_MODIFY (AIO), and the close-after-write names a kernel thread (the io_uring fixed
# table's teardown): neither writer nor session can be known. What holds: it is counted
# (sensor.loss, fanotify, "last close made by a kernel thread"), never silent.
before=$(kclose_lost)
echo pre >"$W/aiok.txt"
sgrun --session s1 -- "$AT" aiokclose "$W/aiok.txt" EVIL
check "  (control: the write happened)" grep -q EVIL "$W/aiok.txt"
kclose_more() { [ "$(kclose_lost)" -gt "$before" ]; }
check "AIO write closed by a kernel worker: counted as a loss" wait_for "kclose loss" 10 kclose_more

kill "$KEEP" 2>/dev/null
stop_daemon
check "daemon exits 0 at SIGTERM" test $? -eq 0
finish
