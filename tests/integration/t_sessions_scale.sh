#!/usr/bin/env bash
# 1000 sessions created, started, terminated and cleaned up, twice: no cgroup, registry
# file, fd or memory left behind (the second round must not grow the daemon).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

N=${SG_SCALE_N:-1000}
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}"
# Sanitizer builds keep freed memory in quarantine, which would hide (or fake) growth.
export ASAN_OPTIONS="quarantine_size_mb=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
start_daemon a --config "$T_TMP/c.yaml"

# round PREFIX: N sessions through one connection; prints the number of ok replies.
round() {
	local i
	for ((i = 0; i < N; i++)); do
		printf '{"verb":"session.create","args":{"id":"%s%d","memory":67108864,"pids":32}}\n' "$1" "$i"
		printf '{"verb":"session.start","args":{"id":"%s%d"}}\n' "$1" "$i"
		printf '{"verb":"session.terminate","args":{"id":"%s%d"}}\n' "$1" "$i"
		printf '{"verb":"session.cleanup","args":{"id":"%s%d"}}\n' "$1" "$i"
	done | timeout 300 socat -t 120 - "UNIX-CONNECT:$SG_SOCK" | grep -c '"ok":true'
}
# The audit threads open /proc files for a moment on every exec on the host: the
# smallest of a few samples is the daemon's lasting fd count.
fds() {
	local i n min=1000000
	for i in 1 2 3 4 5 6 7 8 9 10; do
		n=$(ls /proc/$DPID/fd | wc -l)
		[ "$n" -lt "$min" ] && min=$n
		sleep 0.02
	done
	echo "$min"
}
rss_kb() { awk '/^VmRSS/ {print $2}' /proc/$DPID/status; }

req '{"verb":"ping"}' >/dev/null   # answered from the loop: every part is up
fd0=$(fds)
ok=$(round a)
check "round 1: all $((4 * N)) requests served ($ok)" test "$ok" -eq $((4 * N))
check "round 1: no cgroup left" test "$(count_children)" -eq 0
fd1=$(fds); rss1=$(rss_kb)
ok=$(round b)
check "round 2: all $((4 * N)) requests served ($ok)" test "$ok" -eq $((4 * N))
fd2=$(fds); rss2=$(rss_kb)
check "no cgroup left" test "$(count_children)" -eq 0
check "no registry file left" test -z "$(ls "$SG_STATE/sessions")"
check "no fd leaked ($fd0 $fd1 $fd2)" test "$fd2" -le "$fd0"
check "RSS bounded (${rss1} kB -> ${rss2} kB)" test "$rss2" -le $((rss1 + 8192))
check "$((8 * N)) lifecycle events" test "$(journal_lines "$SG_STATE" | grep -c '"event":"session\.\(create\|start\|terminate\|cleanup\)"')" -ge $((8 * N))
stop_daemon
check "the daemon exits 0 (no sanitizer report)" test $? -eq 0
finish
