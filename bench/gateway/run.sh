#!/usr/bin/env bash
# The gateway bench: one lab, six configurations interleaved ROUNDS times, medians and
# ratios (docs/bench-gateway.md says what each configuration is and what was measured).
#
#   bench/gateway/run.sh [BUILD_DIR] [ROUNDS] [SECONDS]     (root; default build/rel 3 3)
#   env: CFGS="A B C I G D" (which configurations, in this order),
#        WL="bulk dns conn tls udp" (which workloads; also ka), OUT=raw.tsv,
#        BASE=DIR: another build (e.g. the tree before a change) for C0 and E0
#
# Lab (namespaces created and removed here; addresses only from 198.18.0.0/15):
#   $SBX  198.18.0.2  --veth--  $GW 198.18.0.1 | 198.18.1.1  --veth--  $PEER 198.18.1.2
#   sandbox (clients)           router: the gateway works here      dnsmasq, nginx 80/443,
#                                                                  iperf3 -s, UDP echo :7
# Configurations (clients in $SBX unless said):
#   A  no rules in $GW
#   B  sandgate's ruleset alone, no reader: the sandbox veth mapped to a mark that already
#      carries the allow verdict (every flow is "decided" in the kernel from its first
#      packet), fail-open (bypass) so DNS, still sent to the queue rule, passes unread
#   C  sandgated, gateway in $GW, interface mode, observe mode, one session on the veth
#   I  as C without the investigation index (index.enabled: false): what the SQLite
#      index of every event costs
#   E  as C, enforcing (the default) with a policy allowing *.web.test; the sandbox
#      resolves bench.web.test through the gateway first (not in the default CFGS)
#   C0, E0  as C and E with the sandgated of $BASE (before/after in one run)
#   G  no rules, clients in $GW (OpenSnitch's baseline)
#   D  opensnitchd 1.5.8 in $GW (default allow, no UI), clients in $GW: it queues only
#      locally generated new connections (OUTPUT) and DNS answers (INPUT)
# Prints the table (markdown) on stdout; raw figures stay in $OUT (default /tmp).
set -euo pipefail

BUILD=$(cd "${1:-build/rel}" && pwd)
# The build tree reads the rules and data of the source tree (common/paths.h).
export SANDGATE_DATA_DIR=${SANDGATE_DATA_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/data} SANDGATE_RULES_DIR=${SANDGATE_RULES_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/rules}
ROUNDS=${2:-3}
SECS=${3:-3}
OUT=${OUT:-/tmp/sgbench-gateway-$(date -u +%Y%m%dT%H%M%S).tsv}
LAB=sgb-$$
SBX=$LAB-sbx GW=$LAB-gw PEER=$LAB-peer
TMP=$(mktemp -d /tmp/sgbench-gw.XXXXXX)
PARENT=sggwb-$$
CG2=/sys/fs/cgroup/unified
[ -d "$CG2" ] || CG2=/sys/fs/cgroup
MPORT=$((20000 + $$ % 10000))
LOAD=$BUILD/bench/bench_gwload
PIDS=()
DPID= OSPID=
SGB=$BUILD   # the build whose sandgated runs C, I, E (C0, E0: $BASE)

log() { echo "# $*" >&2; }
die() { echo "run.sh: $*" >&2; exit 1; }

