#!/usr/bin/env bash
# What the kernel alone charges a file-heavy workload for sandgate's fanotify marks:
# a 50k-file untar and 2 writers x 25000 files, each on a fresh loop ext4, with no
# reader, and under bench_fanfloor (a reader that discards) woken per event or napping,
# with and without FAN_MODIFY. Root; leaves nothing behind.
#
#   bench/audit/floor.sh BUILD_DIR [ROUNDS]
set -u
BIN=$(realpath "${1:?usage: floor.sh BUILD_DIR [ROUNDS]}")
ROUNDS=${2:-3}
T=$(mktemp -d /tmp/sgfloor.XXXXXX)
P=
cleanup() {
	[ -n "$P" ] && kill "$P" 2>/dev/null && wait "$P" 2>/dev/null
	mountpoint -q "$T/fs" && umount "$T/fs"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
python3 - "$T/tree.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    for d in range(500):
        for f in range(100):
            data = b"x" * (f % 7 + 1)
            ti = tarfile.TarInfo(f"tree/d{d}/f{f}.txt")
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
PY
fresh_fs() {
	mountpoint -q "$T/fs" && umount "$T/fs"
	rm -f "$T/fs.img"
	truncate -s 2G "$T/fs.img" && mkfs.ext4 -q -F "$T/fs.img" && mkdir -p "$T/fs" &&
		mount -o loop "$T/fs.img" "$T/fs"
}
# run WORK READER MODIFY: one timed run on a fresh filesystem
run() {
	local work=$1 reader=$2 modify=$3 t0 t1 out
	fresh_fs || exit 1
	sync
	if [ "$reader" != none ]; then
		"$BIN/bench/bench_fanfloor" "$reader" "$modify" / "$T/fs" 2>"$T/reader.err" &
		P=$!
		sleep 0.3
	fi
	t0=$(date +%s.%N)
	case $work in
	untar) tar -xf "$T/tree.tar" -C "$T/fs" ;;
	fwrite) mkdir -p "$T/fs/fw" && out=$("$BIN/bench/bench_fwrite" "$T/fs/fw" 2 25000) ;;
	esac
	t1=$(date +%s.%N)
	if [ -n "$P" ]; then kill -INT "$P"; wait "$P"; P=; fi
	echo "RESULT $work reader=$reader $modify wall_s=$(echo "$t1 - $t0" | bc)" \
		"$(tail -1 "$T/reader.err" 2>/dev/null)"
	rm -f "$T/reader.err"
}
for r in $(seq "$ROUNDS"); do
	echo "# round $r $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	for w in untar fwrite; do
		run "$w" none -
		run "$w" poll modify
		run "$w" nap2 modify
		run "$w" nap2 nomodify
	done
done
