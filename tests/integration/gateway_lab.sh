# Shared by t_gateway_*.sh: a lab of network namespaces this test creates and removes,
# addresses only from 198.18.0.0/15 and 2001:db8::/32, forwarding only inside the lab.
#
#   $GWNS  the gateway's namespace: the daemon's gateway works here; in cgroup mode the
#          session's processes run here too (socket cgroupv2 sees only its own netns)
#   $PEER  upstream: dnsmasq, or unbound with LAB_RESOLVER=unbound (198.18.1.2:53, names *.web.test), nginx (TLS 443 with a
#          certificate made here, HTTP 80; IPv4 and IPv6), socat sinks/sources
#   $SBX   a sandbox with its own veth (interface mode), routed by $GWNS
# Source after lib.sh and session_helpers.sh. Needs: ip, dnsmasq, nginx, openssl, dig,
# curl, socat, jq.

LAB=sggw-$$
GWNS=$LAB-gw
PEER=$LAB-peer
SBX=$LAB-sbx
WWW=$T_TMP/www

lab_need() {
	local t
	for t in ip dnsmasq nginx openssl dig curl socat jq nft; do
		command -v $t >/dev/null || { echo "missing $t"; echo "0 passed, 1 failed"; exit 1; }
	done
}

lab_down() {
	local ns
	[ -f "$T_TMP/nginx.pid" ] && kill "$(cat "$T_TMP/nginx.pid")" 2>/dev/null
	for ns in "$SBX" "$GWNS" "$PEER"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
}

lab_links() {
	local ns l
	for ns in "$GWNS" "$PEER" "$SBX"; do ip netns add "$ns" && ip -n "$ns" link set lo up; done
	ip -n "$GWNS" link add gw0 type veth peer name peer0 netns "$PEER"
	ip -n "$GWNS" link add gwsbx type veth peer name sbx0 netns "$SBX"
	ip -n "$GWNS" addr add 198.18.1.1/24 dev gw0
	ip -n "$GWNS" addr add 2001:db8:1::1/64 dev gw0 nodad
	ip -n "$GWNS" addr add 198.18.0.1/30 dev gwsbx
	ip -n "$PEER" addr add 198.18.1.2/24 dev peer0
	ip -n "$PEER" addr add 2001:db8:1::2/64 dev peer0 nodad
	ip -n "$SBX" addr add 198.18.0.2/30 dev sbx0
	for l in "$GWNS gw0" "$GWNS gwsbx" "$PEER peer0" "$SBX sbx0"; do
		set -- $l
		ip -n "$1" link set "$2" up
	done
	ip -n "$SBX" route add default via 198.18.0.1
	ip -n "$PEER" route add 198.18.0.0/30 via 198.18.1.1
	ip netns exec "$GWNS" sysctl -qw net.ipv4.ip_forward=1   # the lab router's own
}

lab_cert() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=web.test \
		-addext "subjectAltName=DNS:web.test,DNS:*.web.test" \
		-keyout "$T_TMP/key.pem" -out "$T_TMP/cert.pem" >/dev/null 2>&1
}

lab_nginx() {
	mkdir -p "$WWW" "$T_TMP/ngx"
	head -c 102400 /dev/urandom >"$WWW/f100k"
	head -c 1048576 /dev/urandom >"$WWW/f1m"
	cat >"$T_TMP/nginx.conf" <<NGX
user root;
worker_processes 1;
pid $T_TMP/nginx.pid;
error_log $T_TMP/ngx/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $T_TMP/ngx/body; proxy_temp_path $T_TMP/ngx/proxy;
  fastcgi_temp_path $T_TMP/ngx/fcgi; uwsgi_temp_path $T_TMP/ngx/uwsgi;
  scgi_temp_path $T_TMP/ngx/scgi;
  server {
    listen 198.18.1.2:80; listen [2001:db8:1::2]:80;
    listen 198.18.1.2:443 ssl; listen [2001:db8:1::2]:443 ssl;
    ssl_certificate $T_TMP/cert.pem; ssl_certificate_key $T_TMP/key.pem;
    root $WWW;
  }
  server {
    listen 198.18.1.2:8080 http2;   # cleartext HTTP/2, prior knowledge (h2c)
    root $WWW;
  }
}
NGX
	ip netns exec "$PEER" nginx -c "$T_TMP/nginx.conf" -e "$T_TMP/ngx/error.log"
}

# lab_unbound: unbound as the lab resolver (LAB_RESOLVER=unbound): web.test and every
# name below it answered with the peer's addresses (TTL 300), nothing else resolved
# (no forwarders, no root hints reachable: the lab has no internet).
lab_unbound() {
	cat >"$T_TMP/unbound.conf" <<UNB
server:
	interface: 198.18.1.2
	interface: 2001:db8:1::2
	do-daemonize: no
	username: ""
	chroot: ""
	directory: "$T_TMP"
	pidfile: ""
	use-syslog: no
	logfile: "$T_TMP/unbound.log"
	access-control: 0.0.0.0/0 allow
	access-control: ::/0 allow
	module-config: "iterator"
	local-zone: "web.test." redirect
	local-data: "web.test. 300 IN A 198.18.1.2"
	local-data: "web.test. 300 IN AAAA 2001:db8:1::2"
remote-control:
	control-enable: no
UNB
	ip netns exec "$PEER" unbound -d -c "$T_TMP/unbound.conf" 2>"$T_TMP/unbound.err" &
	cleanup "kill $!"
}

