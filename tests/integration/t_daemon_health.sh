#!/usr/bin/env bash
# Operators' view (issue 18.5): leveled logs honouring log_level; /healthz 200 while the
# journal advances with signed checkpoints, 503 with the reason when it stops (a full
# disk), and `sandgate status` exiting 1 then; /metrics with the journal, sink, sensor
# and session series, `promtool check metrics` clean, no per-session label; a sink that
# keeps failing past its bound is reported (sink.stalled, metric) and stops holding
# retention back (control: with the bounds off, retention waits for it).
. "$(dirname "$0")/lib.sh"
require_root
command -v promtool >/dev/null || { echo "promtool missing (Debian package prometheus)"; echo "0 passed, 1 failed"; exit 1; }

PORT=$((20000 + $$ % 20000))
M=$T_TMP/small
mkdir -p "$M"
mount -t tmpfs -o size=64m tmpfs "$M"
cleanup "umount -l '$M'"

cat >"$T_TMP/c.yaml" <<YAML
gateway: {enabled: false}
metrics_listen: 127.0.0.1:$PORT
log_level: info
journal:
  checkpoint_interval: 200ms
  heartbeat_interval: 300ms
sinks:
  - name: good
    kind: file
    path: $T_TMP/good.jsonl
YAML
rm -f "$T_TMP/h.sock"
"$BIN/sandgated" --config "$T_TMP/c.yaml" --state-dir "$M/state" --control "$T_TMP/h.sock" \
	>"$T_TMP/h.log" 2>&1 &
DPID=$!
SG_SOCK=$T_TMP/h.sock
cleanup "stop_at_exit $DPID"
wait_for "socket" 10 test -S "$SG_SOCK" || { cat "$T_TMP/h.log"; finish; }

# ---- logs ----------------------------------------------------------------------------
check "log lines carry their level" wait_for "running" 5 grep -q '^sandgated: info: running' "$T_TMP/h.log"

# ---- healthy -------------------------------------------------------------------------
sleep 1.5
code=$(curl -s -o "$T_TMP/hz" -w '%{http_code}' "http://127.0.0.1:$PORT/healthz")
check "/healthz answers 200 while the journal advances ($code: $(cat "$T_TMP/hz"))" test "$code" = 200
check "sandgate status exits 0 when healthy" "$BIN/sandgate" status --control "$SG_SOCK"
curl -s "http://127.0.0.1:$PORT/metrics" >"$T_TMP/m1"
check "promtool check metrics is clean" sh -c "promtool check metrics <'$T_TMP/m1'"
for s in sandgate_journal_lines_total sandgate_journal_bytes_total \
	sandgate_journal_checkpoint_age_seconds 'sandgate_sink_lag_events{sink="good"}' \
	'sandgate_sink_lag_seconds{sink="good"}' 'sandgate_sink_failures_total{sink="good"}' \
	'sandgate_sink_backlog_bytes{sink="good"}' 'sandgate_sessions{state="running"}' \
	'sandgate_sensor_up{sensor="exec"}' 'sandgate_healthy 1'; do
	check "metric $s" grep -qF "$s" "$T_TMP/m1"
done
check "no per-session label" sh -c "! grep -q 'session=' '$T_TMP/m1'"
age=$(sed -n 's/^sandgate_journal_checkpoint_age_seconds //p' "$T_TMP/m1")
echo "checkpoint age while healthy: ${age}s"

