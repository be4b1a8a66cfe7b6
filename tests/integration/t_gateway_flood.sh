#!/usr/bin/env bash
# Records stay bounded under a flood of blocked attempts, and nothing goes uncounted
# (issue 14, item 6). One session (fl) floods the
# gateway for 10 s with blocked TCP connection attempts (non-blocking connect() to an
# address it never resolved, then close), then for 10 s with blocked DNS queries; another
# session (vi) asks the resolver for an allowed name every 20 ms meanwhile. Measured and
# printed: attempts made, the journal's growth (lines, bytes; the index's), the daemon's
# peak RSS, vi's DNS latency p50/p99 before and during each flood. Checked: >= 100k
# attempts in the 10 s (the flooder is tests/tools/sg_flood.c: Python made only 24-86k);
# past the budget (gateway.blocked_budget, 100/s) the attempts are in
# net.blocked_summary counts, those the kernel's flood limit rejected
# (gateway.flood_rate, 100/s: nft/nft_flood.c) in summaries of kind "flood"; lines
# written one by one + summarised counts = attempts made (any queue drop is in
# sensor.loss); growth <= 2,000 lines; RSS <= 64 MB; vi's DNS p99 <= 10 ms during each
# flood (the flood limit keeps fl's attempts out of the queue vi's DNS goes through, and
# the workers run SCHED_RR while it is on); the workers' nice and policy during and after.
# Control: below the budget every blocked attempt has its own net.connect.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
. "$(dirname "$0")/gateway_lab.sh"
require_root
# Under AddressSanitizer freed memory sits in a quarantine (256 MB): RSS would measure it.
export ASAN_OPTIONS="quarantine_size_mb=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
lab_up

GW_ENFORCE=true gw_config "$T_TMP/c.yaml" "  resolvers: [198.18.1.2]
  block_burst: 0
policies:
  default:
    allow:
      - domain: web.test"
start_daemon a --config "$T_TMP/c.yaml" || { fail "daemon starts"; finish; }
wait_gateway
sg session create --id fl >/dev/null && sg session start fl >/dev/null
sg session create --id vi >/dev/null && sg session start vi >/dev/null
# Sessions end with their last process: one long-lived process in each.
in_sess fl sleep 600 &
in_sess vi sleep 600 &

# The flooder: attempts at RATE per second for SECS seconds, prints how many it made.
cat >"$T_TMP/flood.py" <<'PY'
import socket, sys, time, struct
kind, rate, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
n, t0 = 0, time.monotonic()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.setblocking(False)
q = b"\x03bad\x03web\x04test\x00\x00\x01\x00\x01"
while True:
    el = time.monotonic() - t0
    if el >= secs:
        break
    if n > el * rate:
        time.sleep(0.001)
        continue
    for _ in range(50):
        if kind == "tcp":
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("198.18.1.9", 9000))
            except OSError:
                pass
            s.close()
        else:
            try:
                u.sendto(struct.pack(">HHHHHH", n & 0xFFFF, 0x0100, 1, 0, 0, 0) + q, ("198.18.1.2", 53))
            except OSError:
                continue   # socket buffer full: not sent, not counted
            try:
                while True:
                    u.recv(512)
            except OSError:
                pass
        n += 1
print(n)
PY
# The victim: a query for web.test every 20 ms for SECS seconds; prints p50 p99 (ms) lost.
cat >"$T_TMP/victim.py" <<'PY'
import socket, struct, sys, time, random
secs = float(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1.0)
lat, lost, end = [], 0, time.monotonic() + secs
while time.monotonic() < end:
    qid = random.randrange(65536)
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + b"\x03web\x04test\x00\x00\x01\x00\x01"
    t = time.perf_counter()
    s.sendto(q, ("198.18.1.2", 53))
    try:
        while s.recv(512)[:2] != q[:2]:
            pass
        lat.append((time.perf_counter() - t) * 1000)
    except OSError:
        lost += 1
    time.sleep(0.02)
