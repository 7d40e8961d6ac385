#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Set-up failures (issue 14, group I): ucm_dp__create() (two-way, the most
# parts) with each allocation, each io_uring set-up and the AF_XDP socket
# failing in turn (tests/net/setupfail.c through tests/net/setup_shim.c,
# LD_PRELOAD): each create fails with an errno and a warning, or copes and
# then runs and stops cleanly, and leaves no file, BPF object, device or
# thread behind. Root; skipped in a sanitizer build (the shim's malloc and
# the sanitizer's cannot both come first).
set -u
BUILD=${BUILD:-build}
name=test-setupfail
here=$(cd "$(dirname "$0")" && pwd)
prog=$BUILD/tests/net/setupfail
shim=$(cd "$BUILD" 2>/dev/null && pwd)/tests/net/libsetup_shim.so
gen=ucmsg$$
dut=ucmsd$$
. "$here/lib.sh"

skip_unless_root "namespaces, XDP, tun"
plain_build_only "the shim interposes malloc, which a sanitizer's runtime owns"
{ [ -x "$prog" ] && [ -f "$shim" ]; } || { bad build "$prog or $shim is not built (make tests)"; exit 0; }
if ! veth_pair "$gen" "$dut" vg vd 10.210.0.1/24 10.210.0.2/24 2> "$tmp/setup.err"; then
	bad setup "cannot build the namespaces: $(head -2 "$tmp/setup.err" | tr '\n' ' ')"
	exit 0
fi
for kind in malloc uring xsk; do
	lib_run ip netns exec "$dut" env LD_PRELOAD="$shim" timeout 120 "$prog" vd $kind 2000 \
		> "$tmp/$kind.out" 2> "$tmp/$kind.err"
	rc=$?
	sed -n 's/^\(PASS\|FAIL\): setupfail\//\1: test-setupfail\//p; /^# /p' "$tmp/$kind.out"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$tmp/$kind.out"; then
		bad $kind "setupfail exited $rc: $(tail -3 "$tmp/$kind.err" | tr '\n' ' ')"
	fi
	l=$(left_in "$dut" vd)
	[ -z "$l" ] || bad $kind-nothing-left "$l"
done
exit 0
