# Shared by the integration tests: temp dirs, daemons, checks, cleanup, the summary line.
# Every test sources this, registers what it creates, and ends with `finish`.
set -u

BIN=${SANDGATE_BIN:?SANDGATE_BIN must point at the build directory}
SRC=${SANDGATE_SRC:?SANDGATE_SRC must point at the source tree}
# The build tree reads the rules and data of the source tree (common/paths.h).
export SANDGATE_DATA_DIR=${SANDGATE_DATA_DIR:-$SRC/data} SANDGATE_RULES_DIR=${SANDGATE_RULES_DIR:-$SRC/rules}
PASSED=0
FAILED=0
CLEANUPS=()
T_TMP=$(mktemp -d /tmp/sgtest.XXXXXX)
chmod 0700 "$T_TMP"

on_exit() {
	local i
	for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUPS[$i]}" >/dev/null 2>&1 || true
	done
	rm -rf "$T_TMP"
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# cleanup CMD: run CMD at exit, last registered first, even when the test fails.
cleanup() { CLEANUPS+=("$1"); }

pass() { PASSED=$((PASSED + 1)); echo "ok - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
check() { # check DESCRIPTION CMD...
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
	exit $?
}

require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "this test needs root"
		echo "0 passed, 1 failed"
		exit 1
	fi
}

# The gateway is on by default (issue 18.6), in the daemon's own network namespace: the
# initial one here. A config a test passes must say whether it wants the gateway (a
# `gateway:` key: `{enabled: false}`, or on in the lab's namespace), so that no test
# installs the ruleset in the initial namespace by leaving the key out.
gateway_said() { # gateway_said ARGS...: 0 unless a --config FILE has no gateway key
	while [ $# -gt 0 ]; do
		if [ "$1" = --config ] && [ -f "${2:-}" ] && ! grep -q '^gateway:' "$2"; then
			echo "$2: no gateway key; the gateway is on by default (issue 18.6): say" \
				"'gateway: {enabled: false}', or enable it in a lab namespace"
			return 1
		fi
		shift
	done
}

# stop_at_exit PID: SIGTERM, up to 3 s to put the kernel's shared state back (its audit
# rules and enabled flag, its nft table), then SIGKILL. A daemon a test left running must
# not leave that state to the next test: t_audit_source reads the enabled flag it finds.
stop_at_exit() {
	local pid=$1 i st
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 60; i++)); do
		st=$(ps -o stat= -p "$pid" 2>/dev/null)
		case "$st" in "" | Z*) return 0 ;; esac
		sleep 0.05
	done
	kill -9 "$pid" 2>/dev/null
}

# start_daemon NAME [ARGS...]: state in $T_TMP/NAME, socket $T_TMP/NAME.sock; sets DPID.
start_daemon() {
	local name=$1
	shift
	gateway_said "$@" || return 1
	SG_STATE=$T_TMP/$name
	SG_SOCK=$T_TMP/$name.sock
	rm -f "$SG_SOCK"   # a daemon killed with -9 leaves its socket behind
	"$BIN/sandgated" --state-dir "$SG_STATE" --control "$SG_SOCK" "$@" \
		>"$T_TMP/$name.log" 2>&1 &
	DPID=$!
	cleanup "stop_at_exit $DPID"
	if ! wait_for "socket $SG_SOCK" 10 test -S "$SG_SOCK"; then
		echo "--- $name.log:"
		cat "$T_TMP/$name.log"
		return 1
	fi
}

stop_daemon() { # stop_daemon: SIGTERM and wait; returns the daemon's exit status
	kill -TERM "$DPID" 2>/dev/null
	wait "$DPID"
}

# wait_for WHAT SECONDS CMD...: polls CMD every 50 ms.
wait_for() {
	local what=$1 secs=$2 i
	shift 2
	for ((i = 0; i < secs * 20; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	echo "timed out waiting for $what"
	return 1
}

# journal_lines STATE_DIR: every complete journal line, in order. The daemon may be
# appending while a test reads: a last line without its newline yet is not one (jq
# would stop at it).
journal_lines() { perl -ne 'print if /\n\z/' "$1"/journal/*.jsonl; }

# count_events STATE_DIR TYPE
count_events() { journal_lines "$1" | grep -c "\"event\":\"$2\"" || true; }
