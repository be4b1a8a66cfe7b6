#!/usr/bin/env bash
# Sessions and the gateway's maps: every session's cgroup id (and --iface) is a map
# element while it lives and is gone after cleanup; many sessions leave no element
# behind (1000 by default); a restart re-installs the ruleset with the elements of the
# live sessions.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/session_helpers.sh"
require_root

NS=sgsn-$$
ip netns add "$NS"
cleanup "ip netns del $NS"
ip -n "$NS" link set lo up
write_config "$T_TMP/c.yaml" "gateway:
  enabled: true
  netns: $NS
  queue_base: 300
metrics_listen: null"
start_daemon n --config "$T_TMP/c.yaml"

elements() { # elements MAP: how many elements the map holds in the lab namespace
	ip netns exec "$NS" nft -j list map inet sandgate "$1" 2>/dev/null |
		jq '[.nftables[] | select(.map) | .map.elem // [] | length] | add // 0'
}

N=${SANDGATE_NFT_SESSIONS:-1000}
for ((i = 0; i < N; i++)); do sg session create --id "n$i" >/dev/null || break; done
check "$N sessions create $N cgroup map elements" test "$(elements cgroup_sessions)" -eq "$N"
id0=$(stat -c %i "$CG2/$SG_PARENT/n0")
check "an element maps the session's cgroup id" \
	sh -c "ip netns exec $NS nft list map inet sandgate cgroup_sessions | grep -q '$id0'"

sg session create --id nif --iface sgveth-test >/dev/null
check "--iface adds an interface element" test "$(elements iface_sessions)" -eq 1

# A restart with sessions alive: one install that already holds their elements.
stop_daemon
start_daemon n --config "$T_TMP/c.yaml"
check "after a restart the elements are back" \
	test "$(elements cgroup_sessions)" -eq $((N + 1)) -a "$(elements iface_sessions)" -eq 1

for ((i = 0; i < N; i++)); do
	sg session terminate "n$i" >/dev/null && sg session cleanup "n$i" >/dev/null
done
sg session terminate nif >/dev/null && sg session cleanup nif >/dev/null
check "cleanup removes every cgroup element" test "$(elements cgroup_sessions)" -eq 0
check "cleanup removes the interface element" test "$(elements iface_sessions)" -eq 0
check "no session cgroup left" test "$(count_children)" -eq 0
stop_daemon
check "daemon exits 0" test $? -eq 0
ip netns exec "$NS" nft delete table inet sandgate
finish
