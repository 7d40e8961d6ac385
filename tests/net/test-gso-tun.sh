#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The UDP coalescing plan and super-packet headers (lib/proto/gso.c) against the
# kernel (tests/progs/gso_tun.c): two interleaved flows, one datagram with a
# corrupted checksum, written to a tun as GSO_UDP_L4 super-packets; a socket
# behind it must read every good datagram once, byte for byte, in order
# within its flow, and never the corrupted one. Root; its own namespace,
# removed on exit.
#
#   kernel-cuts-back    gso_tun's run: every good datagram read back
#   bad-checksum-dropped-by-the-kernel
#                       in that run, the kernel counted the corrupted one
#                       (InCsumErrors 1)
set -u
BUILD=${BUILD:-build}
name=test-gso-tun
cases="kernel-cuts-back bad-checksum-dropped-by-the-kernel"
prog=$BUILD/tests/progs/gso_tun
ns=ucmgso$$
cd "$(dirname "$0")/../.."
. tests/lib.sh

setup() {
	skip_unless_root "a namespace, a tun"
	[ -x "$prog" ] || { bad build "$prog is not built (make tests)"; exit 0; }
	netns "$ns" && ip -n "$ns" link set lo up || { bad setup "no namespace"; exit 0; }
}

case_kernel_cuts_back() {
	local out rc
	# Under lib_run: an interrupt's cleanup stops it by its pid at once.
	lib_run timeout 20 ip netns exec "$ns" "$prog" > "$tmp/gso.out" 2>&1
	rc=$?
	out=$(cat "$tmp/gso.out")
	echo "$out" | sed 's/^/# /'
	csum=$(ip netns exec "$ns" awk '/^Udp:/ { getline; print $8; exit }' /proc/net/snmp)
	if [ "$rc" -eq 0 ]; then
		ok kernel-cuts-back "$(echo "$out" | grep -E '^(groups|PASS)' | tr '\n' ' ')"
	else
		bad kernel-cuts-back "exit $rc"
	fi
}

case_bad_checksum_dropped_by_the_kernel() {
	lib_need kernel-cuts-back
	[ "$csum" = 1 ] && ok bad-checksum-dropped-by-the-kernel "InCsumErrors 1" ||
		bad bad-checksum-dropped-by-the-kernel "InCsumErrors $csum, want 1"
}

lib_run_cases "$@"