# ---- teardown: everything the lab made, even after a failure -------------------------
stop_pid() { [ -n "$1" ] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null; return 0; }
teardown() {
	local p ns
	stop_pid "$DPID"; stop_pid "$OSPID"
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -f "$TMP/nginx.pid" ] && kill "$(cat "$TMP/nginx.pid")" 2>/dev/null
	for ns in "$SBX" "$GW" "$PEER"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do   # SIGKILL is not instant
			[ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
			sleep 0.1
		done
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "/etc/netns/$GW"
	rmdir /etc/netns 2>/dev/null || true   # under set -e a failure here ended the teardown
	for p in "$CG2" /sys/fs/cgroup/memory /sys/fs/cgroup/cpu /sys/fs/cgroup/pids; do
		for ns in "$p/$PARENT"/*/; do [ -d "$ns" ] && rmdir "$ns" 2>/dev/null; done
		# a just-emptied child may still be going offline: the parent waits a little
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			[ -d "$p/$PARENT" ] && ! rmdir "$p/$PARENT" 2>/dev/null || break
			sleep 0.2
		done
	done
	rm -rf "$TMP"
	return 0
}
trap teardown EXIT
trap 'exit 130' INT TERM
trap 'echo "run.sh: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR

# ---- OpenSnitch: installed here, never running or leaving rules in the initial netns --
in_init_netns() { [ "$(readlink "/proc/$1/ns/net")" = "$(readlink /proc/1/ns/net)" ]; }
check_no_opensnitch_here() {
	local p
	for p in $(pgrep -x opensnitchd || true); do
		in_init_netns "$p" && die "an opensnitchd (pid $p) runs in the initial namespace"
	done
	if nft list ruleset 2>/dev/null | grep -q 'queue num 0'; then
		die "the initial namespace holds a 'queue num 0' rule (OpenSnitch's?)"
	fi
	return 0
}
install_opensnitch() {
	local made=
	command -v opensnitchd >/dev/null && command -v iptables >/dev/null && return 0
	log "installing opensnitch and iptables (services kept from starting)"
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		made=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends opensnitch iptables \
		>"$TMP/apt.log" 2>&1 || { cat "$TMP/apt.log" >&2; die "apt-get install opensnitch failed"; }
	[ -n "$made" ] && rm -f /usr/sbin/policy-rc.d
	# Nor at the next boot: the bench starts it itself, inside the lab.
	command -v systemctl >/dev/null && systemctl disable opensnitch.service >/dev/null 2>&1
	rm -f /etc/systemd/system/multi-user.target.wants/opensnitch.service
	command -v update-rc.d >/dev/null && update-rc.d opensnitch disable >/dev/null 2>&1
	return 0
}

# ---- the lab ---------------------------------------------------------------------------
lab_links() {
	local ns l
	for ns in "$SBX" "$GW" "$PEER"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
	ip -n "$GW" link add gw0 type veth peer name peer0 netns "$PEER"
	ip -n "$GW" link add gwsbx type veth peer name sbx0 netns "$SBX"
	ip -n "$GW" addr add 198.18.1.1/24 dev gw0
	ip -n "$GW" addr add 198.18.0.1/30 dev gwsbx
	ip -n "$PEER" addr add 198.18.1.2/24 dev peer0
	ip -n "$SBX" addr add 198.18.0.2/30 dev sbx0
	for l in "$GW gw0" "$GW gwsbx" "$PEER peer0" "$SBX sbx0"; do
		set -- $l
		ip -n "$1" link set "$2" up
	done
	ip -n "$SBX" route add default via 198.18.0.1
	ip -n "$PEER" route add 198.18.0.0/30 via 198.18.1.1
	ip netns exec "$GW" sysctl -qw net.ipv4.ip_forward=1   # the lab router's own
	for ns in "$SBX" "$GW"; do   # clients: many short connections
		ip netns exec "$ns" sysctl -qw net.ipv4.tcp_tw_reuse=1
		ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="10000 65000"
	done
}

# Short conntrack timeouts in $GW (as the integration tests use): a closed flow leaves
# the table within a second or two instead of filling it during the connection runs.
lab_conntrack() {
	local k
	for k in tcp_timeout_time_wait=1 tcp_timeout_close=1 tcp_timeout_close_wait=1 \
		tcp_timeout_fin_wait=1 tcp_timeout_last_ack=1 udp_timeout=2 udp_timeout_stream=5; do
		ip netns exec "$GW" sysctl -qw "net.netfilter.nf_conntrack_$k" 2>/dev/null || true
	done
}

lab_nginx() {
	mkdir -p "$TMP/www" "$TMP/ngx"
	head -c 64 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TMP/www/s"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj /CN=bench.web.test -addext "subjectAltName=DNS:*.web.test" \
		-keyout "$TMP/key.pem" -out "$TMP/cert.pem" >/dev/null 2>&1
	cat >"$TMP/nginx.conf" <<NGX
user root;
worker_processes 1;
pid $TMP/nginx.pid;
error_log $TMP/ngx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $TMP/ngx/body; proxy_temp_path $TMP/ngx/proxy;
  fastcgi_temp_path $TMP/ngx/fcgi; uwsgi_temp_path $TMP/ngx/uwsgi; scgi_temp_path $TMP/ngx/scgi;
  ssl_session_cache off; ssl_session_tickets off;
  server {
    listen 198.18.1.2:80 backlog=4096; listen 198.18.1.2:443 ssl backlog=4096;
    ssl_certificate $TMP/cert.pem; ssl_certificate_key $TMP/key.pem;
    root $TMP/www;
  }
}
NGX
	ip netns exec "$PEER" nginx -c "$TMP/nginx.conf" -e "$TMP/ngx/error.log"
}

lab_peers() {
	ip netns exec "$PEER" dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts \
		--bind-interfaces --listen-address=198.18.1.2 --address=/web.test/198.18.1.2 \
		--cache-size=10000 --dns-forward-max=1000 --user=root --pid-file= 2>"$TMP/dnsmasq.log" &
	PIDS+=($!)
	ip netns exec "$PEER" iperf3 -s -B 198.18.1.2 >"$TMP/iperf3.log" 2>&1 &
	PIDS+=($!)
	ip netns exec "$PEER" "$LOAD" echo 198.18.1.2 7 &
	PIDS+=($!)
	lab_nginx
	for i in $(seq 1000); do echo "n$i.web.test A"; done >"$TMP/queries"
	for _ in $(seq 100); do
		ip netns exec "$SBX" dig +short +time=1 +tries=1 @198.18.1.2 a.web.test 2>/dev/null | grep -q 198.18.1.2 &&
		ip netns exec "$SBX" curl -s -o /dev/null http://198.18.1.2/s && return 0
		sleep 0.1
	done
	die "lab peers did not come up"
}

# ---- configurations --------------------------------------------------------------------
cfg_up_B() {
	"$BUILD/sg_nfttool" --netns "$GW" --queue-base 100 --queues 2 --fail-open --no-cgroup \
		install --id 1 --iface gwsbx >/dev/null
	# The element's mark with the allow verdict already in it (nft/nft.h layout).
	ip netns exec "$GW" nft delete element inet sandgate iface_sessions '{ "gwsbx" }'
	ip netns exec "$GW" nft add element inet sandgate iface_sessions '{ "gwsbx" : 0x53100001 }'
}
cfg_down_B() { "$BUILD/sg_nfttool" --netns "$GW" uninstall >/dev/null; }

sg() { "$SGB/sandgate" "$@" --control "$TMP/c.sock"; }
cfg_up_C() { # [EXTRA YAML] [ENFORCE]
	local i
	rm -rf "$TMP/state"
	# SG_GW_EXTRA: more keys of the gateway section, one per line (a diagnosis)
	printf 'cgroup:\n  parent: %s\nmetrics_listen: 127.0.0.1:%s\ngateway:\n  enabled: true\n  netns: %s\n  mode: interface\n  queues: 2\n  enforce: %s\n%s%s' \
		"$PARENT" "$MPORT" "$GW" "${2:-false}" "${SG_GW_EXTRA:+$(sed 's/^/  /' <<<"$SG_GW_EXTRA")
}" "${1:-}" >"$TMP/c.yaml"
	"$SGB/sandgated" --config "$TMP/c.yaml" --state-dir "$TMP/state" --control "$TMP/c.sock" \
		>"$TMP/sandgated.log" 2>&1 &
	DPID=$!
	for i in $(seq 100); do
		ip netns exec "$GW" awk '$1 == 101' /proc/net/netfilter/nfnetlink_queue 2>/dev/null | grep -q . &&
		[ -S "$TMP/c.sock" ] && break
		sleep 0.1
	done
	sg session create --id "$CFG$ROUND" --iface gwsbx >/dev/null && sg session start "$CFG$ROUND" >/dev/null ||
		{ cat "$TMP/sandgated.log" >&2; die "sandgated: no session"; }
	C_CPU0=$(cpu_ticks "$DPID") C_PKT0=$(metric packets)
}
# E: the default, enforcing gateway with a policy that allows the lab's names
ENFORCE_YAML='  resolvers: [198.18.1.2]
  dns_ttl_min: 600s
policies:
  default:
    allow:
      - domain: "*.web.test"
'
cfg_down_C() {
	local ticks pkts h
	ticks=$(($(cpu_ticks "$DPID") - C_CPU0)) pkts=$(($(metric packets) - C_PKT0))
	echo -e "$CFG\t$ROUND\tcpu_us_per_queued_pkt\t$(awk -v t="$ticks" -v p="$pkts" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.2f", p ? t * 1e6 / hz / p : 0 }')" >>"$OUT"
	echo -e "$CFG\t$ROUND\tqueued_pkts\t$pkts" >>"$OUT"
	# Where that CPU went: each thread's utime+stime ticks since it started (the
	# gateway's are named sg-nfq<queue> and sg-conntrack).
	for t in /proc/"$DPID"/task/*; do
		echo -e "$CFG\t$ROUND\t${t##*/}\t$(cat "$t/comm")\t$(awk '{ print $14 + $15 }' "$t/stat")"
	done >>"$OUT.threads"
	metric_dump >>"$OUT.metrics"
	stop_pid "$DPID"
	DPID=
	ip netns exec "$GW" nft delete table inet sandgate   # the ruleset outlives the daemon
	for h in "$CG2" /sys/fs/cgroup/memory /sys/fs/cgroup/cpu /sys/fs/cgroup/pids; do
		rmdir "$h/$PARENT/$CFG$ROUND" 2>/dev/null || true
	done
}
metric_dump() { curl -s "http://127.0.0.1:$MPORT/metrics" | grep -v '^#' | sed "s/^/$CFG $ROUND /"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }   # utime + stime, all threads
metric() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk -v m="sandgate_gateway_$1_total" '$1 == m { print $2 }'; }

