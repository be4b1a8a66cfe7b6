# Shared by t_sessions_*.sh: a daemon whose sessions live under a cgroup parent unique
# to the test (sgtest-$$), removed at exit with every process in it, even on failure.
# Source after lib.sh.

SG_PARENT=sgtest-$$
CG2=/sys/fs/cgroup/unified
[ -d "$CG2" ] || CG2=/sys/fs/cgroup

# remove_cgroups: kill what is left in the test's cgroups, then remove them (v2 and v1).
remove_cgroups() {
	local h d
	[ -d "$CG2/$SG_PARENT" ] && find "$CG2/$SG_PARENT" -mindepth 1 -maxdepth 1 -type d \
		-exec sh -c 'echo 0 > "$1/cgroup.freeze"; echo 1 > "$1/cgroup.kill"' _ {} \; 2>/dev/null
	sleep 0.2
	for h in "$CG2" /sys/fs/cgroup/memory /sys/fs/cgroup/cpu /sys/fs/cgroup/pids; do
		[ -d "$h/$SG_PARENT" ] || continue
		# .holder-ID: a session's holder (pid 1 of its namespaces) lives there.
		# A killed holder takes a moment to leave its cgroup: rmdir is retried.
		for d in "$h/$SG_PARENT"/*/ "$h/$SG_PARENT"/.holder-*/; do
			for _ in 1 2 3 4 5 6 7 8 9 10; do [ -d "$d" ] && ! rmdir "$d" 2>/dev/null || break; sleep 0.2; done
		done
		rmdir "$h/$SG_PARENT"
	done
}
cleanup remove_cgroups

# write_config FILE [EXTRA YAML]: the session parent plus whatever the test adds.
write_config() {
	printf 'cgroup:\n  parent: %s\n%s\n' "$SG_PARENT" "${2:-}" >"$1"
}

sg() { "$BIN/sandgate" "$@" --control "$SG_SOCK"; }
sgrun() { "$BIN/sandgate" run --control "$SG_SOCK" "$@"; }

# req JSON: one raw request line, the raw reply.
req() { printf '%s\n' "$1" | timeout 5 socat - "UNIX-CONNECT:$SG_SOCK"; }

# ev TYPE SESSION: the journal's TYPE events of SESSION, one JSON per line.
ev() { journal_lines "$SG_STATE" | jq -c --arg t "$1" --arg s "$2" \
	'select(.event == $t and .session_id == $s)'; }

# jcheck DESCRIPTION JSON JQ-EXPR: passes when the expression is true for JSON.
jcheck() { check "$1" sh -c 'jq -e "$1" >/dev/null' _ "$3" <<<"$2"; }

# count_children: session cgroups left under the parent in every hierarchy.
count_children() {
	local h n=0
	for h in "$CG2" /sys/fs/cgroup/memory /sys/fs/cgroup/cpu /sys/fs/cgroup/pids; do
		[ -d "$h/$SG_PARENT" ] || continue
		n=$((n + $(find "$h/$SG_PARENT" -mindepth 1 -maxdepth 1 -type d | wc -l)))
	done
	echo "$n"
}

# http_peer NAME OCTET: a namespace NAME$$ behind a veth (198.19.OCTET.1 here,
# 198.19.OCTET.2 there) serving $T_TMP/www over HTTP on port 8000 (python3 http.server);
# sets WWW (fill it before the first request) and URL. Removed at cleanup.
http_peer() {
	local ns=$1$$ hv=$1h$$ n=$2
	ip netns add "$ns"
	cleanup "ip netns del $ns"
	ip link add "$hv" type veth peer name eth0 netns "$ns"
	cleanup "ip link del $hv"
	ip addr add "198.19.$n.1/30" dev "$hv" && ip link set "$hv" up
	ip -n "$ns" addr add "198.19.$n.2/30" dev eth0 && ip -n "$ns" link set eth0 up
	ip -n "$ns" link set lo up
	WWW=$T_TMP/www
	mkdir -p "$WWW"
	ip netns exec "$ns" python3 -m http.server 8000 --bind "198.19.$n.2" --directory "$WWW" \
		>"$T_TMP/http.log" 2>&1 &
	cleanup "kill $!"
	URL=http://198.19.$n.2:8000
}