lab_peers() {
	if [ "${LAB_RESOLVER:-dnsmasq}" = unbound ]; then
		lab_unbound
	else
		ip netns exec "$PEER" dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts \
			--bind-interfaces --listen-address=198.18.1.2 --listen-address=2001:db8:1::2 \
			--address=/web.test/198.18.1.2 --address=/web.test/2001:db8:1::2 \
			--user=root --pid-file= 2>"$T_TMP/dnsmasq.log" &
		cleanup "kill $!"
	fi
	# Sink: reads everything, sends nothing and keeps its half open (-u) until the
	# client closes (a half-closed flow would end after the short CLOSE_WAIT timeout).
	ip netns exec "$PEER" socat -u TCP-LISTEN:9000,bind=198.18.1.2,fork,reuseaddr OPEN:/dev/null,wronly &
	cleanup "kill $!"
	lab_cert
	lab_nginx
	wait_for "resolver" 10 sh -c "ip netns exec '$GWNS' dig +short +time=1 +tries=1 @198.18.1.2 web.test | grep -q 198.18.1.2"
	wait_for "nginx" 10 sh -c "ip netns exec '$GWNS' curl -s -o /dev/null http://198.18.1.2/f100k"
}

# lab_up: the namespaces and the peers; removed at exit.
lab_up() {
	lab_need
	cleanup lab_down
	lab_links
	lab_peers
}

# Short conntrack timeouts in the gateway namespace, so flows end (and net.flow is
# written) within a second or two of their last packet. After the daemon started
# (conntrack is loaded then).
lab_fast_conntrack() {
	local k
	wait_gateway
	for k in tcp_timeout_time_wait=1 tcp_timeout_close=1 tcp_timeout_close_wait=1 \
		tcp_timeout_fin_wait=1 tcp_timeout_last_ack=1 udp_timeout=1 udp_timeout_stream=2 \
		icmp_timeout=1; do
		ip netns exec "$GWNS" sysctl -qw "net.netfilter.nf_conntrack_$k"
	done
}

# wait_gateway: the daemon's control socket opens before its gateway is up; wait for
# the ruleset (installed last, after every queue is bound).
wait_gateway() {
	wait_for "the gateway's ruleset" 10 sh -c "ip netns exec '$GWNS' nft list table inet sandgate >/dev/null 2>&1" &&
	wait_for "queue 100 bound" 10 sh -c "ip netns exec '$GWNS' awk '\$1 == 100' /proc/net/netfilter/nfnetlink_queue | grep -q ."
}

# in_gw CMD...: CMD in the gateway namespace as a host process (no session).
# queued [Q...]: packets queued so far to queues Q (default 100 and 101): the kernel's
# id_sequence in /proc/net/netfilter/nfnetlink_queue of the gateway's namespace.
queued() {
	in_gw awk -v qs="${*:-100 101}" 'BEGIN { split(qs, a, " "); for (i in a) want[a[i]] = 1 }
		$1 in want { n += $8 } END { print n + 0 }' /proc/net/netfilter/nfnetlink_queue
}
in_gw() { ip netns exec "$GWNS" "$@"; }
# in_sess SESSION CMD...: CMD in SESSION, in the gateway namespace (cgroup mode).
in_sess() { local s=$1; shift; ip netns exec "$GWNS" "$BIN/sandgate" run --control "$SG_SOCK" --session "$s" -- "$@"; }

# in_cg SESSION CMD...: CMD in SESSION's v2 cgroup without the daemon (it may be down):
# join the cgroup first, `ip netns exec` remounts /sys and hides it.
in_cg() {
	local s=$1
	shift
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec ip netns exec "$0" "$@"' \
		"$GWNS" "$CG2/$SG_PARENT/$s" "$@"
}
# gw_config FILE [EXTRA YAML under gateway:]: metrics on $METRICS_PORT when set, else off
# (the default 127.0.0.1:9477 may be taken by another daemon on the host). The gateway
# observes only (enforce: false) unless GW_ENFORCE=true: the t_gateway_* tests check
# the packet path itself, t_policy_* the enforcement.
gw_config() {
	local m=null
	[ -n "${METRICS_PORT:-}" ] && m="127.0.0.1:$METRICS_PORT"
	write_config "$1" "metrics_listen: $m
gateway:
  enabled: true
  netns: $GWNS
  queues: 2
  enforce: ${GW_ENFORCE:-false}
${2:-}"
}

# evq JQ-FILTER: the journal's events matching a jq select expression, one per line
# (a line still being written is skipped, not an error).
evq() { journal_lines "$SG_STATE" | jq -c -R "fromjson? | select($1)" 2>/dev/null; }
# wait_ev SECONDS JQ-FILTER: waits until some event matches.
wait_ev() {
	wait_for "event $2" "$1" sh -c '[ -n "$(cat "$1"/journal/*.jsonl | jq -c -R "fromjson? | select($2)" 2>/dev/null | head -1)" ]' _ "$SG_STATE" "$2"
}
# connect_ev_port SESSION PORT: the first net.connect of SESSION to PORT (waits 10 s).
connect_ev_port() {
	local q=".event == \"net.connect\" and .dst.port == $2 and .session_id == \"$1\""
	wait_ev 10 "$q" >/dev/null 2>&1
	evq "$q" | head -1
}
# flow_ev_id ID: the net.flow with flow_id ID (waits 5 s).
flow_ev_id() {
	wait_ev 5 ".event == \"net.flow\" and .flow_id == $1" >/dev/null 2>&1
	evq ".event == \"net.flow\" and .flow_id == $1" | head -1
}
# echeck DESCRIPTION JSON JQ-EXPR: as jcheck, but an empty JSON (no event) fails.
echeck() { check "$1" bash -c '[ -n "$2" ] && jq -e "$1" >/dev/null <<<"$2"' _ "$3" "$2"; }