cfg_up_D() {
	local i
	mkdir -p "/etc/netns/$GW/opensnitchd" "$TMP/osrules"
	# ip netns exec mounts /etc/netns/$GW/* over /etc: its own config dir, this lab only.
	cat >"/etc/netns/$GW/opensnitchd/default-config.json" <<EOF
{ "Server": { "Address": "unix://$TMP/osui.sock", "LogFile": "$TMP/opensnitchd.log" },
  "DefaultAction": "allow", "DefaultDuration": "once", "InterceptUnknown": false,
  "ProcMonitorMethod": "proc", "LogLevel": 2, "Firewall": "iptables",
  "Stats": { "MaxEvents": 150, "MaxStats": 25 } }
EOF
	cp /etc/opensnitchd/system-fw.json "/etc/netns/$GW/opensnitchd/"
	ip netns exec "$GW" opensnitchd -rules-path "$TMP/osrules" -ui-socket "unix://$TMP/osui.sock" \
		-log-file "$TMP/opensnitchd.log" -process-monitor-method proc >/dev/null 2>&1 &
	OSPID=$!
	for i in $(seq 100); do
		ip netns exec "$GW" awk '$1 == 0' /proc/net/netfilter/nfnetlink_queue 2>/dev/null | grep -q . &&
		ip netns exec "$GW" iptables -t mangle -S OUTPUT 2>/dev/null | grep -q NFQUEUE && break
		sleep 0.1
	done
	ip netns exec "$GW" iptables -t mangle -S OUTPUT 2>/dev/null | grep -q NFQUEUE || die "opensnitchd did not start"
	check_no_opensnitch_here
}
cfg_down_D() {
	stop_pid "$OSPID"
	OSPID=
	# Whatever it left, in the lab namespace only.
	ip netns exec "$GW" iptables -t mangle -F 2>/dev/null || true
	ip netns exec "$GW" iptables -t filter -F 2>/dev/null || true
	ip netns exec "$GW" ip6tables -t mangle -F 2>/dev/null || true
	ip netns exec "$GW" ip6tables -t filter -F 2>/dev/null || true
	ip netns exec "$GW" nft flush ruleset
	check_no_opensnitch_here
}

