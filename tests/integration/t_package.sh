#!/usr/bin/env bash
# The Debian package (issue 18.1): built from this tree with dpkg-buildpackage (debian/),
# lintian-clean, installed on this machine with dpkg -i, the installed daemon started
# on its defaults (the real /var/lib/sandgate and /run/sandgate, which this test owns
# for its run: anything there before is moved aside and put back), one session run
# through the installed CLI, then the package purged, leaving nothing behind (files,
# group, unit, the gateway's table). The gateway is on by default (issue 18.6), in the
# daemon's namespace, here the initial one: it touches only session traffic. Under
# systemd as PID 1 the unit itself is started; otherwise the daemon is started as the
# unit would, with NOTIFY_SOCKET checked for READY=1.
# SANDGATE_DEB=FILE uses a package built elsewhere; otherwise the one built here is
# kept in $BIN/deb and reused while no source file is newer.
. "$(dirname "$0")/lib.sh"
require_root
for t in dpkg-buildpackage dh lintian socat; do
	command -v "$t" >/dev/null || { echo "$t missing"; echo "0 passed, 1 failed"; exit 1; }
done
if dpkg-query -W -f='${Status}' sandgate 2>/dev/null | grep -q 'ok installed'; then
	echo "a sandgate package is installed on this host: not touching it"
	echo "0 passed, 1 failed"
	exit 1
fi
if [ -S /run/sandgate/control.sock ] && timeout 5 "$BIN/sandgate" status \
	--control /run/sandgate/control.sock >/dev/null 2>&1; then
	echo "a sandgated answers on /run/sandgate/control.sock: not touching it"
	echo "0 passed, 1 failed"
	exit 1
fi

