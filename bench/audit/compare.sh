#!/usr/bin/env bash
# sandgate's audit sensors against what a user would pick instead, on the same machine in
# one run, interleaved rounds (medians computed by the caller from the printed lines):
#
#   SANDGATE_BIN=build/rel [SANDGATE_BASE_BIN=/other/build] bench/audit/compare.sh [ROUNDS]
#
# Each round, in this order:
#   storm/none        20002 execs (N_TRUE /bin/true + N_PIPE x sh -c '/bin/true | /bin/true')
#                     with no sensor: the storm's wall time
#   storm/sandgate    the same inside a session of a fresh daemon (and storm/base with
#                     SANDGATE_BASE_BIN, an older build, for a before/after; with it the
#                     work and fwrite groups run the base build too, as make/base,
#                     untar/base, fwrite/base, in alternating order with sandgate)
#   storm/auditd      auditd (log in a temp dir) with an execve rule (-b 8192), stopped and
#                     its rules deleted afterwards
#   storm/forkstat    forkstat -e exec -r (real-time, like sandgate's connector thread)
#   make/none, make/sandgate      make -j2 of a generated 120-file C project
#   untar/none, untar/sandgate    tar -x of a 50k-file tree
#   make/cgroup, untar/cgroup     the same in a session of a daemon without audit sensors:
#                                 what the session's cgroup alone costs
#   fwrite/sandgate               NPROC writers creating/writing/deleting files: the rate
#                                 at which the sensor journals file events, and overflows
# SG_AUDIT_EXTRA="file_modify: false" adds a key to the audit section; SG_SENSITIVE=default
# keeps the default sensitive paths (otherwise none: no read events);
# SG_CONFIG_EXTRA="index: {enabled: false}" appends top-level config to sandgated's.
# PHASES="storm work fwrite" (the default) picks which of the groups run; "make" is the
# build alone (none and sandgate), for many rounds. NO_PEERS=1 skips auditd and forkstat
# (a before/after of sandgate alone).
# Every line: "RESULT <what> <sensor> key=value ...". Runs as root; the machine may be
# shared, so run several rounds and take medians.
set -u
BIN=$(realpath "${SANDGATE_BIN:?SANDGATE_BIN must point at the build directory}")
# The build tree reads the rules and data of the source tree (common/paths.h).
export SANDGATE_DATA_DIR=${SANDGATE_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/data} SANDGATE_RULES_DIR=${SANDGATE_RULES_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/rules}
BASE=${SANDGATE_BASE_BIN:+$(realpath "$SANDGATE_BASE_BIN")}
# The base build reads its own source tree's rules and data (its CMake source directory).
BASE_SRC=${BASE:+$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BASE/CMakeCache.txt" 2>/dev/null)}
ROUNDS=${1:-3}
PHASES=${PHASES:-storm work fwrite}
N_TRUE=${N_TRUE:-10000}
N_PIPE=${N_PIPE:-3334}
FW_PROC=${FW_PROC:-2}
FW_FILES=${FW_FILES:-25000}
T=$(mktemp -d /tmp/sgcmp.XXXXXX)
PARENT=sgcmp-$$
CG2=/sys/fs/cgroup/unified
[ -d "$CG2" ] || CG2=/sys/fs/cgroup
HZ=$(getconf CLK_TCK)
WANT=$((N_TRUE + 3 * N_PIPE))
STORM_TRUE="i=0; while [ \$i -lt $N_TRUE ]; do /bin/true; i=\$((i+1)); done"
STORM_PIPE="i=0; while [ \$i -lt $N_PIPE ]; do sh -c '/bin/true | /bin/true'; i=\$((i+1)); done"
DPID= KEEP= AUPID= FKPID= AU_BACKLOG= AU_OURS=

# Undoes au_on: only what this script set up (never a host auditd's rules).
au_off() {
	[ -n "$AU_OURS" ] || return 0
	AU_OURS=
	auditctl -D >/dev/null 2>&1
	[ -n "$AUPID" ] && kill -TERM "$AUPID" 2>/dev/null && wait "$AUPID" 2>/dev/null
	AUPID=
	auditctl -e 0 >/dev/null 2>&1
	[ -n "$AU_BACKLOG" ] && auditctl -b "$AU_BACKLOG" >/dev/null 2>&1
}
sg_stop() {
	# The session's processes and its holder (the namespaces' keeper, in .holder-b1: it
	# outlives a daemon stop on purpose, sessions are adopted by the next daemon).
	local c
	for c in b1 .holder-b1; do
		[ -d "$CG2/$PARENT/$c" ] && echo 1 >"$CG2/$PARENT/$c/cgroup.kill"
	done
	sleep 0.2
	[ -n "$KEEP" ] && kill "$KEEP" 2>/dev/null
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	KEEP= DPID=
	for h in "$CG2" /sys/fs/cgroup/memory /sys/fs/cgroup/cpu /sys/fs/cgroup/pids; do
		[ -d "$h/$PARENT" ] || continue
		for d in "$h/$PARENT"/*/ "$h/$PARENT"/.holder-*/; do [ -d "$d" ] && rmdir "$d"; done
		rmdir "$h/$PARENT"
	done 2>/dev/null
}
cleanup() {
	sg_stop
	mountpoint -q "$T/fs" && umount "$T/fs"
	au_off
	[ -n "$FKPID" ] && kill -INT "$FKPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now() { date +%s.%N; }
el() { echo "$2 - $1" | bc; }
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# settle FILE-GLOB: waits until the files stop growing for a second.
settle() {
	local a b=-1
	while :; do
		sleep 1
		a=$(cat $1 2>/dev/null | wc -c)
		[ "$a" -eq "$b" ] && return
		b=$a
	done
}
# settle_count CMD...: waits until CMD's output (a count) stops changing for a second. For
# the peers' logs, which host processes keep growing (and our own polling with them).
settle_count() {
	local a b=-1
	while :; do
		sleep 1
		a=$("$@")
		[ "$a" = "$b" ] && return
		b=$a
	done
}

# ---- sandgate ----------------------------------------------------------------------------
# sg_start BIN: a fresh daemon and session b1 (a keep-alive sleep inside).
sg_start() { # BIN [AUDIT-KEY]: the key (e.g. "enabled: false") goes into the audit section
	local bin=$1
	rm -rf "$T/state"
	# SG_SENSITIVE=default keeps the daemon's own sensitive paths (reads under /etc, /root,
	# credential files, the session's cwd: every read's close on the host is an event)
	# The figures are the audit sensors' alone: the gateway (on by default) is off.
	printf 'gateway: {enabled: false}\ncgroup:\n  parent: %s\naudit:\n' "$PARENT" >"$T/c.yaml"
	[ "${SG_SENSITIVE:-none}" = default ] || printf '  sensitive_paths: []\n' >>"$T/c.yaml"
	# the untar's own filesystem (fresh_fs) is marked too, as a user would list a volume
	mountpoint -q "$T/fs" && printf '  file_marks: ["/", "%s"]\n' "$T/fs" >>"$T/c.yaml"
	# SG_AUDIT_EXTRA: one more key of the audit section (e.g. "file_modify: false")
	[ -n "${SG_AUDIT_EXTRA:-}" ] && printf '  %s\n' "$SG_AUDIT_EXTRA" >>"$T/c.yaml"
	[ -n "${2:-}" ] && printf '  %s\n' "$2" >>"$T/c.yaml"
	# SG_CONFIG_EXTRA: more top-level config, for a diagnosis (e.g. the index off)
	[ -n "${SG_CONFIG_EXTRA:-}" ] && printf '%s\n' "$SG_CONFIG_EXTRA" >>"$T/c.yaml"
	if [ -n "$BASE" ] && [ "$bin" = "$BASE" ] && [ -n "$BASE_SRC" ]; then
		SANDGATE_DATA_DIR=$BASE_SRC/data SANDGATE_RULES_DIR=$BASE_SRC/rules \
			"$bin/sandgated" --config "$T/c.yaml" --state-dir "$T/state" \
			--control "$T/sock" >"$T/daemon.log" 2>&1 &
	else
		"$bin/sandgated" --config "$T/c.yaml" --state-dir "$T/state" --control "$T/sock" \
			>"$T/daemon.log" 2>&1 &
	fi
	DPID=$!
	for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.05; done
	"$bin/sandgate" session create --id b1 --workdir "$T/w" --control "$T/sock" >/dev/null &&
		"$bin/sandgate" session start b1 --control "$T/sock" >/dev/null
	"$bin/sandgate" run --control "$T/sock" --session b1 -- sleep 3600 &
	KEEP=$!
	sleep 0.3
}
# thread_cpu: the daemon's CPU per thread (ms, summed by thread name) so far.
thread_cpu() {
	local t
	for t in /proc/"$DPID"/task/*; do
		printf '%s %s\n' "$(cat "$t/comm")" "$(awk '{print $14 + $15}' "$t/stat")"
	done | awk -v hz="$HZ" '{c[$1] += $2} END {for (n in c) printf "%s=%d ", n, c[n] * 1000 / hz}'
}
sgrun() { "${SGB:-$BIN}/sandgate" run --control "$T/sock" --session b1 -- "$@"; }
lines() { cat "$T"/state/journal/*.jsonl; }

storm_sandgate() {
	local name=$1 t0 t1 c0 c1 seen complete lost
	SGB=$2
	sg_start "$SGB"
	c0=$(cpu "$DPID")
	t0=$(now)
	sgrun sh -c "$STORM_TRUE" storm-true
	sgrun sh -c "$STORM_PIPE" storm-pipe
	t1=$(now)
	settle "$T/state/journal/*.jsonl"
	c1=$(cpu "$DPID")
	lines | jq -c 'select(.event == "process.exec" and .session_id == "b1")' |
		jq -c 'select(((.args // []) | index(["storm-true"]) or index(["storm-pipe"])) | not) |
		       select(.cmd != "sleep" or .args != ["3600"])' >"$T/execs"
	seen=$(grep -c . "$T/execs")
	complete=$(jq -c 'select(.argv_complete)' "$T/execs" | wc -l)
	lost=$(lines | jq -s '[.[] | select(.event == "sensor.loss" and .sensor != "fanotify") | .lost] | add // 0')
	echo "RESULT storm $name wall_s=$(el "$t0" "$t1") seen=$seen complete=$complete want=$WANT" \
		"pct=$(echo "scale=3; 100 * $complete / $WANT" | bc) loss=$lost" \
		"cpu_ms_per_1k=$(echo "scale=1; ($c1 - $c0) * 1000 / $HZ * 1000 / $WANT" | bc)"
	sg_stop
	SGB=
}

# ---- auditd -------------------------------------------------------------------------------
au_on() {
	# Another audit daemon registered (the host's auditd): not ours to replace.
	[ "$(auditctl -s | awk '/^pid/ {print $2}')" = 0 ] || return 1
	AU_OURS=1
	mkdir -p "$T/au"
	cat >"$T/au/auditd.conf" <<EOF
log_file = $T/au/audit.log
log_format = RAW
log_group = root
flush = INCREMENTAL_ASYNC
freq = 50
num_logs = 1
max_log_file = 10000
max_log_file_action = IGNORE
space_left = 10
space_left_action = IGNORE
admin_space_left = 5
admin_space_left_action = IGNORE
disk_full_action = IGNORE
disk_error_action = IGNORE
priority_boost = 4
write_logs = yes
EOF
	chmod 0640 "$T/au/auditd.conf"
	AU_BACKLOG=$(auditctl -s | awk '/^backlog_limit/ {print $2}')
	auditd -n -c "$T/au" >"$T/au/out" 2>&1 &
	AUPID=$!
	for _ in $(seq 100); do
		[ "$(auditctl -s | awk '/^pid/ {print $2}')" = "$AUPID" ] && break
		sleep 0.05
	done
	auditctl -b 8192 >/dev/null &&
		auditctl -a always,exit -F arch=b64 -S execve -k sgbench >/dev/null &&
		auditctl -a always,exit -F arch=b32 -S execve -k sgbench >/dev/null
}
# The storm's EXECVE records; the pipeline's shell has a hex a2 (it holds spaces).
au_count() {
	local a b
	a=$(grep '^type=EXECVE' "$T/au/audit.log" | grep -c ' a0="/bin/true"$')
	b=$(grep '^type=EXECVE' "$T/au/audit.log" | grep -c ' a2=2F62696E2F74727565207C202F62696E2F74727565$')
	echo $((a + b))
}
storm_auditd() {
	local t0 t1 c0 c1 k0 k1 l0 l1 kpid seen
	au_on || { echo "RESULT storm auditd error=setup (an auditd already runs?)"; au_off; return; }
	kpid=$(pgrep -x kauditd | head -1)
	c0=$(cpu "$AUPID"); k0=$(cpu "$kpid")
	l0=$(auditctl -s | awk '/^lost/ {print $2}')
	t0=$(now)
	sh -c "$STORM_TRUE"
	sh -c "$STORM_PIPE"
	t1=$(now)
	settle_count au_count
	c1=$(cpu "$AUPID"); k1=$(cpu "$kpid")
	l1=$(auditctl -s | awk '/^lost/ {print $2}')
	au_off
	seen=$(au_count)
	echo "RESULT storm auditd wall_s=$(el "$t0" "$t1") seen=$seen complete=$seen want=$WANT" \
		"pct=$(echo "scale=3; 100 * $seen / $WANT" | bc) loss=$((l1 - l0))" \
		"cpu_ms_per_1k=$(echo "scale=1; ($c1 - $c0 + $k1 - $k0) * 1000 / $HZ * 1000 / $WANT" | bc)"
	rm -f "$T/au/audit.log"
}

# ---- forkstat -----------------------------------------------------------------------------
# The storm's exec lines with their command line (polling must not match itself).
fk_count() {
	sed -E 's/^[0-9:]+ exec +[0-9]+ +//; s/ +$//' "$T/fk.out" >"$T/fk.cmd"
	grep -c -x -e '/bin/true' -e 'sh -c /bin/true | /bin/true' "$T/fk.cmd"
}
storm_forkstat() {
	local t0 t1 c0 c1 complete bare
	forkstat -e exec -r -l >"$T/fk.out" 2>&1 &
	FKPID=$!
	sleep 0.5
	c0=$(cpu "$FKPID")
	t0=$(now)
	sh -c "$STORM_TRUE"
	sh -c "$STORM_PIPE"
	t1=$(now)
	settle_count fk_count
	c1=$(cpu "$FKPID")
	kill -INT "$FKPID"
	wait "$FKPID" 2>/dev/null
	FKPID=
	complete=$(fk_count)
	bare=$(grep -c -x -e 'true' -e 'sh' "$T/fk.cmd")
	echo "RESULT storm forkstat wall_s=$(el "$t0" "$t1") seen=$((complete + bare)) complete=$complete" \
		"want=$WANT pct=$(echo "scale=3; 100 * $complete / $WANT" | bc) loss=?" \
		"cpu_ms_per_1k=$(echo "scale=1; ($c1 - $c0) * 1000 / $HZ * 1000 / $WANT" | bc)"
}

storm_none() {
	local t0 t1
	t0=$(now)
	sh -c "$STORM_TRUE"
	sh -c "$STORM_PIPE"
	t1=$(now)
	echo "RESULT storm none wall_s=$(el "$t0" "$t1")"
}

# ---- workloads: make -j2, untar -------------------------------------------------------------
gen_project() {
	local p=$T/proj i
	mkdir -p "$p"
	for i in $(seq 120); do
		cat >"$p/m$i.c" <<EOF
#include <stdio.h>
#include <string.h>
static int tab$i[64];
int f$i(int x) { for (int k = 0; k < 64; k++) tab$i[k] = x * k + $i; return tab$i[x & 63]; }
const char *s$i(void) { static char b[32]; snprintf(b, sizeof(b), "m%d", f$i(3)); return strlen(b) ? b : ""; }
EOF
	done
	{
		echo 'int main(void) { return 0; }'
	} >"$p/main.c"
	{
		printf 'OBJS := main.o %s\n' "$(for i in $(seq 120); do printf 'm%d.o ' "$i"; done)"
		printf 'prog: $(OBJS)\n\tcc -o $@ $(OBJS)\n%%.o: %%.c\n\tcc -O1 -c -o $@ $<\n'
		printf 'clean:\n\trm -f *.o prog\n'
	} >"$p/Makefile"
}
gen_tree() {
	python3 - "$T/tree.tar" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    for d in range(500):
        for f in range(100):
            data = b"x" * (f % 7 + 1)
            ti = tarfile.TarInfo(f"tree/d{d}/f{f}.txt")
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
EOF
}
# fresh_fs: a new 2 GiB ext4 on a loop device at $T/fs for the untar. On the same
# filesystem, every untar after the first (or after fwrite's deletes) is slowed 10-20x
# whatever the sensor: ext4 skips inodes deleted in the last minute or more
# (recently_deleted() in find_inode_bit(), seen with perf on this host's root filesystem),
# and the last run's 50k deleted inodes make each create scan past them.
fresh_fs() {
	mountpoint -q "$T/fs" && umount "$T/fs"
	rm -f "$T/fs.img"
	truncate -s 2G "$T/fs.img" && mkfs.ext4 -q -F "$T/fs.img" &&
		mkdir -p "$T/fs" && mount -o loop "$T/fs.img" "$T/fs"
}
# work WHAT SENSOR: one timed run; under sandgate inside the session.
work() {
	local what=$1 sensor=$2 run=() t0 t1
	[ "$sensor" != none ] && run=("${SGB:-$BIN}/sandgate" run --control "$T/sock" --session b1 --)
	sync   # the previous step's dirty pages are not this one's cost
	case $what in
	make)
		make -s -C "$T/proj" clean
		t0=$(now)
		"${run[@]}" make -s -j2 -C "$T/proj" prog >/dev/null
		t1=$(now) ;;
	untar)
		mkdir -p "$T/fs/un"
		t0=$(now)
		"${run[@]}" /usr/bin/time -f "TIME %e %U %S %w %c" tar -xf "$T/tree.tar" -C "$T/fs/un"
		t1=$(now) ;;
	esac
	echo "RESULT $what $sensor wall_s=$(el "$t0" "$t1")"
}
fwrite_sandgate() { # [NAME]: sandgate, or base (SGB is the build)
	local name=${1:-sandgate} out n t0 t1 got last=-1 stable=0 ovf
	mkdir -p "$T/fs/fw"
	sync
	t0=$(now)
	out=$(sgrun "$BIN/bench/bench_fwrite" "$T/fs/fw" "$FW_PROC" "$FW_FILES")   # same writer
	# The time until the last file event is journaled (polled every 0.1 s).
	while :; do
		got=$(lines | grep -c '"event":"file\.' || true)
		[ "$got" -ge $((3 * FW_PROC * FW_FILES)) ] && break
		if [ "$got" -eq "$last" ]; then
			stable=$((stable + 1)); [ "$stable" -ge 20 ] && break
		else stable=0; fi
		last=$got
		sleep 0.1
	done
	t1=$(now)
	ovf=$(lines | jq -s '[.[] | select(.event == "sensor.loss" and .sensor == "fanotify")] | length')
	echo "RESULT threads fwrite $(thread_cpu)"
	echo "RESULT fwrite $name writer='$out' events=$got want=$((3 * FW_PROC * FW_FILES))" \
		"journaled_s=$(el "$t0" "$t1") rate=$(echo "$got / ($t1 - $t0)" | bc) overflows=$ovf"
}

# order A B: A B in odd rounds, B A in even ones (r: the round).
order() { if [ $((r % 2)) -eq 1 ]; then echo "$1 $2"; else echo "$2 $1"; fi; }
has() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$T/w"
gen_project
gen_tree
for r in $(seq "$ROUNDS"); do
	echo "# round $r $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	if has storm; then
		storm_none
		for who in $(order sandgate base); do
			[ "$who" = base ] && [ -z "$BASE" ] && continue
			storm_sandgate "$who" "$([ "$who" = base ] && echo "$BASE" || echo "$BIN")"
		done
		[ -n "${NO_PEERS:-}" ] || storm_auditd
		[ -n "${NO_PEERS:-}" ] || storm_forkstat
	fi
	if has work; then
		# none and sandgate alternate which goes first; cgroup (the same session cgroup,
		# a daemon with no audit sensors: the sandbox's own cost) sits between them
		[ $((r % 2)) -eq 1 ] && fresh_fs && work make none && work untar none
		fresh_fs
		sg_start "$BIN" "enabled: false"
		work make cgroup
		work untar cgroup
		sg_stop
		for who in $(order sandgate base); do
			[ "$who" = base ] && [ -z "$BASE" ] && continue
			fresh_fs
			SGB=$([ "$who" = base ] && echo "$BASE" || echo "$BIN")
			sg_start "$SGB"
			work make "$who"
			echo "RESULT threads make $(thread_cpu)"
			work untar "$who"
			sleep 2   # what the background consumers still had to do
			echo "RESULT threads make+untar $(thread_cpu)"
			sg_stop
			SGB=
		done
		[ $((r % 2)) -eq 0 ] && fresh_fs && work make none && work untar none
		mountpoint -q "$T/fs" && umount "$T/fs"
	fi
	if has make; then   # the build alone, many rounds for its small overhead
		[ $((r % 2)) -eq 1 ] && work make none
		sg_start "$BIN"
		work make sandgate
		echo "RESULT threads make $(thread_cpu)"
		sg_stop
		[ $((r % 2)) -eq 0 ] && work make none
	fi
	if has fwrite; then
		for who in $(order sandgate base); do
			[ "$who" = base ] && [ -z "$BASE" ] && continue
			fresh_fs   # the root filesystem here caps the writers below the target's rate
			SGB=$([ "$who" = base ] && echo "$BASE" || echo "$BIN")
			sg_start "$SGB"
			fwrite_sandgate "$who"
			sg_stop
			SGB=
			mountpoint -q "$T/fs" && umount "$T/fs"
		done
	fi
done