# ---- workloads -------------------------------------------------------------------------
record() { echo -e "$CFG\t$ROUND\t$1\t$2" >>"$OUT"; }
want() { [[ " ${WL:-bulk dns conn tls udp} " == *" $1 "* ]]; }
workloads() { # NS
	local ns=$1 v
	if want bulk; then
		# a failed run (iperf3's server still busy with the last client) is recorded empty
		v=$(ip netns exec "$ns" iperf3 -c 198.18.1.2 -t "$SECS" -J | jq '.end.sum_received.bits_per_second / 1e9' 2>/dev/null) || v=
		record bulk_gbit_s "$v"
	fi
	if want dns; then
		v=$(ip netns exec "$ns" dnsperf -s 198.18.1.2 -d "$TMP/queries" -l "$SECS" -c 4 -q 500 2>&1 |
			awk '/Queries per second:/ { print $4 }')
		record dns_qps "$v"
	fi
	# E: the name again, after dnsperf bound 1000 others to the same address (8 kept)
	[[ $CFG = E* ]] && ip netns exec "$ns" dig +short +time=2 +tries=1 @198.18.1.2 bench.web.test A >/dev/null
	if want conn; then
		v=$(ip netns exec "$ns" "$LOAD" conn 198.18.1.2 80 "$SECS" 4 bench.web.test | awk '{ print $2 }')
		record tcp_conn_s "$v"
	fi
	[[ $CFG = E* ]] && ip netns exec "$ns" dig +short +time=2 +tries=1 @198.18.1.2 bench.web.test A >/dev/null
	if want tls; then
		v=$(ip netns exec "$ns" "$LOAD" tls 198.18.1.2 443 "$SECS" 4 bench.web.test | awk '{ print $2 }')
		record tls_hs_s "$v"
	fi
	[[ $CFG = E* ]] && ip netns exec "$ns" dig +short +time=2 +tries=1 @198.18.1.2 bench.web.test A >/dev/null
	if want ka; then   # HTTP/1.1 keep-alive: every request head is read when enforcing
		v=$(ip netns exec "$ns" "$LOAD" ka 198.18.1.2 80 "$SECS" 4 bench.web.test | awk '{ print $2 }')
		record http_ka_req_s "$v"
	fi
	if want udp; then
		v=$(ip netns exec "$ns" "$LOAD" udp 198.18.1.2 7 3000)
		record udp_rtt_p50_us "$(awk '{ print $2 }' <<<"$v")"
		record udp_rtt_p99_us "$(awk '{ print $4 }' <<<"$v")"
		v=$(ip netns exec "$ns" "$LOAD" udpnew 198.18.1.2 7 3000)
		record udpnew_rtt_p50_us "$(awk '{ print $2 }' <<<"$v")"
		record udpnew_rtt_p99_us "$(awk '{ print $4 }' <<<"$v")"
	fi
}

