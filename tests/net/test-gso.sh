#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The UDP coalescing plan and super-packet headers (lib/gso.c) against the
# kernel (gso_tun.c): two interleaved flows, one datagram with a corrupted
# checksum, written to a tun as GSO_UDP_L4 super-packets; a socket behind
# it must read every good datagram once, byte for byte, in order within
# its flow, and never the corrupted one. Root; its own namespace, removed
# on exit.
set -u
BUILD=${BUILD:-build}
name=test-gso
prog=$BUILD/tests/net/gso_tun
ns=ucmgso$$
cleanup() { ip netns del "$ns" 2>/dev/null; }
trap cleanup EXIT
trap 'echo "FAIL: $name: interrupted"; exit 1' HUP INT TERM

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: $name: needs root (a namespace, a tun)"
	exit 0
fi
[ -x "$prog" ] || { echo "FAIL: $name: $prog is not built (make tests)"; exit 0; }
ip netns add "$ns" && ip -n "$ns" link set lo up || { echo "FAIL: $name/setup: no namespace"; exit 0; }
out=$(timeout 20 ip netns exec "$ns" "$prog" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
csum=$(ip netns exec "$ns" awk '/^Udp:/ { getline; print $8; exit }' /proc/net/snmp)
if [ "$rc" -eq 0 ]; then
	echo "PASS: $name/kernel-cuts-back: $(echo "$out" | grep -E '^(groups|PASS)' | tr '\n' ' ')"
else
	echo "FAIL: $name/kernel-cuts-back: exit $rc"
fi
[ "$csum" = 1 ] && echo "PASS: $name/bad-checksum-dropped-by-the-kernel: InCsumErrors 1" ||
	echo "FAIL: $name/bad-checksum-dropped-by-the-kernel: InCsumErrors $csum, want 1"
