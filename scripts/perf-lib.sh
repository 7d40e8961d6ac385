# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What the perf scripts (bench-profile.sh, syscalls-per-packet.sh,
# latency-hops.sh) share, sourced from the tree's top with BUILD set:
#
#   . scripts/perf-lib.sh NAME
#
# Checks what they need (root, perf, python3, a built bench), each missing
# piece a message naming it and exit 1; makes $tmp; and on any exit, a
# signal's included, stops the bench a script started in the background
# (its pid in $bpid), unmounts the tracefs perf_lib_tracefs mounted, and
# removes $tmp.
perf_lib_name=$1
perf_lib_need() {
	echo "$perf_lib_name: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || perf_lib_need "needs root"
command -v perf > /dev/null || perf_lib_need "needs perf (apt-get install linux-perf)"
command -v python3 > /dev/null || perf_lib_need "needs python3"
[ -x "$BUILD/ucpumap-bench" ] || perf_lib_need "$BUILD/ucpumap-bench is not built (run make)"
tmp=$(mktemp -d)
bpid=
perf_lib_tracefs_mounted=
perf_lib_cleanup() {
	if [ -n "$bpid" ] && kill "$bpid" 2> /dev/null; then
		wait "$bpid" 2> /dev/null
	fi
	if [ -n "$perf_lib_tracefs_mounted" ]; then
		umount /sys/kernel/tracing 2> /dev/null
	fi
	rm -rf "$tmp"
}
trap perf_lib_cleanup EXIT
trap 'exit 1' HUP INT TERM

# The trace events' file system, for perf's tracepoints: mounted if it is
# not, and then unmounted on exit.
perf_lib_tracefs() {
	mountpoint -q /sys/kernel/tracing && return
	mount -t tracefs nodev /sys/kernel/tracing || perf_lib_need "cannot mount tracefs"
	perf_lib_tracefs_mounted=1
}

# bench_why ROW FILE: why the bench measured nothing of ROW, from its
# output FILE: its "ROW  skipped: why" line, else its "round 1 ROW" line,
# else its last.
bench_why() {
	local why
	why=$(grep -m1 -E "^$1 +skipped: " "$2" | sed -E 's/^[^ ]+ +//' || true)
	[ -n "$why" ] || why=$(grep -m1 -E "^ *round 1 $1 " "$2" | sed -E 's/^ *//; s/  +/ /g' || true)
	[ -n "$why" ] || why="the bench's last line: $(grep -v '^[[:space:]]*$' "$2" | tail -n 1)"
	echo "$why"
}
