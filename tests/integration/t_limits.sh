#!/usr/bin/env bash
# Resource limits, for real on this host's cgroups: a memory hog OOM-killed under 64 MiB
# (victim pid from the kernel log; the session ends "oom" when it was the last process,
# lives on when it was not), a bounded fork loop stopped by pids.max, a busy loop
# throttled at 0.2 CPU, a workdir filled past --disk (kill), a session past --timeout.
# Each resource.limit is checked field by field. The cases run side by side: ~10 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

# The audit sensors are off: not needed here, and a SIGHUP (below) frees the config the
# fanotify thread still reads (a use-after-free in audit/, reported, not this test's).
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  enabled: false
limits:
  sample_interval: 200ms
  report_interval: 1s
  disk_interval: 200ms
  disk_action: kill"
start_daemon a --config "$T_TMP/c.yaml"
W=$T_TMP/work
mkdir -p "$W"

terminated() { "$BIN/sandgate" session show "$1" --control "$SG_SOCK" | jq -e '.state == "terminated"' >/dev/null; }
has_limit() { ev resource.limit "$1" | jq -s -e --arg l "$2" 'any(.[]; .limit == $l)' >/dev/null; }
# lim SESSION LIMIT: the first resource.limit LIMIT of SESSION.
lim() { ev resource.limit "$1" | jq -c --arg l "$2" 'select(.limit == $l)' | head -n1; }

have_mem=0
[ -d /sys/fs/cgroup/memory ] || grep -qw memory "$CG2/cgroup.controllers" && have_mem=1

# --end-when-empty: the OOM kill of m1's last process ends it (m2 keeps one).
sg session create --id m1 --memory 64M --end-when-empty >/dev/null && sg session start m1 >/dev/null
sg session create --id m2 --memory 64M --end-when-empty >/dev/null && sg session start m2 >/dev/null
sg session create --id p1 --pids 20 >/dev/null && sg session start p1 >/dev/null
sg session create --id c1 --cpus 0.2 >/dev/null && sg session start c1 >/dev/null
sg session create --id d1 --disk 4M --workdir "$W" >/dev/null && sg session start d1 >/dev/null
sg session create --id t1 --timeout 2 >/dev/null && sg session start t1 >/dev/null

# Everything starts at once; each `run` is bounded by its limit or by the cleanup.
# The hogs run --privileged: the test compares the kernel log's victim pid with their
# $$, which in a contained run is the session's pid namespace's, not the host's.
sgrun --privileged --session m1 -- sh -c "echo \$\$ >'$T_TMP/m1.pid'; exec tail /dev/zero" >/dev/null 2>&1 &
sgrun --session m2 -- sleep 30 &
sgrun --privileged --session m2 -- sh -c "echo \$\$ >'$T_TMP/m2.pid'; exec tail /dev/zero" >/dev/null 2>&1 &
# A fork loop bounded at 100 attempts; pids.max 20 refuses most of them.
sgrun --session p1 -- sh -c 'n=0; while [ $n -lt 100 ]; do sleep 30 & n=$((n+1)); done; wait' \
	>/dev/null 2>&1 &
sgrun --session c1 -- sh -c 'while :; do :; done' &
sgrun --session d1 -- sh -c "head -c 8M /dev/zero >'$W/fill'; sleep 30" &
sgrun --session t1 -- sleep 30 &

# ---- memory: OOM of the last process ----------------------------------------------------
if [ "$have_mem" = 1 ]; then
	wait_for "m1 ends" 10 terminated m1
	wait_for "m1 memory_oom" 3 has_limit m1 memory_oom
	e=$(lim m1 memory_oom)
	echo "m1: $e"
	jcheck "oom: limit memory_oom" "$e" '.limit == "memory_oom"'
	jcheck "oom: configured 64 MiB" "$e" '.configured == 67108864'
	jcheck "oom: measured is the peak, near the limit" "$e" \
		'(.measured | type) == "number" and .measured > 60000000 and .measured <= 67108864'
	jcheck "oom: action kill" "$e" '.action == "kill"'
	jcheck "oom: pid is the hog" "$e" ".pid == $(cat "$T_TMP/m1.pid")"
	jcheck "oom: comm" "$e" '.comm == "tail"'
	jcheck "oom: one kill per event" "$e" '.count == 1'
	jcheck "oom: source kernel" "$e" '.source == "kernel"'
	jcheck "oom: exactly one memory_oom" "$(ev resource.limit m1 | jq -s -c 'map(select(.limit == "memory_oom"))')" 'length == 1'
	e=$(lim m1 memory_max)
	jcheck "memory_max: count, configured, throttle" "$e" \
		'.count > 0 and .configured == 67108864 and .action == "throttle" and .pid == null and .measured > 60000000'
	e=$(ev session.terminate m1)
	jcheck "oom of the last process: reason oom" "$e" '.reason == "oom" and .actor == null'
	# memory_oom is recorded before the session ends
	jcheck "resource.limit before session.terminate" \
		"$(journal_lines "$SG_STATE" | jq -s -c '[.[] | select(.session_id == "m1") | .event]')" \
		'index("resource.limit") < index("session.terminate")'

	# ---- memory: OOM of one process among others: the session lives on ----------------
	wait_for "m2 memory_oom" 10 has_limit m2 memory_oom
	e=$(lim m2 memory_oom)
	jcheck "m2: oom victim pid" "$e" ".pid == $(cat "$T_TMP/m2.pid") and .action == \"kill\""
	sleep 0.7
	check "m2: still running after its hog's OOM" sh -c "'$BIN/sandgate' session show m2 --control '$SG_SOCK' | jq -e '.state == \"running\"' >/dev/null"
