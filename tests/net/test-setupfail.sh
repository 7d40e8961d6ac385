#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Set-up failures: ucm_dp__create() (two-way, the most
# parts) with each allocation, io_uring set-up, socket, BPF map, program,
# BTF and link, and thread failing in turn, the library's and libxdp's,
# libbpf's, libelf's (tests/progs/setupfail.c: the linker's --wrap takes
# the calls); KIND+ fails every later call of the kind too. Each create
# fails with an errno and a warning, or copes and then runs and stops
# cleanly, and leaves no file, BPF object, device or thread behind. In an
# ASan build LeakSanitizer judges the memory after each attempt and at
# the exit. Root.
#
#   malloc, uring, socket, bpf, thread
#                  setupfail's run with KIND and with KIND+: its lines,
#                  and nothing left on vd after each
set -u
BUILD=${BUILD:-build}
name=test-setupfail
cases="malloc uring socket bpf thread"
here=$(cd "$(dirname "$0")" && pwd)
prog=$BUILD/tests/progs/setupfail
gen=ucmsg$$
dut=ucmsd$$
. "$here/../lib.sh"

setup() {
	skip_unless_root "namespaces, XDP, tun"
	[ -x "$prog" ] || { bad build "$prog is not built (make tests)"; exit 0; }
	if ! veth_pair "$gen" "$dut" vg vd 10.210.0.1/24 10.210.0.2/24 2> "$tmp/setup.err"; then
		bad setup "cannot build the namespaces: $(head -2 "$tmp/setup.err" | tr '\n' ' ')"
		exit 0
	fi
}

# fail_kind KIND: setupfail with KIND failing, its lines as ours.
fail_kind() {
	local kind=$1 rc l
	lib_run ip netns exec "$dut" timeout 120 "$prog" vd $kind 2000 \
		> "$tmp/$kind.out" 2> "$tmp/$kind.err"
	rc=$?
	sed -n 's/^\(PASS\|FAIL\): setupfail\//\1: test-setupfail\//p; /^# /p' "$tmp/$kind.out"
	# LeakSanitizer's first leak, where it was allocated.
	grep -A12 -m1 '^\(Direct\|Indirect\) leak' "$tmp/$kind.err" | sed -n '/^$/q; s/^/# /p'
	if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$tmp/$kind.out"; then
		bad $kind "setupfail exited $rc: $(tail -3 "$tmp/$kind.err" | tr '\n' ' ')"
	fi
	l=$(left_in "$dut" vd)
	[ -z "$l" ] || bad $kind-nothing-left "$l"
}

case_malloc() { fail_kind malloc; fail_kind malloc+; }
case_uring() { fail_kind uring; fail_kind uring+; }
case_socket() { fail_kind socket; fail_kind socket+; }
case_bpf() { fail_kind bpf; fail_kind bpf+; }
case_thread() { fail_kind thread; fail_kind thread+; }

lib_run_cases "$@"
