#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The main job without a NIC: two network namespaces joined by a veth pair.
# ucpumapd runs on the DUT end with a tun behind it and a bound UDP socket
# that never reads (the cheap, realistic sink); a generator in the other
# namespace sends UDP flows at it. Ten seconds of live statistics, then how
# many datagrams reached the socket (the kernel's own counters) against how
# many were sent, and everything is removed.
#
#   scripts/demo.sh [--seconds N] [--rate PPS] [ucpumapd options...]
#
# Needs root. Extra options go to ucpumapd (e.g. --steer round-robin,
# --no-batch, --xdp-mode skb).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
secs=10
rate=200000
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) secs=$2; shift 2 ;;
	--rate) rate=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (namespaces, XDP, tun): run it with sudo" >&2
	exit 1
fi
{ [ -x "$BUILD/ucpumapd" ] && [ -x "$BUILD/ucpumap-gen" ]; } || make -s || exit 1

gen=ucm-demo-gen-$$
dut=ucm-demo-dut-$$
tmp=$(mktemp -d)
dpid=
spid=
gpid=
cleanup() {
	for p in $gpid $dpid $spid; do kill "$p" 2>/dev/null; done
	sleep 0.3
	for p in $gpid $dpid $spid; do kill -9 "$p" 2>/dev/null; done
	ip netns del "$gen" 2>/dev/null
	ip netns del "$dut" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT HUP INT TERM

ip netns add "$gen" && ip netns add "$dut" &&
ip -n "$gen" link add vg type veth peer name vd netns "$dut" &&
ip -n "$gen" addr add 10.77.0.1/24 dev vg && ip -n "$dut" addr add 10.77.0.2/24 dev vd &&
ip -n "$gen" link set vg up && ip -n "$dut" link set vd up &&
ip -n "$gen" link set lo up && ip -n "$dut" link set lo up || {
	echo "demo: cannot build the namespaces" >&2
	exit 1
}
# Full checksums on the wire, as a NIC delivers them (veth offloads them).
ip netns exec "$gen" ethtool -K vg tx off > /dev/null 2>&1
# Packets come back in through the tun, not vd: no reverse-path filter.
ip netns exec "$dut" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0

# The sink: bound, not read while traffic runs (drops at its full queue are
# counted as RcvbufErrors). The kernel counts InDatagrams when a datagram is
# read, so at the end it drains its queue, and then InDatagrams +
# RcvbufErrors is everything that reached it.
ip netns exec "$dut" python3 - "$tmp/drain" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.77.0.2", 9000))
open(sys.argv[1] + ".bound", "w").close()
while not os.path.exists(sys.argv[1]):
    time.sleep(0.1)
s.setblocking(False)
try:
    while True:
        s.recv(2048)
except BlockingIOError:
    pass
open(sys.argv[1] + ".done", "w").close()
PY
spid=$!
for _ in $(seq 50); do [ -e "$tmp/drain.bound" ] && break; sleep 0.1; done

ip netns exec "$dut" "$BUILD/ucpumapd" --dev vd --tun ucm0 --duration $((secs + 2)) "$@" &
dpid=$!
for _ in $(seq 50); do
	ip -n "$dut" link show ucm0 > /dev/null 2>&1 && break
	kill -0 "$dpid" 2>/dev/null || { echo "demo: ucpumapd did not start" >&2; exit 1; }
	sleep 0.1
done
ip netns exec "$dut" sysctl -qw net.ipv4.conf.ucm0.rp_filter=0 2>/dev/null

snmp() {	# Udp counter $1 in the DUT namespace
	ip netns exec "$dut" awk -v f="$1" '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 }
		else print $c[f] }' /proc/net/snmp
}
snap() {	# delivered (InDatagrams + RcvbufErrors), NoPorts, InCsumErrors, InErrors
	echo $(($(snmp InDatagrams) + $(snmp RcvbufErrors))) $(snmp NoPorts) $(snmp InCsumErrors) $(snmp InErrors)
}
read -r b_del b_noport b_csum b_err <<< "$(snap)"

# The generator: ucpumap-gen's live-frame engine (an XDP program the
# kernel runs in a loop, sending out of vg), 16 flows, paced to --rate.
ip netns exec "$gen" "$BUILD/ucpumap-gen" --dev vg --dst-ip 10.77.0.2 --dst-port 9000 \
	--flows 16 --rate "$rate" --duration "$secs" > "$tmp/gen" 2> "$tmp/gen.err" &
gpid=$!
wait "$gpid"
gpid=
# The daemon stops on its own (--duration) once everything is through;
# then the sink reads what is queued, and the kernel's counters are final.
wait "$dpid"
rc=$?
dpid=
touch "$tmp/drain"
for _ in $(seq 50); do [ -e "$tmp/drain.done" ] && break; sleep 0.1; done
read -r a_del a_noport a_csum a_err <<< "$(snap)"
sent=$(awk '/^total:/ { print $2 }' "$tmp/gen")
if [ -z "$sent" ]; then
	echo "demo: the generator failed: $(tail -3 "$tmp/gen.err")" >&2
	sent=0
fi
echo
echo "demo: sent $sent UDP datagrams, $((a_del - b_del)) reached the socket behind the tun (Udp InDatagrams + RcvbufErrors; NoPorts $((a_noport - b_noport)), InCsumErrors $((a_csum - b_csum)), InErrors $((a_err - b_err))); ucpumapd exited $rc"
