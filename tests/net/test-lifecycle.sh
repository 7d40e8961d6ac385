#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Life cycles: a whole ucm_dp created, started, stopped
# and destroyed many times in one process (tests/progs/lifecycle.c) on a
# veth end in a namespace, one-way, two-way and with a verdict that sends
# back out, by turns; nothing may grow: open files, resident memory, BPF
# programs, maps and links, devices, threads; every stop must find the
# counters adding up and every frame home; a verdict-only channel is lent
# no frame.
#
#   LIFECYCLE_ROUNDS=N   rounds (default 300, about 40 s here; the first 10
#                        warm up). 1000 took 124 s, everything flat.
#
# In an ASan build, LeakSanitizer's report at the exit fails it too; a
# sanitizer's build runs 100 rounds by default (its RSS is not judged,
# and CI runs it after the 300 of the first pass).
#
#   rounds         lifecycle's run: its checks, one line each
#   nothing-left   after it, no XDP program and no device but vd
#
# Root. One PASS/FAIL/SKIP line per check; the script exits 0.
set -u
BUILD=${BUILD:-build}
name=test-lifecycle
cases="rounds nothing-left"
here=$(cd "$(dirname "$0")" && pwd)
prog=$BUILD/tests/progs/lifecycle
gen=ucmlg$$
dut=ucmld$$
. "$here/../lib.sh"

setup() {
	skip_unless_root "namespaces, XDP, tun"
	[ -x "$prog" ] || { bad build "$prog is not built (make tests)"; exit 0; }
	if ! veth_pair "$gen" "$dut" vg vd 10.208.0.1/24 10.208.0.2/24 2> "$tmp/setup.err"; then
		bad setup "cannot build the namespaces: $(head -2 "$tmp/setup.err" | tr '\n' ' ')"
		exit 0
	fi
}

case_rounds() {
	local rounds=${LIFECYCLE_ROUNDS:-${SANITIZE:+100}} t0 rc
	rounds=${rounds:-300}
	t0=$(date +%s)
	# A round takes about 0.12 s here, a sanitizer's a few times that.
	lib_run ip netns exec "$dut" env ${SANITIZE:+LIFECYCLE_NO_RSS=1} timeout $((60 + rounds / 2)) \
		"$prog" vd "$rounds" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	sed -n 's/^\(PASS\|FAIL\|SKIP\): lifecycle\//\1: test-lifecycle\//p; /^# /p' "$tmp/out"
	echo "# $rounds rounds in $(($(date +%s) - t0)) s"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$tmp/out"; then
		bad run "lifecycle exited $rc: $(tail -3 "$tmp/err" | tr '\n' ' ')"
	fi
}

case_nothing_left() {
	local l
	lib_need rounds
	l=$(left_in "$dut" vd)
	[ -z "$l" ] && ok nothing-left || bad nothing-left "$l"
}

lib_run_cases "$@"
