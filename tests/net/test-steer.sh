#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The XDP steering program, loaded from the library's embedded object and
# run with BPF_PROG_TEST_RUN, against its userspace twin
# (tests/progs/steer_check.c). Root: loading BPF needs CAP_BPF. It attaches
# nothing and sends nothing, so it needs no namespace; it runs in a fresh
# one anyway, like every test here (unshare's: it goes with the program,
# which the cleanup stops by its pid).
#
#   steer-check    steer_check's cases, one line each (steer_check/NAME)
set -u
BUILD=${BUILD:-build}
name=test-steer
cases="steer-check"
prog=$BUILD/tests/progs/steer_check
cd "$(dirname "$0")/../.."
. tests/lib.sh

setup() {
	skip_unless_root "loading BPF needs CAP_BPF"
	if [ ! -x "$prog" ]; then
		echo "FAIL: test-steer: $prog is not built"
		exit 0
	fi
}

case_steer_check() {
	local rc
	lib_run timeout 60 unshare -n "$prog" > "$tmp/out" 2>&1
	rc=$?
	grep -E '^(PASS|FAIL|SKIP): ' "$tmp/out"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL: ' "$tmp/out"; then
		echo "FAIL: test-steer: steer_check exited with status $rc: $(tail -3 "$tmp/out")"
	fi
}

lib_run_cases "$@"