lat.sort()
pick = lambda p: lat[min(len(lat) - 1, int(len(lat) * p))] if lat else 9999
print("%.2f %.2f %d %d" % (pick(0.5), pick(0.99), lost, len(lat)))
PY
lines() { journal_lines "$SG_STATE" | wc -l; }
lines_not_vi() { journal_lines "$SG_STATE" | grep -vc '"session_id":"vi"'; }
# the lines the flood itself caused: the gateway's and the daemon's, not vi's (the
# flooders' own process and file events, Python starting up, are not the flood's)
lines_flood() { journal_lines "$SG_STATE" | grep -v '"session_id":"vi"' | grep -Ec '"source":"(gateway|sandgate)"'; }
jbytes() { cat "$SG_STATE"/journal/*.jsonl | wc -c; }
ibytes() { du -sb "$SG_STATE/index" 2>/dev/null | cut -f1; }
backlog() { in_gw awk '$1 == 100 || $1 == 101 { n += $3 } END { print n + 0 }' /proc/net/netfilter/nfnetlink_queue; }
rss_kb() { # builtins only (see nfq_nice)
	local k v _
	while read -r k v _; do [ "$k" = VmRSS: ] && echo "$v" && return; done <"/proc/$DPID/status"
}
# rss_watch FILE: the daemon's peak RSS (kB) into FILE, every 200 ms until killed.
rss_watch() {
	local max=0 r
	while :; do
		r=$(rss_kb)
		[ -n "$r" ] && [ "$r" -gt "$max" ] && max=$r && echo "$max" >"$1"
		sleep 0.2
	done
}
# nfq_stat FIELD: that field of /proc/PID/task/TID/stat (counted after the comm's ")",
# the state being 1) for each queue worker (sg-nfq*), one line. Shell builtins only: a
# watcher that forks while the victim is timed takes the CPUs it measures (a first
# version forked ~150 processes/s and doubled the victim's p99 under the connect() flood).
nfq_stat() {
	local f=$1 t c st out=""
	for t in /proc/$DPID/task/*; do
		read -r c <"$t/comm" 2>/dev/null || continue
		[[ $c == sg-nfq* ]] || continue
		read -r st <"$t/stat" 2>/dev/null || continue
		st=${st##*) }
		set -- $st
		out+="${!f} "
	done
	echo "$out"
}
nfq_nice() { nfq_stat 17; }     # stat field 19: nice
nfq_policy() { nfq_stat 39; }   # stat field 41: policy (0 SCHED_OTHER, 2 SCHED_RR)
# nice_watch FILE: the lowest nice a queue worker had (every 200 ms until killed); FILE.rr
# is written when one ran SCHED_RR.
nice_watch() {
	local min=100 n
	while :; do
		for n in $(nfq_nice); do
			[ "$n" -lt "$min" ] && min=$n && echo "$min" >"$1"
		done
		for n in $(nfq_policy); do
			[ "$n" = 2 ] && echo 2 >"$1.rr"
		done
		sleep 0.2
	done
}
workers_at_base() { [ -n "$(nfq_nice)" ] && [ "$(nfq_nice | tr -d ' 0')" = "" ] && [ "$(nfq_policy | tr -d ' 0')" = "" ]; }
NICE0=$(nfq_nice)
check "the queue workers run at the daemon's nice before any flood ($NICE0)" workers_at_base

# ---- control: below the budget, every blocked attempt has its own net.connect ----------
in_sess fl python3 "$T_TMP/flood.py" tcp 50 1 >"$T_TMP/ctl.n"
sleep 1
n=$(cat "$T_TMP/ctl.n")
got=$(evq '.event == "net.connect" and .session_id == "fl" and .verdict == "blocked"' | wc -l)
check "control: $n attempts below the budget, $got net.connect (one each)" test "$got" -eq "$n" -a "$n" -ge 40

base=$(in_sess vi python3 "$T_TMP/victim.py" 10)
BASE99=$(cut -d' ' -f2 <<<"$base")
echo "# vi's DNS without a flood: p50/p99 $(cut -d' ' -f1-2 <<<"$base") ms"
# p99_check WHAT: vi's p99 under the flood <= 10 ms (the baseline just before, BASE99, is
# printed beside it).
p99_check() {
	local p=$(cut -d' ' -f2 <<<"$VIC")
	check "$1: another session's DNS p99 <= 10 ms ($p ms; without a flood $BASE99 ms; $(cut -d' ' -f3 <<<"$VIC") lost)" \
		awk -v p="$p" 'BEGIN { exit !(p <= 10) }'
}
# nice_check WHAT: while the flood limit was on the workers ran at nice -10
# (gateway.flood_worker_priority), and they are back at the daemon's once it is lifted.
nice_check() {
	check "$1: the queue workers at nice -10 while the flood limit was on (lowest $NICE_MIN)" \
		test "$NICE_MIN" -eq -10
	check "$1: the queue workers SCHED_RR while the flood limit was on (gateway.flood_worker_realtime)" \
		test -s "$T_TMP/nice.min.rr"
	check "$1: the workers back at the daemon's nice and SCHED_OTHER when the limit is lifted" \
		wait_for "workers at nice 0" 20 workers_at_base
}
# rate_check WHAT: >= 100k attempts in the 10 s.
rate_check() {
	check "$1: >= 100k attempts in 10 s ($N)" test "$N" -ge 100000
}
# The p99 was a known gap (printed, not failed) until 2026-12-03: at nice -10 alone a
# woken worker still waited for a flooder's slice, and the connect() flood's p99 was
# 6.3-15.5 ms under ASan (6 of 8 runs held); with the workers SCHED_RR while a limit is
# on (gateway.flood_worker_realtime) 3.1-4.4 ms (docs/gateway.md "Threads").

# flood KIND: 10 s of blocked attempts of KIND; sets N, GROWTH, GROWTH_ALL, RSS, VIC.
flood() {
	local l0 l0a lf0 b0 i0 wpid t0
	sleep 6           # the last summary of anything before is out
	l0=$(lines_not_vi); l0a=$(lines); lf0=$(lines_flood); b0=$(jbytes); i0=$(ibytes); RSS0=$(rss_kb)
	t0=$(date +%s)
	echo 0 >"$T_TMP/rss.max"
	rss_watch "$T_TMP/rss.max" &
	wpid=$!
	echo 100 >"$T_TMP/nice.min"
	rm -f "$T_TMP/nice.min.rr"
	nice_watch "$T_TMP/nice.min" &
	local npid=$!
	in_sess vi python3 "$T_TMP/victim.py" 10 >"$T_TMP/vic.out" &
	local vpid=$!
	# 12k attempts/s from eight processes (TCP: each connect() is CPU-bound on a loaded
	# machine) or two (UDP); Python alone did not reach 10k/s.
	if [ "$1" = tcp ]; then
		in_sess fl "$BIN/sg_flood" tcp 198.18.1.9 9000 12000 10 8 >"$T_TMP/flood.n"
	else
		in_sess fl "$BIN/sg_flood" udp 198.18.1.2 53 12000 10 2 >"$T_TMP/flood.n"
	fi
	wait "$vpid"
	local i=0   # until every queued attempt is decided (the gateway may lag behind)
	while [ "$(backlog)" != 0 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	echo "# $1 flood: the queues were empty $((i / 10)) s after the flood"
	SECS=$(($(date +%s) - t0 + 1))   # attempts were decided during these (budget refills)
	sleep 6.5   # the summaries of the flood's last interval
	kill "$wpid" "$npid"; wait "$wpid" "$npid" 2>/dev/null
	NICE_MIN=$(cat "$T_TMP/nice.min")
	N=$(cat "$T_TMP/flood.n"); VIC=$(cat "$T_TMP/vic.out"); RSS=$(cat "$T_TMP/rss.max")
	GROWTH=$(($(lines_flood) - lf0)); GROWTH_SESS=$(($(lines_not_vi) - l0)); GROWTH_ALL=$(($(lines) - l0a))
	echo "# $1 flood: the lines by event: $(journal_lines "$SG_STATE" | tail -n "$GROWTH_ALL" |
		jq -r -R 'fromjson? | .event' | sort | uniq -c | sort -rn | awk '{ printf "%s %s, ", $2, $1 }')"
	echo "# $1 flood: $N attempts in 10 s; journal +$GROWTH lines from the flood (+$GROWTH_SESS with fl's process/file events, +$GROWTH_ALL with vi's own)," \
		"+$((($(jbytes) - b0) / 1024)) KiB; index +$(((${i0:-0} > 0 ? $(ibytes) - i0 : 0) / 1024)) KiB;" \
		"RSS ${RSS0} kB before, peak ${RSS} kB; vi's DNS p50/p99 $(cut -d' ' -f1-2 <<<"$VIC") ms," \
		"$(cut -d' ' -f3 <<<"$VIC") lost of $(( $(cut -d' ' -f3 <<<"$VIC") + $(cut -d' ' -f4 <<<"$VIC") ))"
}
# counted EVENT KIND: lines of EVENT blocked for fl + summarised counts of KIND.
counted() {
	local own sum
	own=$(evq ".event == \"$1\" and .session_id == \"fl\" and .verdict == \"blocked\"" | wc -l)
	sum=$(evq ".event == \"net.blocked_summary\" and .session_id == \"fl\" and (.kind == \"$2\" or .overflow)" |
		jq -s 'map(.count) | add // 0')
	kern=$(evq '.event == "net.blocked_summary" and .session_id == "fl" and .kind == "flood"' |
		jq -s 'map(.count) | add // 0')
	echo "$own $((sum + kern)) $kern"
}
# rss_check WHAT: peak RSS <= 64 MB. An AddressSanitizer build (the test build) starts
# far above a release one (shadow memory, quarantine): there the flood's own share,
# peak - before, is held to 64 MB less the release daemon's ~16 MB.
rss_check() {
	if grep -q AddressSanitizer "$BIN/sandgated"; then
		check "$1: daemon RSS growth <= 48 MB under ASan ($RSS0 -> $RSS kB)" \
			test $((RSS - RSS0)) -le 49152
	else
		check "$1: daemon RSS <= 64 MB (peak $RSS kB)" test "$RSS" -le 65536
	fi
}
qloss() { evq '.event == "sensor.loss" and .sensor == "nfqueue"' | jq -s 'map(.lost // 0) | add // 0'; }

# ---- 1. blocked connection attempts --------------------------------------------------
read -r own0 sum0 k0 <<<"$(counted net.connect connect)"
flood tcp
read -r own1 sum1 k1 <<<"$(counted net.connect connect)"
own=$((own1 - own0)); sum=$((sum1 - sum0)); lost=$(qloss)
echo "# tcp: $own net.connect lines, $sum in summaries ($((k1 - k0)) rejected by the kernel's flood limit), $lost lost in the queue (sensor.loss)"
rate_check "tcp flood"
check "tcp flood: every attempt counted ($own + $sum = $N, queue losses $lost)" \
	test $((own + sum)) -le "$N" -a $((own + sum + lost)) -ge "$N"
check "tcp flood: lines one by one within the budget ($own <= 100/s x $SECS s + 100)" \
	test "$own" -le $((100 * SECS + 100))
check "tcp flood: journal growth <= 2000 lines ($GROWTH)" test "$GROWTH" -le 2000
rss_check "tcp flood"
p99_check "tcp flood"
nice_check "tcp flood"
check "tcp flood: the kernel's flood limit rejected most of it ($((k1 - k0)) of $N)" test $((k1 - k0)) -ge $((N / 2))
e=$(evq '.event == "net.blocked_summary" and .session_id == "fl" and .kind == "flood"' | head -1)
echeck "net.blocked_summary of the kernel's rejects: no destination, reason flood_limit" "$e" \
	'.dst == null and .reason == "flood_limit" and .count > 0 and (.first_ts <= .last_ts)
	 and .flood_rate == 100 and .overflow == false and .source == "gateway"'
e=$(evq '.event == "net.blocked_summary" and .session_id == "fl" and .kind == "connect"' | head -1)
echeck "net.blocked_summary: destination, reason, count, first_ts, last_ts" "$e" \
	'.dst.ip == "198.18.1.9" and .dst.port == 9000 and .proto == "tcp" and .reason != null
	 and .verdict == "blocked" and .count > 0 and (.first_ts <= .last_ts) and .overflow == false
	 and .budget == 100 and .interval_ms == 5000 and .source == "gateway"'

# ---- 2. blocked DNS queries ------------------------------------------------------------
read -r own0 sum0 k0 <<<"$(counted net.dns dns)"
lost0=$(qloss)
flood udp
read -r own1 sum1 k1 <<<"$(counted net.dns dns)"
own=$((own1 - own0)); sum=$((sum1 - sum0)); lost=$(($(qloss) - lost0))
echo "# dns: $own net.dns lines, $sum in summaries ($((k1 - k0)) rejected by the kernel's flood limit), $lost lost in the queue (sensor.loss)"
rate_check "dns flood"
check "dns flood: every query counted ($own + $sum = $N, queue losses $lost)" \
	test $((own + sum)) -le "$N" -a $((own + sum + lost)) -ge "$N"
check "dns flood: journal growth <= 2000 lines ($GROWTH)" test "$GROWTH" -le 2000
rss_check "dns flood"
check "dns flood: lines one by one within the budget ($own <= 100/s x $SECS s + 100)" \
	test "$own" -le $((100 * SECS + 100))
uns=$(evq '.event == "net.dns" and .status == "unsolicited" and .qname == "bad.web.test"' | wc -l)
check "dns flood: the gateway's own REFUSED answers are (almost) never unsolicited net.dns ($uns; <= 1 %)" \
	test "$uns" -le $((N / 100))
p99_check "dns flood"
nice_check "dns flood"
e=$(evq '.event == "net.blocked_summary" and .session_id == "fl" and .kind == "dns"' | head -1)
echeck "net.blocked_summary of queries: name, qtype, resolver, reason" "$e" \
	'.name == "bad.web.test" and .qtype == "A" and .dst.ip == "198.18.1.2" and .dst.port == 53
	 and .proto == "udp" and .count > 0'
check "net.blocked_summary lines: JSON objects with unique keys" sh -c "cat '$SG_STATE'/journal/*.jsonl |
	grep '\"event\":\"net.blocked_summary\"' | python3 -c '
import json, sys
def once(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        sys.exit(1)
    return dict(pairs)
n = sum(1 for l in sys.stdin if json.loads(l, object_pairs_hook=once))
sys.exit(0 if n else 1)'"
check "daemon exits 0 at SIGTERM" stop_daemon
finish