else
	echo "# no memory controller: OOM cases skipped"
fi

# ---- pids ---------------------------------------------------------------------------
wait_for "p1 pids_max" 10 has_limit p1 pids_max
e=$(lim p1 pids_max)
echo "p1: $e"
jcheck "pids: limit pids_max" "$e" '.limit == "pids_max"'
jcheck "pids: configured 20" "$e" '.configured == 20'
jcheck "pids: measured is the peak, at the limit" "$e" '.measured == 20'
jcheck "pids: forks refused counted" "$e" '.count > 0'
jcheck "pids: action throttle, no pid" "$e" '.action == "throttle" and .pid == null'
jcheck "pids: window_ms" "$e" '(.window_ms | type) == "number"'
sg session terminate p1 >/dev/null
check "pids: everything killed" sh -c "[ \"\$(cat '$CG2/$SG_PARENT/p1/cgroup.procs' | wc -l)\" -eq 0 ]"

# ---- cpu ----------------------------------------------------------------------------
wait_for "c1 cpu_throttle" 10 has_limit c1 cpu_throttle
e=$(lim c1 cpu_throttle)
echo "c1: $e"
jcheck "cpu: limit cpu_throttle" "$e" '.limit == "cpu_throttle"'
jcheck "cpu: configured 0.2 CPU" "$e" '.configured == 0.2'
jcheck "cpu: measured throttled us" "$e" '.measured > 0'
jcheck "cpu: periods throttled" "$e" '.count > 0'
jcheck "cpu: action throttle, no pid" "$e" '.action == "throttle" and .pid == null'
jcheck "cpu: window" "$e" '.window_ms > 0'
# Bounded rate: the loop is throttled all along, yet reports come one per report_interval
# (1 s): at least 2 in 2.5 s, and never two closer than the interval (timer slack 0.1 s).
sleep 2.5
gaps=$(ev resource.limit c1 | jq -s -c '[.[] | select(.limit == "cpu_throttle") | .ts |
	capture("T(?<h>[0-9]+):(?<m>[0-9]+):(?<s>[0-9.]+)Z") |
	(.h | tonumber) * 3600 + (.m | tonumber) * 60 + (.s | tonumber)] |
	[range(1; length) as $i | .[$i] - .[$i - 1]]')
echo "c1 report gaps: $gaps"
jcheck "cpu: reports go on while throttled" "$gaps" 'length >= 2'
jcheck "cpu: reports bounded by report_interval" "$gaps" 'all(.[]; . >= 0.9)'
sg session terminate c1 >/dev/null

# ---- disk ---------------------------------------------------------------------------
wait_for "d1 ends" 10 terminated d1
e=$(lim d1 disk_quota)
echo "d1: $e"
jcheck "disk: limit disk_quota" "$e" '.limit == "disk_quota"'
jcheck "disk: configured 4 MiB" "$e" '.configured == 4194304'
jcheck "disk: measured past it" "$e" '.measured > 4194304'
jcheck "disk: action kill" "$e" '.action == "kill" and .pid == null'
jcheck "disk: walk complete" "$e" '.truncated == false and .source == "sandgate"'
jcheck "disk kill: reason disk_quota" "$(ev session.terminate d1)" '.reason == "disk_quota"'

# ---- timeout ------------------------------------------------------------------------
wait_for "t1 ends" 10 terminated t1
e=$(lim t1 timeout)
echo "t1: $e"
jcheck "timeout: limit timeout" "$e" '.limit == "timeout"'
jcheck "timeout: configured 2 s" "$e" '.configured == 2'
jcheck "timeout: measured 2 s" "$e" '.measured == 2'
jcheck "timeout: action kill, no pid" "$e" '.action == "kill" and .pid == null'
jcheck "timeout: source sandgate" "$e" '.source == "sandgate"'
jcheck "timeout: session.terminate reason timeout" "$(ev session.terminate t1)" '.reason == "timeout"'

# ---- disk, warn (after a reload: the watcher takes the new limits: section) ---------------
write_config "$T_TMP/c.yaml" "gateway: {enabled: false}
audit:
  enabled: false
limits:
  sample_interval: 200ms
  report_interval: 1s
  disk_interval: 200ms
  disk_action: warn"
kill -HUP "$DPID"
reloaded() { [ "$(count_events "$SG_STATE" daemon.reload)" -ge 1 ]; }
wait_for "the reload" 5 reloaded
W2=$T_TMP/work2
mkdir -p "$W2"
sg session create --id d2 --disk 1M --workdir "$W2" >/dev/null && sg session start d2 >/dev/null
sgrun --session d2 -- sh -c "head -c 2M /dev/zero >'$W2/a'; sleep 30" &
nwarn() { ev resource.limit d2 | jq -s 'map(select(.limit == "disk_quota")) | length'; }
wait_for "d2 disk warning" 5 has_limit d2 disk_quota
e=$(lim d2 disk_quota)
jcheck "disk warn: action warn, measured, configured" "$e" \
	'.action == "warn" and .measured > 1048576 and .configured == 1048576 and .pid == null'
sleep 0.6
check "disk warn: once per crossing" test "$(nwarn)" -eq 1
check "disk warn: the session goes on" sh -c "'$BIN/sandgate' session show d2 --control '$SG_SOCK' | jq -e '.state == \"running\"' >/dev/null"
rm -f "$W2/a"
sleep 1
head -c 2M /dev/zero >"$W2/b"
twowarn() { [ "$(nwarn)" -ge 2 ]; }
wait_for "a second crossing" 5 twowarn
check "disk warn: a second crossing, a second warning" twowarn
sg session terminate d2 >/dev/null

check "daemon still alive" kill -0 "$DPID"
finish