run_cfg() { # CFG
	CFG=$1
	log "round $ROUND: $CFG"
	case $CFG in
	A) workloads "$SBX" ;;
	B) cfg_up_B; workloads "$SBX"; cfg_down_B ;;
	C) cfg_up_C; workloads "$SBX"; cfg_down_C ;;
	C0) SGB=${BASE:?C0 needs BASE}; cfg_up_C; workloads "$SBX"; cfg_down_C; SGB=$BUILD ;;
	I) cfg_up_C $'index:\n  enabled: false\n'"${SG_I_EXTRA:-}"; workloads "$SBX"; cfg_down_C ;;
	E | E0) [ "$CFG" = E0 ] && SGB=${BASE:?E0 needs BASE}
		cfg_up_C "$ENFORCE_YAML" true
		# the session resolves the lab's name through the gateway first: its address is
		# then bound (TTL raised to outlast the round), as for an agent that uses names
		ip netns exec "$SBX" dig +short +time=2 +tries=1 @198.18.1.2 bench.web.test A >/dev/null
		workloads "$SBX"; cfg_down_C; SGB=$BUILD ;;
	G) workloads "$GW" ;;
	D) cfg_up_D; workloads "$GW"; cfg_down_D ;;
	esac
}

# ---- main ------------------------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || die "needs root"
for t in ip nft jq curl dig iperf3 dnsperf dnsmasq nginx openssl; do
	command -v $t >/dev/null || die "missing $t (scripts/install-deps.sh)"
done
[ -z "${BASE:-}" ] || BASE=$(cd "$BASE" && pwd)
[ -x "$LOAD" ] && [ -x "$BUILD/sandgated" ] && [ -x "$BUILD/sg_nfttool" ] || die "build $BUILD first"
install_opensnitch
check_no_opensnitch_here
lab_links
lab_peers
# conntrack's sysctls exist in $GW once it is loaded (sg_nfttool's ruleset uses it)
cfg_up_B; cfg_down_B; lab_conntrack
: >"$OUT"
log "results: $OUT (rounds $ROUNDS, $SECS s per workload); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for ROUND in $(seq "$ROUNDS"); do
	for c in ${CFGS:-A B C I G D}; do run_cfg $c; done
done
log "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$(dirname "$0")/table.py" "$OUT"
