#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The XDP steering program, loaded from the library's embedded object and
# run with BPF_PROG_TEST_RUN, against its userspace twin (steer_check.c).
# Root: loading BPF needs CAP_BPF. It attaches nothing and sends nothing, so
# it needs no namespace; it runs in a fresh one anyway, like every test here.
set -u
BUILD=${BUILD:-build}
prog=$BUILD/tests/net/steer_check
if [ ! -x "$prog" ]; then
	echo "FAIL: test-steer: $prog is not built"
	exit 0
fi
out=$(timeout 60 unshare -n "$prog" 2>&1)
rc=$?
echo "$out" | grep -E '^(PASS|FAIL|SKIP): '
if [ $rc -ne 0 ] && ! echo "$out" | grep -q '^FAIL: '; then
	echo "FAIL: test-steer: steer_check exited with status $rc: $(echo "$out" | tail -3)"
fi
exit 0