# ---- the journal stops: a full disk --------------------------------------------------
fallocate -l 64m "$M/filler" 2>/dev/null || dd if=/dev/zero of="$M/filler" bs=1M 2>/dev/null
unhealthy() { [ "$(curl -s -o "$T_TMP/hz" -w '%{http_code}' "http://127.0.0.1:$PORT/healthz")" = 503 ]; }
t0=$(date +%s.%N)
check "/healthz answers 503 once the journal stops" wait_for "503" 30 unhealthy
t1=$(date +%s.%N)
echo "503 after $(echo "$t1 - $t0" | bc) s: $(cat "$T_TMP/hz")"
check "the reason names the journal" grep -q "journal" "$T_TMP/hz"
"$BIN/sandgate" status --control "$SG_SOCK" >/dev/null 2>"$T_TMP/st.err"
rc=$?
check "sandgate status exits non-zero when unhealthy ($rc: $(cat "$T_TMP/st.err"))" test "$rc" -ne 0
check "the metric says so" sh -c "curl -s http://127.0.0.1:$PORT/metrics | grep -q '^sandgate_healthy 0'"
rm -f "$M/filler"
healthy() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz")" = 200 ]; }
check "healthy again once space returns" wait_for "200" 30 healthy
kill -TERM "$DPID"; wait "$DPID"
check "the journal verifies" "$BIN/sandgate" verify "$M/state"

# ---- a sink that keeps failing -------------------------------------------------------
# A sealed journal from the generator, retention on a fake clock past the hot period:
# every segment is due; a file sink whose directory does not exist fails forever.
run_stall() { # run_stall NAME STALL_AFTER: daemon on a fresh generated journal
	local S=$T_TMP/$1
	"$BIN/sg_genevents" --segment-bytes 3000 "$S" >/dev/null
	cat >"$T_TMP/$1.yaml" <<YAML
gateway: {enabled: false}
metrics_listen: 127.0.0.1:$PORT
host: genhost
retention:
  hot: 1d
  interval: 200ms
sinks:
  - name: broken
    kind: file
    path: $T_TMP/no-such-dir/out.jsonl
    retry_min: 100ms
    retry_max: 200ms
    stall_after: $2
    stall_bytes: 0
YAML
	SANDGATE_RETENTION_NOW=2026-12-10T00:00:00Z start_daemon "$1" --config "$T_TMP/$1.yaml"
}
cold() { ls "$1"/cold/*.zst 2>/dev/null | wc -l; }

run_stall nobound 0
sleep 4
n_ctl=$(cold "$SG_STATE")
check "control: with no bound, retention waits for the failing sink ($n_ctl cold)" test "$n_ctl" -eq 0
stop_daemon

run_stall bound 1s
stalled() { [ "$(count_events "$SG_STATE" sink.stalled)" -ge 1 ]; }
check "sink.stalled is recorded" wait_for "sink.stalled" 15 stalled
e=$(journal_lines "$SG_STATE" | grep '"event":"sink.stalled"' | head -1)
echo "$e"
check "it names the sink and the bound" jq -e '.sink == "broken" and .reason == "failing_for" and .failures > 0' <<<"$e"
alerted() { journal_lines "$SG_STATE" | grep '"event":"alert"' | grep -q 'sink-stalled'; }
check "detection raises an alert for it (rule sink-stalled)" wait_for "alert" 15 alerted
check "the marker retention reads exists" test -e "$SG_STATE/sinks/broken.stalled"
curl -s "http://127.0.0.1:$PORT/metrics" >"$T_TMP/m2"
check "the stalled metric is 1" grep -q '^sandgate_sink_stalled{sink="broken"} 1' "$T_TMP/m2"
check "failures are counted" grep -Eq '^sandgate_sink_failures_total\{sink="broken"\} [1-9]' "$T_TMP/m2"
check "promtool check metrics is clean with sinks" sh -c "promtool check metrics <'$T_TMP/m2'"
has_cold() { [ "$(cold "$SG_STATE")" -ge 1 ]; }
check "retention archives past the stalled sink" wait_for "cold" 20 has_cold
echo "cold segments: $(cold "$SG_STATE")"
check "the stall is logged once" test "$(count_events "$SG_STATE" sink.stalled)" -eq 1
stop_daemon
check "the journal verifies" "$BIN/sandgate" verify "$SG_STATE"

# ---- log_level honoured ---------------------------------------------------------------
printf 'log_level: warn\ngateway: {enabled: false}\n' >"$T_TMP/w.yaml"
start_daemon quiet --config "$T_TMP/w.yaml"
stop_daemon
check "log_level warn: no info lines" sh -c "! grep -q ': info: ' '$T_TMP/quiet.log'"
finish