# ---- the .deb ----------------------------------------------------------------------------
DEB=${SANDGATE_DEB:-}
if [ -z "$DEB" ]; then
	mkdir -p "$BIN/deb"
	DEB=$(ls -t "$BIN"/deb/sandgate_*.deb 2>/dev/null | head -1)
	if [ -n "$DEB" ] && [ -n "$(cd "$SRC" && find . -path ./build -prune -o -path ./.git -prune \
		-o -type f -newer "$DEB" -print | grep -v '^./tests/' | head -1)" ]; then
		DEB=""
	fi
	if [ -z "$DEB" ]; then
		mkdir -p "$T_TMP/pkg/src"
		(cd "$SRC" && tar --exclude=./build --exclude=./.git -cf - .) | tar -C "$T_TMP/pkg/src" -xf -
		t0=$(date +%s)
		if ! (cd "$T_TMP/pkg/src" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" \
			SANDGATE_CCACHE=$(command -v ccache >/dev/null && echo 1) \
			dpkg-buildpackage -b -uc -us >"$T_TMP/pkg/build.log" 2>&1); then
			tail -40 "$T_TMP/pkg/build.log"
			fail "dpkg-buildpackage builds the package"
			finish
		fi
		echo "package built in $(($(date +%s) - t0)) s"
		rm -f "$BIN"/deb/sandgate_*.deb
		cp "$T_TMP"/pkg/sandgate_*.deb "$BIN/deb/"
		DEB=$(ls -t "$BIN"/deb/sandgate_*.deb | head -1)
	fi
fi
pass "the package: $(basename "$DEB")"
lintian --no-tag-display-limit "$DEB" >"$T_TMP/lintian.out" 2>&1
cat "$T_TMP/lintian.out"
check "lintian: no error or warning" sh -c "! grep -Eq '^[EW]: ' '$T_TMP/lintian.out'"

# ---- this run owns the default paths -------------------------------------------------------
mkdir -p "$T_TMP/saved"
for p in /etc/sandgate /var/lib/sandgate /var/log/sandgate /run/sandgate; do
	if [ -e "$p" ]; then
		mv "$p" "$T_TMP/saved/$(echo "$p" | tr / _)"
		cleanup "rm -rf '$p'; mv '$T_TMP/saved/$(echo "$p" | tr / _)' '$p'"
	fi
done
if nft list table inet sandgate >/dev/null 2>&1; then
	echo "a table inet sandgate exists in the initial namespace: not touching it"
	echo "0 passed, 1 failed"
	exit 1
fi
for k in acct timestamp; do   # the gateway turns them on in its namespace
	cleanup "sysctl -qw net.netfilter.nf_conntrack_$k=$(sysctl -n net.netfilter.nf_conntrack_$k)"
done
cleanup "nft delete table inet sandgate"
group_before=$(getent group sandgate >/dev/null && echo yes || echo no)
cg_before=$(test -d /sys/fs/cgroup/sandgate && echo yes || echo no)
cleanup "dpkg --purge sandgate >/dev/null 2>&1"
[ "$cg_before" = no ] && cleanup "rmdir /sys/fs/cgroup/sandgate 2>/dev/null"
[ "$group_before" = no ] && cleanup "getent group sandgate >/dev/null && delgroup --system sandgate"

# ---- install ---------------------------------------------------------------------------------
check "dpkg -i installs it" sh -c "dpkg -i '$DEB' >'$T_TMP/dpkg-i.log' 2>&1" || cat "$T_TMP/dpkg-i.log"
dpkg -L sandgate >"$T_TMP/files"
for f in /usr/sbin/sandgated /usr/bin/sandgate /usr/share/sandgate/doh-endpoints.txt \
	/usr/share/sandgate/rules/session.yaml /etc/sandgate/sandgate.yaml \
	/lib/systemd/system/sandgated.service /usr/share/man/man8/sandgated.8.gz \
	/usr/share/man/man1/sandgate.1.gz /usr/share/man/man5/sandgate.yaml.5.gz \
	/usr/share/bash-completion/completions/sandgate; do
	check "installed: $f" sh -c "grep -qx '$f' '$T_TMP/files' && test -e '$f'"
done
check "the config is a conffile" sh -c "dpkg-query -W -f='\${Conffiles}' sandgate | grep -q '/etc/sandgate/sandgate.yaml'"
check "the sandgate group exists" getent group sandgate
check "the unit is enabled the Debian way" test -L /etc/systemd/system/multi-user.target.wants/sandgated.service
check "state dir 0700" test "$(stat -c %a /var/lib/sandgate)" = 700
systemd-analyze verify /lib/systemd/system/sandgated.service >"$T_TMP/verify.out" 2>&1
cat "$T_TMP/verify.out"
check "systemd-analyze verify is clean" test ! -s "$T_TMP/verify.out"
out=$(env -u SANDGATE_DATA_DIR -u SANDGATE_RULES_DIR \
	/usr/sbin/sandgated --check-config /etc/sandgate/sandgate.yaml 2>&1)
rc=$?
echo "$out"
check "the installed config is valid" test "$rc" -eq 0
check "--check-config: the gateway is on, enforcing, in the daemon's namespace" \
	grep -qx "gateway.enabled: true (enforcing, mode both, network namespace the daemon's own)" <<<"$out"

# ---- the installed daemon, on its defaults ---------------------------------------------------
SOCK=/run/sandgate/control.sock
if [ "$(ps -p 1 -o comm=)" = systemd ]; then
	systemctl start sandgated
	check "systemd started the unit (Type=notify: active once READY=1 came)" \
		wait_for "active" 30 systemctl is-active --quiet sandgated
	STOP="systemctl stop sandgated"
else
	echo "systemd is not PID 1 here ($(ps -p 1 -o comm=)): starting the daemon as the unit would"
	mkdir -p /run/sandgate
	socat -u UNIX-RECV:"$T_TMP/notify" OPEN:"$T_TMP/notified",creat,append &
	npid=$!
	cleanup "kill $npid"
	wait_for "notify socket" 5 test -S "$T_TMP/notify"
	env -u SANDGATE_DATA_DIR -u SANDGATE_RULES_DIR NOTIFY_SOCKET="$T_TMP/notify" \
		/usr/sbin/sandgated --config /etc/sandgate/sandgate.yaml >"$T_TMP/daemon.log" 2>&1 &
	DPID=$!
	cleanup "stop_at_exit $DPID"
	check "READY=1 on NOTIFY_SOCKET" wait_for "READY=1" 20 grep -q 'READY=1' "$T_TMP/notified"
	STOP="kill -TERM $DPID; wait $DPID"
fi
check "the control socket is root:sandgate 0660" \
	sh -c "test \"\$(stat -c '%a %G' $SOCK)\" = '660 sandgate'"
S=pkg$$
sg() { /usr/bin/sandgate "$@" --control "$SOCK"; }
check "a session is created with the installed CLI" sg session create --id "$S"
check "and started" sg session start "$S"
check "the gateway runs on the defaults: table inet sandgate" sh -c "nft list table inet sandgate >/dev/null"
check "and the session's cgroup is in its map (its traffic is the policy's)" sh -c "nft -j list map inet sandgate cgroup_sessions |
	jq -e '[.nftables[] | select(.map) | .map.elem // [] | length] | add == 1' >/dev/null"
check "a command runs in it" /usr/bin/sandgate run --session "$S" --control "$SOCK" -- sh -c 'echo hi >/dev/null'
check "terminated" sg session terminate "$S"
check "cleaned up" sg session cleanup "$S"
check "status: healthy" /usr/bin/sandgate status --control "$SOCK"
execs() { journal_lines /var/lib/sandgate | grep '"event":"process.exec"' | grep -q "\"session_id\":\"$S\""; }
check "the journal has the session's exec" wait_for "exec" 10 execs
if [ "$(ps -p 1 -o comm=)" = systemd ]; then
	journalctl -u sandgated --no-pager >"$T_TMP/daemon.log" 2>&1
fi
n=$(sed -n 's/.*detection: \([0-9]*\) rules loaded.*/\1/p' "$T_TMP/daemon.log" | tail -1)
check "detection loaded the installed rules from /usr/share/sandgate (${n:-0})" test "${n:-0}" -ge 20
eval "$STOP"
check "the installed journal verifies" /usr/bin/sandgate verify /var/lib/sandgate

# ---- purge -----------------------------------------------------------------------------------
check "dpkg --purge removes it" sh -c "dpkg --purge sandgate >'$T_TMP/purge.log' 2>&1" || cat "$T_TMP/purge.log"
left=""
while read -r f; do
	[ -e "$f" ] && [ ! -d "$f" ] && left="$left $f"
done <"$T_TMP/files"
check "no file of the package is left (${left:-none})" test -z "$left"
for p in /etc/sandgate /var/lib/sandgate /var/log/sandgate /usr/share/sandgate /run/sandgate \
	/etc/systemd/system/multi-user.target.wants/sandgated.service; do
	check "gone: $p" test ! -e "$p"
done
check "gone: table inet sandgate (the package's removal deletes it)" sh -c "! nft list table inet sandgate >/dev/null 2>&1"
if [ "$group_before" = no ]; then
	check "the group it created is gone" sh -c "! getent group sandgate"
fi
check "dpkg forgot it" sh -c "! dpkg-query -W -f='\${Status}' sandgate 2>/dev/null | grep -q installed"
finish
